//! Shared, reference-counted element storage with a runtime borrow flag and a pool for
//! large allocations.

use super::element::Element;
use crate::{Error, Result};
use std::alloc::Layout;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::{Arc, Mutex};

/// Alignment of storages allocated by this crate (one cache line; enough for any SIMD load).
const ALIGN: usize = 64;

/// Storages smaller than this are allocated with the system allocator's natural alignment
/// (at least 16 bytes and the element's own) instead of [`ALIGN`]: an over-aligned request
/// takes glibc's `posix_memalign` path, ~800 instructions per allocation against ~100 for
/// `malloc` (measured: 6% of a 120-element `add`), and a block this small spans only a few
/// cache lines and SIMD rows anyway.
const SMALL_BYTES: usize = 4096;

/// How a storage's memory was obtained (and so how it must be released).
enum Alloc {
    /// From a `Vec<T>` handed over by the user: released as that `Vec`.
    Vec { capacity: usize },
    /// From [`std::alloc`] with [`ALIGN`]ment (16 below [`SMALL_BYTES`]; maybe through the
    /// pool): released to the pool.
    Aligned { layout: Layout },
    /// Zero elements (or zero-sized): nothing to release.
    None,
    /// Memory owned by someone else (a numpy array, say): released by dropping the owner.
    External {
        _owner: Box<dyn std::any::Any + Send + Sync>,
    },
}

/// The heap block behind a [`Storage`].
pub(crate) struct StorageInner<T> {
    ptr: NonNull<T>,
    len: usize,
    alloc: Alloc,
    /// `n > 0`: `n` readers; `-1`: one writer; `0`: free. See [`Storage`].
    borrow: AtomicIsize,
    _own: PhantomData<T>,
}

// SAFETY: the block is owned by the `StorageInner` (released only in `Drop`), `T: Element` is
// plain data that is `Send + Sync`, and every element access goes through a borrow guard
// (`ReadGuard`/`WriteGuard`) that excludes a writer concurrently with any other access, so no
// data race is possible across threads.
unsafe impl<T: Element> Send for StorageInner<T> {}
// SAFETY: see above.
unsafe impl<T: Element> Sync for StorageInner<T> {}

impl<T> Drop for StorageInner<T> {
    fn drop(&mut self) {
        match self.alloc {
            Alloc::Vec { capacity } => {
                // SAFETY: `ptr`, `len` and `capacity` come from `Vec::into_raw_parts`-style
                // decomposition in `from_vec`, and the block has not been released yet.
                // Elements are `Copy` so the length is irrelevant for dropping.
                unsafe { drop(Vec::from_raw_parts(self.ptr.as_ptr(), 0, capacity)) };
            }
            Alloc::Aligned { layout } => pool_release(self.ptr.cast::<u8>(), layout),
            Alloc::None | Alloc::External { .. } => {}
        }
    }
}

/// Shared element storage: an `Arc` over one heap block, shared by every view of a tensor.
///
/// # Safety model
/// Views only carry sizes/strides/offset; all reads and writes of elements go through a
/// [`ReadGuard`] or a [`WriteGuard`] acquired on the storage for the duration of the access
/// (one kernel call, one `to_vec`, the lifetime of an ndarray view). The guards form a
/// cross-thread `RefCell`: any number of readers or exactly one writer. A conflicting request
/// fails with [`Error::MemoryOverlap`] instead of blocking, so a kernel can never race another
/// thread's access. Inside one kernel call, the kernel itself checks that outputs do not
/// overlap themselves or (partially) the inputs it reads from the same storage.
pub struct Storage<T>(pub(crate) Arc<StorageInner<T>>);

impl<T> Clone for Storage<T> {
    fn clone(&self) -> Self {
        Storage(Arc::clone(&self.0))
    }
}

impl<T: Element> std::fmt::Debug for Storage<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Storage<{:?}>(len {})", T::DTYPE, self.0.len)
    }
}

impl<T: Element> Storage<T> {
    /// Takes ownership of a vector without copying.
    pub fn from_vec(v: Vec<T>) -> Self {
        let mut v = std::mem::ManuallyDrop::new(v);
        let len = v.len();
        let capacity = v.capacity();
        // SAFETY (of the later release): pointer/capacity are exactly the Vec's.
        let ptr = NonNull::new(v.as_mut_ptr()).unwrap_or(NonNull::dangling());
        let alloc = if capacity == 0 || std::mem::size_of::<T>() == 0 {
            Alloc::None
        } else {
            Alloc::Vec { capacity }
        };
        Self::wrap(ptr, len, alloc)
    }

    /// Wraps memory owned by `owner` without copying (zero-copy interop with other array
    /// libraries); the block is released by dropping `owner` when the last handle goes.
    ///
    /// # Safety
    /// `ptr` must be aligned for `T` and valid for reads and writes of `len` elements that
    /// hold valid values of `T` for as long as `owner` lives, and nothing outside this
    /// storage's borrow guards may write that memory while a kernel uses the storage (a
    /// kernel writes a storage only when an output lives in it).
    pub unsafe fn from_external(
        ptr: NonNull<T>,
        len: usize,
        owner: Box<dyn std::any::Any + Send + Sync>,
    ) -> Self {
        Self::wrap(ptr, len, Alloc::External { _owner: owner })
    }

    /// The base pointer (valid for `len()` elements while this handle lives), for handing
    /// the block to another array library without copying.
    pub fn as_ptr(&self) -> *const T {
        self.0.ptr.as_ptr()
    }

    fn wrap(ptr: NonNull<T>, len: usize, alloc: Alloc) -> Self {
        Storage(Arc::new(StorageInner {
            ptr,
            len,
            alloc,
            borrow: AtomicIsize::new(0),
            _own: PhantomData,
        }))
    }

    /// A storage of `len` elements all equal to `value`.
    pub fn filled(len: usize, value: T) -> Result<Self> {
        let s = Self::uninit(len)?;
        // SAFETY: the block is fresh (no other handle exists) and holds `len` elements.
        unsafe {
            let p = s.0.ptr.as_ptr();
            for i in 0..len {
                p.add(i).write(value);
            }
        }
        Ok(s)
    }

    /// A storage of `len` elements whose contents are unspecified (pool reuse or fresh pages).
    ///
    /// Crate-private: callers must write every element before any read (the kernels that
    /// allocate outputs do: an allocated output is dense and every element is written).
    pub(crate) fn uninit(len: usize) -> Result<Self> {
        if len == 0 {
            return Ok(Self::wrap(NonNull::dangling(), 0, Alloc::None));
        }
        let layout = Layout::array::<T>(len)
            .and_then(|l| {
                let align = if l.size() < SMALL_BYTES { 16 } else { ALIGN };
                l.align_to(align)
            })
            .map_err(|_| Error::overflow(format!("storage of {len} elements")))?;
        let ptr = pool_acquire(layout)?;
        Ok(Self::wrap(ptr.cast::<T>(), len, Alloc::Aligned { layout }))
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.0.len
    }

    /// True if the storage holds no element.
    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }

    /// Base pointer (valid for `len()` elements).
    pub(crate) fn ptr(&self) -> *mut T {
        self.0.ptr.as_ptr()
    }

    /// True if both handles refer to the same block.
    pub fn same(&self, other: &Storage<impl Element>) -> bool {
        std::ptr::eq(
            Arc::as_ptr(&self.0) as *const u8,
            Arc::as_ptr(&other.0) as *const u8,
        )
    }

    /// An identity usable to group operands by storage.
    pub(crate) fn id(&self) -> usize {
        Arc::as_ptr(&self.0) as *const u8 as usize
    }

    /// Acquires shared read access.
    pub fn read(&self) -> Result<ReadGuard<'_>> {
        self.raw().read()
    }

    /// Acquires exclusive write access.
    pub fn write(&self) -> Result<WriteGuard<'_>> {
        self.raw().write()
    }

    /// Type-erased handle used by the kernels.
    pub(crate) fn raw(&self) -> RawStorage<'_> {
        RawStorage {
            id: self.id(),
            ptr: self.ptr() as *mut u8,
            bytes: self.0.len * std::mem::size_of::<T>(),
            element_size: std::mem::size_of::<T>(),
            flag: &self.0.borrow,
        }
    }
}

/// A type-erased view of a storage for the kernels: identity, base pointer, size in bytes
/// and the borrow flag.
#[derive(Clone, Copy)]
pub(crate) struct RawStorage<'a> {
    pub id: usize,
    pub ptr: *mut u8,
    pub bytes: usize,
    pub element_size: usize,
    flag: &'a AtomicIsize,
}

impl<'a> RawStorage<'a> {
    pub(crate) fn read(&self) -> Result<ReadGuard<'a>> {
        let b = self.flag;
        let mut cur = b.load(Ordering::Relaxed);
        loop {
            if cur < 0 {
                return Err(Error::MemoryOverlap {
                    message:
                        "storage is being written by another operation; cannot read it concurrently"
                            .into(),
                });
            }
            match b.compare_exchange_weak(cur, cur + 1, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return Ok(ReadGuard { flag: b }),
                Err(x) => cur = x,
            }
        }
    }

    pub(crate) fn write(&self) -> Result<WriteGuard<'a>> {
        self.flag.compare_exchange(0, -1, Ordering::Acquire, Ordering::Relaxed).map_err(|_| Error::MemoryOverlap {
            message: "storage is being read or written by another operation; cannot write it concurrently".into(),
        })?;
        Ok(WriteGuard { flag: self.flag })
    }
}

/// Borrows every distinct storage of a kernel call: exclusively if an output lives in it,
/// shared otherwise. Operands `0..num_outputs` are outputs.
pub(crate) fn borrow_all<'a>(
    ops: &[RawStorage<'a>],
    num_outputs: usize,
) -> Result<smallvec::SmallVec<[Guard<'a>; 4]>> {
    let mut guards = smallvec::SmallVec::new();
    for (i, op) in ops.iter().enumerate() {
        if ops[..i].iter().any(|o| o.id == op.id) {
            continue;
        }
        let written = ops
            .iter()
            .enumerate()
            .any(|(j, o)| j < num_outputs && o.id == op.id);
        guards.push(if written {
            Guard::Write(op.write()?)
        } else {
            Guard::Read(op.read()?)
        });
    }
    Ok(guards)
}

/// Either kind of borrow (held for the duration of a kernel call).
#[allow(dead_code)]
pub(crate) enum Guard<'a> {
    Read(ReadGuard<'a>),
    Write(WriteGuard<'a>),
}

/// Shared read access to a storage (released on drop).
#[must_use]
pub struct ReadGuard<'a> {
    flag: &'a AtomicIsize,
}
impl Drop for ReadGuard<'_> {
    fn drop(&mut self) {
        self.flag.fetch_sub(1, Ordering::Release);
    }
}

/// Exclusive write access to a storage (released on drop).
#[must_use]
pub struct WriteGuard<'a> {
    flag: &'a AtomicIsize,
}
impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        self.flag.store(0, Ordering::Release);
    }
}

// ---------------------------------------------------------------------------------------------
// Buffer pool.
//
// Writing a freshly mmapped 64 MiB output costs 16k page faults (each zeroing a page), which
// doubles the time of a bandwidth-bound elementwise op. Large blocks released by a storage are
// therefore kept (up to a byte budget) and handed out again for the same layout, like a caching
// allocator. Blocks below `POOL_MIN_BYTES` go straight back to malloc, which recycles them well.

/// Blocks smaller than this are not pooled.
const POOL_MIN_BYTES: usize = 1 << 20;

struct Block(NonNull<u8>, Layout);
// SAFETY: a pooled block is unreferenced memory owned by the pool alone.
unsafe impl Send for Block {}

struct Pool {
    blocks: Vec<Block>,
    bytes: usize,
    limit: usize,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    blocks: Vec::new(),
    bytes: 0,
    limit: 1 << 30,
});

/// Sets the byte budget of the large-buffer pool (default 1 GiB; 0 disables pooling and frees
/// what is cached). Returns the previous budget.
pub fn set_pool_limit(bytes: usize) -> usize {
    let mut p = POOL.lock().unwrap_or_else(|e| e.into_inner());
    let old = p.limit;
    p.limit = bytes;
    while p.bytes > p.limit {
        match p.blocks.pop() {
            Some(Block(ptr, layout)) => {
                p.bytes -= layout.size();
                // SAFETY: the block was allocated with this layout and is owned by the pool.
                unsafe { std::alloc::dealloc(ptr.as_ptr(), layout) };
            }
            None => break,
        }
    }
    old
}

fn pool_acquire(layout: Layout) -> Result<NonNull<u8>> {
    if layout.size() >= POOL_MIN_BYTES {
        let mut p = POOL.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = p.blocks.iter().rposition(|b| b.1 == layout) {
            let Block(ptr, l) = p.blocks.swap_remove(i);
            p.bytes -= l.size();
            return Ok(ptr);
        }
    }
    // SAFETY: `layout` has a non-zero size (len > 0 and T is not zero-sized).
    let ptr = unsafe { std::alloc::alloc(layout) };
    NonNull::new(ptr)
        .ok_or_else(|| Error::invalid(format!("out of memory allocating {} bytes", layout.size())))
}

fn pool_release(ptr: NonNull<u8>, layout: Layout) {
    if layout.size() >= POOL_MIN_BYTES {
        let mut p = POOL.lock().unwrap_or_else(|e| e.into_inner());
        if p.bytes + layout.size() <= p.limit {
            p.bytes += layout.size();
            p.blocks.push(Block(ptr, layout));
            return;
        }
    }
    // SAFETY: allocated by `pool_acquire` with this layout, released once.
    unsafe { std::alloc::dealloc(ptr.as_ptr(), layout) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrow_flag_excludes_writer() {
        let s = Storage::from_vec(vec![1.0f32; 4]);
        let r1 = s.read().unwrap();
        let r2 = s.read().unwrap();
        assert!(matches!(s.write(), Err(Error::MemoryOverlap { .. })));
        drop((r1, r2));
        let w = s.write().unwrap();
        assert!(s.read().is_err());
        drop(w);
        assert!(s.read().is_ok());
    }

    #[test]
    fn external_memory_is_released_through_its_owner_only() {
        use std::sync::atomic::AtomicBool;
        struct Owner {
            _data: Vec<f64>,
            dropped: Arc<AtomicBool>,
        }
        impl Drop for Owner {
            fn drop(&mut self) {
                self.dropped.store(true, Ordering::SeqCst);
            }
        }
        let dropped = Arc::new(AtomicBool::new(false));
        let mut data = vec![1.0, 2.0, 3.0];
        let ptr = NonNull::new(data.as_mut_ptr()).unwrap();
        let owner = Owner {
            _data: data,
            dropped: Arc::clone(&dropped),
        };
        // SAFETY: the vector's buffer (3 aligned f64) lives in `owner`, which the storage
        // keeps until its last handle goes; moving a Vec does not move its buffer.
        let s = unsafe { Storage::from_external(ptr, 3, Box::new(owner)) };
        let view = s.clone();
        assert_eq!(view.as_ptr(), ptr.as_ptr() as *const f64);
        let t = crate::tensor::Tensor::from_storage(s, &[3], &[1], 0).unwrap();
        assert_eq!(t.to_vec().unwrap(), vec![1.0, 2.0, 3.0]);
        drop(t);
        assert!(!dropped.load(Ordering::SeqCst));
        drop(view);
        assert!(dropped.load(Ordering::SeqCst));
    }

    #[test]
    fn pool_reuses_large_blocks() {
        let n = (POOL_MIN_BYTES / 4) * 3 + 7; // odd size unlikely to be used by other tests
        let a = Storage::<f32>::uninit(n).unwrap();
        let p = a.ptr() as usize;
        drop(a);
        let b = Storage::<f32>::uninit(n).unwrap();
        assert_eq!(b.ptr() as usize, p);
        assert_eq!(b.ptr() as usize % ALIGN, 0);
    }
}
