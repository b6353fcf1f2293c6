//! numpy arrays as engine tensors and back, without copying.
//!
//! In: an array's buffer becomes an external [`Storage`](symstride::tensor::Storage) that
//! holds a reference to the array (so the memory lives as long as any tensor or output
//! view of it), with the array's strides converted from bytes to elements. Arrays the
//! engine cannot address are rejected with a `ValueError` naming the input: negative
//! strides (numpy's reversed views; PyTorch has none either), strides that are not a
//! multiple of the element size, misaligned or non-native-byte-order data, dtypes outside
//! `bool uint8 int32 int64 float32 float64`, and `bool` arrays holding bytes other than 0
//! and 1. Zero strides (`np.broadcast_to`) are fine: inputs are only read.
//!
//! Out: a tensor becomes an array over its storage's memory with the tensor's strides (in
//! bytes) and offset; the array's base object owns a handle on the storage. An output that
//! is a view of an input is a view of the caller's array, writeable when that array is.

use crate::adapter::{each, external_tensor};
use crate::errors::raise;
use numpy::npyffi::{self, npy_intp, NPY_ARRAY_WRITEABLE, PY_ARRAY_API};
use numpy::{Element as NpElement, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use symstride::op::AnyTensor;
use symstride::tensor::{Element, Storage, Tensor};
use symstride::DType;

/// Keeps a storage alive as the base object of numpy arrays over it.
#[pyclass(frozen, module = "symstride")]
pub struct StorageOwner {
    _storage: Box<dyn std::any::Any + Send + Sync>,
}

/// The engine dtype of a numpy array, if it has one.
fn dtype_of(a: &Bound<'_, PyUntypedArray>) -> Option<DType> {
    let py = a.py();
    let d = a.dtype();
    let is = |other: Bound<'_, numpy::PyArrayDescr>| d.is_equiv_to(&other);
    [
        (DType::Bool, is(bool::get_dtype(py))),
        (DType::U8, is(u8::get_dtype(py))),
        (DType::I32, is(i32::get_dtype(py))),
        (DType::I64, is(i64::get_dtype(py))),
        (DType::F32, is(f32::get_dtype(py))),
        (DType::F64, is(f64::get_dtype(py))),
    ]
    .into_iter()
    .find(|(_, y)| *y)
    .map(|(t, _)| t)
}

/// The numpy name of an engine dtype.
pub fn numpy_name(d: DType) -> &'static str {
    match d {
        DType::Bool => "bool",
        DType::U8 => "uint8",
        DType::I32 => "int32",
        DType::I64 => "int64",
        DType::F32 => "float32",
        DType::F64 => "float64",
    }
}

/// An input array as a tensor over its own memory. `name` is used in error messages.
pub fn to_tensor(a: &Bound<'_, PyUntypedArray>, name: &str) -> PyResult<AnyTensor> {
    let bad = |m: String| raise("InvalidInputError", format!("input `{name}`: {m}"));
    let dtype = dtype_of(a).ok_or_else(|| {
        bad(format!(
            "dtype {} is not supported (bool, uint8, int32, int64, float32, float64)",
            a.dtype()
        ))
    })?;
    let item = dtype.element_size();
    let sizes: Vec<i64> = a.shape().iter().map(|&s| s as i64).collect();
    let mut strides = Vec::with_capacity(sizes.len());
    for (d, &s) in a.strides().iter().enumerate() {
        if s < 0 {
            return Err(bad(format!(
                "dim {d} has a negative stride ({s} bytes); negative strides are not supported, pass np.ascontiguousarray(x) or a copy"
            )));
        }
        if !(s as usize).is_multiple_of(item) {
            return Err(bad(format!(
                "dim {d} has a stride of {s} bytes, not a multiple of the element size {item}"
            )));
        }
        strides.push(s as i64 / item as i64);
    }
    // SAFETY: `a` is a live numpy array; reading its header fields is what numpy's own
    // accessors do.
    let (data, flags) = unsafe {
        let p = a.as_array_ptr();
        ((*p).data as *mut u8, (*p).flags)
    };
    if flags & npyffi::NPY_ARRAY_ALIGNED == 0 || !(data as usize).is_multiple_of(item) {
        return Err(bad("its data is not aligned for its dtype".into()));
    }
    let order = a.dtype().byteorder();
    if order == b'>' && cfg!(target_endian = "little")
        || order == b'<' && cfg!(target_endian = "big")
    {
        return Err(bad("its dtype is not in the machine's byte order".into()));
    }
    // Elements the layout addresses, from `data`: 0 for an empty array.
    let len = if sizes.contains(&0) {
        0
    } else {
        let mut last: i64 = 0;
        for (&z, &s) in sizes.iter().zip(&strides) {
            last = (z - 1)
                .checked_mul(s)
                .and_then(|e| last.checked_add(e))
                .ok_or_else(|| bad("its extent overflows".into()))?;
        }
        last as usize + 1
    };
    if dtype == DType::Bool && len > 0 {
        // A bool must be 0 or 1 in memory; numpy can hold other bytes (views of uint8).
        let ok = bool_bytes_valid(data, len, &sizes, &strides);
        if !ok {
            return Err(bad("a bool array holds bytes other than 0 and 1".into()));
        }
    }
    let owner: Box<dyn std::any::Any + Send + Sync> = Box::new(a.clone().into_any().unbind());
    macro_rules! wrap {
        ($T:ty) => {{
            // SAFETY: numpy guarantees `data` is valid for the array's layout, which
            // addresses exactly elements `0..len` (non-negative strides, checked above); it
            // is aligned (checked) and holds values of `$T` (dtype checked; bools checked to
            // be 0/1). `owner` keeps the array, hence the memory, alive. The engine only
            // reads input storages (outputs are new storages); concurrent writes from
            // other Python threads during `run` are the caller's responsibility, as with
            // numpy's own GIL-free functions.
            let t: Tensor<$T> =
                unsafe { external_tensor(data as *mut $T, len, &sizes, &strides, owner) }
                    .map_err(crate::errors::to_py)?;
            AnyTensor::from(t)
        }};
    }
    Ok(match dtype {
        DType::Bool => wrap!(bool),
        DType::U8 => wrap!(u8),
        DType::I32 => wrap!(i32),
        DType::I64 => wrap!(i64),
        DType::F32 => wrap!(f32),
        DType::F64 => wrap!(f64),
    })
}

/// Every byte a bool layout addresses is 0 or 1, reading each distinct byte of memory a
/// bounded number of times (never once per logical element: a broadcast view of one byte
/// to `2**40` elements is one read).
///
/// Dims that do not move through memory (size 1 or stride 0) are dropped, the rest are
/// sorted by stride and merged where one continues the other (`s_outer == s_inner *
/// n_inner`), so a dense array is one run of bytes. Dims that do not overlap address
/// distinct bytes, at most the extent `len`: when the remaining dims address at most `len`
/// elements they are walked. More than `len` means they overlap (`as_strided` views); then
/// the addressed bytes are marked in a bitmap of the extent (one sweep per dim) and each
/// marked byte is read once.
fn bool_bytes_valid(data: *const u8, len: usize, sizes: &[i64], strides: &[i64]) -> bool {
    // SAFETY: the caller guarantees `data` is valid for reads of `len` bytes (the layout's
    // extent, every addressed offset is below it).
    let mem = unsafe { std::slice::from_raw_parts(data, len) };
    let dims = moving_dims(sizes, strides);
    let logical = dims
        .iter()
        .try_fold(1usize, |acc, &(n, _)| acc.checked_mul(n));
    match logical {
        Some(l) if l <= len => walk_valid(mem, &dims),
        _ => bitmap_valid(mem, &dims),
    }
}

/// `(size, stride)` of the dims that step through memory (size > 1, stride > 0), sorted by
/// stride, adjacent ones merged where the outer continues the inner.
fn moving_dims(sizes: &[i64], strides: &[i64]) -> Vec<(usize, usize)> {
    let mut dims: Vec<(usize, usize)> = sizes
        .iter()
        .zip(strides)
        .filter(|&(&n, &s)| n > 1 && s > 0)
        .map(|(&n, &s)| (n as usize, s as usize))
        .collect();
    dims.sort_by_key(|&(n, s)| (s, n));
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(dims.len());
    for (n, s) in dims {
        match merged.last_mut() {
            // `inner_n * inner_s` is at most the extent (both are a dim of the layout).
            Some((inner_n, inner_s)) if *inner_n * *inner_s == s => *inner_n *= n,
            _ => merged.push((n, s)),
        }
    }
    merged
}

/// Walks every addressed offset (dims innermost first), the innermost dim as a strided run.
fn walk_valid(mem: &[u8], dims: &[(usize, usize)]) -> bool {
    let Some((&(n0, s0), outer)) = dims.split_first() else {
        return mem[0] <= 1;
    };
    let mut idx = vec![0usize; outer.len()];
    let mut base = 0usize;
    loop {
        let ok = if s0 == 1 {
            mem[base..base + n0].iter().all(|&b| b <= 1)
        } else {
            mem[base..].iter().step_by(s0).take(n0).all(|&b| b <= 1)
        };
        if !ok {
            return false;
        }
        let mut d = 0;
        loop {
            if d == outer.len() {
                return true;
            }
            idx[d] += 1;
            base += outer[d].1;
            if idx[d] < outer[d].0 {
                break;
            }
            base -= outer[d].0 * outer[d].1;
            idx[d] = 0;
            d += 1;
        }
    }
}

/// Overlapping dims: marks the addressed offsets in a bitmap of the extent, one sweep per
/// dim (offset `x` is addressed after a dim `(n, s)` iff some `x - i*s`, `i < n`, was
/// before it: the last marked offset of `x`'s residue class mod `s` is within `(n-1)*s`),
/// then reads each marked byte once.
fn bitmap_valid(mem: &[u8], dims: &[(usize, usize)]) -> bool {
    let len = mem.len();
    let mut marked = vec![false; len];
    marked[0] = true;
    let mut last: Vec<usize> = Vec::new();
    for &(n, s) in dims {
        let reach = (n - 1) * s;
        // last[r]: the latest offset of residue class r marked before the sweep, + 1 (0: none).
        last.clear();
        last.resize(s.min(len), 0);
        for (x, m) in marked.iter_mut().enumerate() {
            let r = x % s;
            if r >= last.len() {
                continue;
            }
            if *m {
                last[r] = x + 1;
            } else if last[r] > 0 && x - (last[r] - 1) <= reach {
                *m = true;
            }
        }
    }
    mem.iter().zip(&marked).all(|(&b, &m)| !m || b <= 1)
}

fn to_array_typed<'py, T: Element + NpElement>(
    py: Python<'py>,
    t: &Tensor<T>,
    writeable: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let item = std::mem::size_of::<T>() as i64;
    let mut dims: Vec<npy_intp> = t.sizes().iter().map(|&s| s as npy_intp).collect();
    let mut strides: Vec<npy_intp> = t
        .strides()
        .iter()
        .map(|&s| (s * item) as npy_intp)
        .collect();
    let storage: Storage<T> = t.storage().clone();
    let empty = t.sizes().contains(&0);
    let base = storage.as_ptr();
    // SAFETY: the offset is inside the storage for a non-empty tensor (tensor invariant);
    // for an empty one the pointer is never dereferenced, so the base is used.
    let data = if empty {
        base
    } else {
        unsafe { base.add(t.storage_offset() as usize) }
    };
    let owner = Bound::new(
        py,
        StorageOwner {
            _storage: Box::new(storage),
        },
    )?;
    let flags = if writeable { NPY_ARRAY_WRITEABLE } else { 0 };
    // SAFETY: the array addresses only elements of the storage (tensor invariant: every
    // element of the layout lies inside it), whose block stays alive as long as `owner`,
    // which becomes the array's base object (the reference is stolen by SetBaseObject).
    // The descriptor reference is stolen by NewFromDescr.
    unsafe {
        let ptr = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            PY_ARRAY_API.get_type_object(py, npyffi::NpyTypes::PyArray_Type),
            T::get_dtype(py).into_dtype_ptr(),
            dims.len() as std::os::raw::c_int,
            dims.as_mut_ptr(),
            strides.as_mut_ptr(),
            data as *mut std::os::raw::c_void,
            flags,
            std::ptr::null_mut(),
        );
        if ptr.is_null() {
            return Err(PyErr::fetch(py));
        }
        let arr = Bound::from_owned_ptr(py, ptr);
        if PY_ARRAY_API.PyArray_SetBaseObject(
            py,
            ptr as *mut npyffi::PyArrayObject,
            owner.into_ptr(),
        ) != 0
        {
            return Err(PyErr::fetch(py));
        }
        Ok(arr)
    }
}

/// A tensor as a numpy array over the same memory (its strides and offset).
pub fn to_array<'py>(
    py: Python<'py>,
    t: &AnyTensor,
    writeable: bool,
) -> PyResult<Bound<'py, PyAny>> {
    each!(t, |x| to_array_typed(py, x, writeable))
}
