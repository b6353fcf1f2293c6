//! Concrete execution of a program on real data.
//!
//! Inputs are made with the golden fill formula (row-major logical index `L`, input position
//! `k`: `((7*L + 3*k) % 11) - 5`; `uint8`: `(7*L + 3*k) % 11`; `bool`: `(7*L + 3*k) % 3 ==
//! 0`) in the layouts the program gives. Each step then runs on the layouts the concrete
//! trace computed: views read their base's storage (nothing is allocated), ops evaluate the
//! op table's per-element reference in the computation dtype the op planning chose,
//! reductions the reduction table's reference, and copies (`contiguous`, `clone`, `to`, a
//! `reshape` that copies) convert element by element. Plain multi-index loops: this is the
//! step-by-step reference the compiled paths are meant to be compared with.
//!
//! # Memory
//! The executor holds one [`Scalar`] (16 bytes) per storage element, and a step's
//! temporaries follow its *logical* element count, which a view can make far larger than
//! any storage (a reduction or a copy of `expand(x, [n*n*n])` reads `n**3` elements of a
//! one-element storage). [`execute_within`] charges every allocation against a byte limit
//! before making it (storages for as long as the run holds them, a step's temporaries and
//! [`Executed::values`] while they live) and answers [`Error::Limit`] naming what did not
//! fit, instead of growing until the allocator fails.

use super::spec::{Program, StepArg, StepOp};
use super::trace::{concrete, in_step, Value};
use crate::op::{self, narrow, Arg, Dest, Op};
use crate::reduce::reduction_meta;
use crate::sym::Bindings;
use crate::tensor::Scalar;
use crate::{DType, Error, Result};

/// The largest storage (elements) the step-by-step executor allocates; beyond it a run is
/// [`Error::Limit`] rather than an allocation failure.
pub const MAX_ELEMENTS: i64 = 1 << 24;

/// One storage's elements (widened: `f64`, `i64` or `bool` per dtype).
pub type Data = Vec<Scalar>;

/// A program run: every value's layout and the storages they live in.
#[derive(Clone, Debug)]
pub struct Executed {
    /// Layouts (inputs, then one per step), as the concrete trace computed them.
    pub layouts: Vec<Value<i64>>,
    /// Storages by the value that allocated them (`None` for views).
    pub storages: Vec<Option<Data>>,
    /// The byte limit of [`execute_within`] and the bytes the storages hold.
    budget: Budget,
}

/// Bytes the executor may allocate and bytes its storages hold.
#[derive(Clone, Copy, Debug)]
struct Budget {
    limit: u64,
    held: u64,
}

/// Bytes of `n` elements of `size` bytes each (saturating: a count beyond memory is refused
/// by the limit, never wrapped).
fn bytes_of(n: i64, size: usize) -> u64 {
    (n.max(0) as u64).saturating_mul(size as u64)
}

/// The number of elements `sizes` spans (saturating at `i64::MAX`).
fn numel(sizes: &[i64]) -> i64 {
    sizes.iter().fold(1i64, |a, &z| a.saturating_mul(z.max(0)))
}

/// The fill value of element `l` (row-major logical index) of input `k`.
pub fn fill_value(l: i64, k: i64, dtype: DType) -> Scalar {
    let m = (7 * (l % 11) + 3 * k) % 11;
    match dtype {
        DType::Bool => Scalar::Bool((7 * (l % 3) + 3 * k) % 3 == 0),
        DType::U8 => Scalar::Int(m),
        DType::I32 | DType::I64 => Scalar::Int(m - 5),
        DType::F32 | DType::F64 => Scalar::Float((m - 5) as f64),
    }
}

/// The fill value of element `l` of input `k` whose spec gives `"fill": {"mod": m}`:
/// `(7*l + 3*k) % m` in the input's dtype (index inputs that stay in range).
pub fn fill_value_mod(l: i64, k: i64, m: i64, dtype: DType) -> Scalar {
    let m = m.max(1);
    let v = (7 * (l % m) % m + 3 * k % m) % m;
    crate::op::narrow(Scalar::Int(v), dtype)
}

/// Each input's fill: `Some(m)` for a `{"mod": m}` fill at `b` (at least 1), `None` for
/// the golden formula.
pub fn input_moduli(p: &Program, b: &Bindings) -> Result<Vec<Option<i64>>> {
    p.inputs
        .iter()
        .map(|inp| {
            inp.fill_mod
                .as_ref()
                .map(|e| {
                    let m = e.eval(b)?;
                    if m < 1 {
                        return Err(Error::invalid(format!(
                            "input `{}`: fill modulus {e} is {m}, below 1",
                            inp.name
                        )));
                    }
                    Ok(m)
                })
                .transpose()
        })
        .collect()
}

/// Calls `f` with every index of `sizes` in row-major order.
fn for_each_index(sizes: &[i64], mut f: impl FnMut(&[i64]) -> Result<()>) -> Result<()> {
    if sizes.contains(&0) {
        return Ok(());
    }
    let mut idx = vec![0i64; sizes.len()];
    loop {
        f(&idx)?;
        let mut d = sizes.len();
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < sizes[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

fn position(v: &Value<i64>, idx: &[i64]) -> usize {
    let p = v.offset + idx.iter().zip(&v.strides).map(|(i, s)| i * s).sum::<i64>();
    p as usize
}

fn to_i64(s: Scalar) -> i64 {
    match s {
        Scalar::Bool(b) => i64::from(b),
        Scalar::Int(i) => i,
        Scalar::Float(f) => f as i64, // not reached: floats take the f64 reference
    }
}

fn to_f64(s: Scalar) -> f64 {
    s.to_f64()
}

impl Executed {
    /// Refuses a temporary of `bytes` (for `what`) that would take the executor past its
    /// limit, counting what its storages already hold.
    fn check(&self, bytes: u64, what: &str) -> Result<()> {
        let b = self.budget;
        if b.held.saturating_add(bytes) > b.limit {
            return Err(Error::Limit {
                message: format!(
                    "the step-by-step reference would allocate {} for {what}, holding {} already: \
                     more than its limit of {}",
                    crate::aot::fmt_bytes(bytes),
                    crate::aot::fmt_bytes(b.held),
                    crate::aot::fmt_bytes(b.limit)
                ),
            });
        }
        Ok(())
    }

    /// Charges `bytes` (for `what`) for as long as they are held: [`Self::check`], then
    /// counted until [`Self::release`].
    fn reserve(&mut self, bytes: u64, what: &str) -> Result<()> {
        self.check(bytes, what)?;
        self.budget.held = self.budget.held.saturating_add(bytes);
        Ok(())
    }

    /// Returns what [`Self::reserve`] charged for a temporary that is gone.
    fn release(&mut self, bytes: u64) {
        self.budget.held = self.budget.held.saturating_sub(bytes);
    }

    fn read(&self, v: usize, idx: &[i64]) -> Result<Scalar> {
        let l = &self.layouts[v];
        let data = self.storages[l.storage]
            .as_ref()
            .ok_or_else(|| Error::invalid("internal: a storage was never written"))?;
        data.get(position(l, idx))
            .copied()
            .ok_or_else(|| Error::invalid("internal: element outside its storage"))
    }

    /// Value `v`'s elements in row-major logical order ([`Error::Limit`] when they do not
    /// fit the executor's limit next to its storages).
    pub fn values(&self, v: usize) -> Result<Vec<Scalar>> {
        let n = numel(&self.layouts[v].sizes);
        self.check(
            bytes_of(n, std::mem::size_of::<Scalar>()),
            &format!("the {n} elements of value {v}"),
        )?;
        let mut out = Vec::with_capacity(n as usize);
        for_each_index(&self.layouts[v].sizes, |idx| {
            out.push(self.read(v, idx)?);
            Ok(())
        })?;
        Ok(out)
    }

    /// A new storage for value `me`, filled by `f(index)` over its sizes.
    fn write(&mut self, me: usize, mut f: impl FnMut(&[i64]) -> Result<Scalar>) -> Result<()> {
        let l = self.layouts[me].clone();
        if l.storage_numel > MAX_ELEMENTS {
            return Err(Error::Limit {
                message: format!(
                    "a storage of {} elements exceeds the reference executor's limit of {MAX_ELEMENTS}",
                    l.storage_numel
                ),
            });
        }
        self.reserve(
            bytes_of(l.storage_numel, std::mem::size_of::<Scalar>()),
            &format!("a storage of {} elements", l.storage_numel),
        )?;
        let mut data = vec![Scalar::Int(0); l.storage_numel.max(0) as usize];
        for_each_index(&l.sizes, |idx| {
            data[position(&l, idx)] = f(idx)?;
            Ok(())
        })?;
        self.storages[me] = Some(data);
        Ok(())
    }
}

/// Input `k` of `x` broadcast to an output index (sizes aligned right, size-1 dims read 0).
fn broadcast_index(x: &[i64], out: &[i64]) -> Vec<i64> {
    let shift = out.len() - x.len();
    x.iter()
        .enumerate()
        .map(|(d, &z)| if z == 1 { 0 } else { out[d + shift] })
        .collect()
}

fn op_step(ex: &mut Executed, p: &Program, k: usize, op: Op, b: &Bindings) -> Result<()> {
    let st = &p.steps[k];
    let me = p.inputs.len() + k;
    // Python numbers at `b` (a size passed as a number is its value here).
    let numbers: Vec<Option<Scalar>> = st
        .args
        .iter()
        .map(|a| a.number_at(b).transpose())
        .collect::<Result<_>>()?;
    let args: Vec<Arg<i64>> = st
        .args
        .iter()
        .zip(&numbers)
        .map(|(a, n)| match (a, n) {
            (StepArg::Value(i), _) => Ok(Arg::Tensor(ex.layouts[*i].spec(*i))),
            (_, Some(s)) => Ok(Arg::Scalar(*s)),
            (other, None) => Err(Error::invalid(format!("bad op argument {other:?}"))),
        })
        .collect::<Result<_>>()?;
    let plan = op::plan_op(op, &args, &Dest::New)?;
    let out_dtype = ex.layouts[me].dtype;
    let reference = op.def().reference;
    let mut operands = Vec::with_capacity(st.args.len());
    let sizes = ex.layouts[me].sizes.clone();
    let n = numel(&sizes);
    let temp = bytes_of(n, std::mem::size_of::<Scalar>());
    ex.reserve(temp, &format!("the {n} results of the op"))?;
    let ex_ref = &*ex;
    let mut rows: Vec<Scalar> = Vec::with_capacity(n as usize);
    for_each_index(&sizes, |idx| {
        operands.clear();
        for (j, (a, n)) in st.args.iter().zip(&numbers).enumerate() {
            // `where`'s condition is read as bool; everything else in the computation dtype.
            let dtype = op.def().input_dtype(j, plan.compute_dtype);
            let s = match (a, n) {
                (StepArg::Value(i), _) => {
                    let x = &ex_ref.layouts[*i];
                    ex_ref.read(*i, &broadcast_index(&x.sizes, idx))?
                }
                (_, Some(s)) => *s,
                _ => unreachable!("checked above"),
            };
            operands.push(narrow(s, dtype));
        }
        let r = narrow(reference(&operands), plan.compute_dtype);
        rows.push(narrow(r, out_dtype));
        Ok(())
    })?;
    let mut it = rows.into_iter();
    let written = ex.write(me, |_| {
        it.next()
            .ok_or_else(|| Error::invalid("internal: op output count"))
    });
    ex.release(temp);
    written
}

fn reduce_step(ex: &mut Executed, p: &Program, k: usize) -> Result<()> {
    let st = &p.steps[k];
    let me = p.inputs.len() + k;
    let StepOp::Reduce(op) = st.op else {
        return Err(Error::invalid("internal: not a reduction"));
    };
    let StepArg::Value(xi) = st.args[0] else {
        return Err(Error::invalid("internal: reduction of a non-value"));
    };
    let x = ex.layouts[xi].clone();
    let dims = st.reduction_dims()?;
    let input =
        crate::iter::TensorSpec::new(x.sizes.clone(), x.strides.clone(), x.dtype.element_size())
            .with_offset(x.offset);
    let m = reduction_meta(op, &input, x.dtype, &dims, st.keepdim)?;
    // Output elements in row-major order of the kept dims; inputs grouped by them, each
    // group in row-major order of the reduced dims.
    let kept: Vec<i64> = x
        .sizes
        .iter()
        .zip(&m.mask)
        .map(|(&z, &r)| if r { 1 } else { z })
        .collect();
    let n_out: i64 = kept.iter().product();
    let n_in = numel(&x.sizes);
    let temp = bytes_of(n_in, std::mem::size_of::<f64>())
        .saturating_add(bytes_of(n_out, std::mem::size_of::<Vec<f64>>()));
    ex.reserve(
        temp,
        &format!("the {n_in} inputs of the reduction in {n_out} groups"),
    )?;
    let group_of = |idx: &[i64]| {
        let mut o = 0i64;
        for d in 0..idx.len() {
            o = o * kept[d] + if m.mask[d] { 0 } else { idx[d] };
        }
        o as usize
    };
    let out_dtype = m.dtype;
    // Integers and bools in `i64` where the table has an exact integer reference (a wrapping
    // `int64` accumulation, as PyTorch's), every other input in `f64`.
    let int_reference = match x.dtype {
        DType::F32 | DType::F64 => None,
        _ => op.info().int_reference,
    };
    let results: Vec<Scalar> = match int_reference {
        Some(reference) => {
            let mut groups: Vec<Vec<i64>> = vec![Vec::new(); n_out.max(0) as usize];
            for_each_index(&x.sizes, |idx| {
                groups[group_of(idx)].push(to_i64(ex.read(xi, idx)?));
                Ok(())
            })?;
            groups
                .iter()
                .map(|g| narrow(Scalar::Int(reference(g)), out_dtype))
                .collect()
        }
        None => {
            let mut groups: Vec<Vec<f64>> = vec![Vec::new(); n_out.max(0) as usize];
            for_each_index(&x.sizes, |idx| {
                groups[group_of(idx)].push(to_f64(ex.read(xi, idx)?));
                Ok(())
            })?;
            let reference = op.info().reference;
            groups
                .iter()
                .map(|g| narrow(Scalar::Float(reference(g)), out_dtype))
                .collect()
        }
    };
    ex.release(temp);
    let mut it = results.into_iter();
    ex.write(me, |_| {
        it.next()
            .ok_or_else(|| Error::invalid("internal: reduction output count"))
    })
}

/// A copy step (`contiguous`, `clone`, `to`, a copying `reshape`/`flatten`): the source's
/// elements in row-major order, converted to the value's dtype.
fn copy_step(ex: &mut Executed, p: &Program, k: usize) -> Result<()> {
    let me = p.inputs.len() + k;
    let StepArg::Value(xi) = p.steps[k].args[0] else {
        return Err(Error::invalid("internal: copy of a non-value"));
    };
    let dtype = ex.layouts[me].dtype;
    let src = ex.values(xi)?;
    let temp = bytes_of(src.len() as i64, std::mem::size_of::<Scalar>());
    ex.reserve(temp, "the copy's source elements")?;
    let mut it = src.into_iter();
    let written = ex.write(me, |_| {
        it.next()
            .map(|s| narrow(s, dtype))
            .ok_or_else(|| Error::invalid("internal: copy element count"))
    });
    ex.release(temp);
    written
}

/// A structured step: the op's naive reference ([`crate::structured::reference`]) over the
/// arguments' row-major values, written in the value's layout.
fn structured_step(ex: &mut Executed, p: &Program, k: usize, b: &Bindings) -> Result<()> {
    use crate::structured::RArg;
    let st = &p.steps[k];
    let me = p.inputs.len() + k;
    let call = super::trace::structured_call(st, &ex.layouts, &|e| e.eval(b))?;
    let mut args = Vec::with_capacity(st.args.len());
    let mut temp = 0u64;
    for a in &st.args {
        let arg = match a {
            StepArg::Value(i) => RArg::Tensor {
                sizes: ex.layouts[*i].sizes.clone(),
                values: ex.values(*i)?,
            },
            StepArg::Values(is) => RArg::List(
                is.iter()
                    .map(|i| Ok((ex.layouts[*i].sizes.clone(), ex.values(*i)?)))
                    .collect::<Result<_>>()?,
            ),
            _ => RArg::Absent,
        };
        let n = match &arg {
            RArg::Tensor { values, .. } => values.len(),
            RArg::List(ts) => ts.iter().map(|(_, v)| v.len()).sum(),
            RArg::Absent => 0,
        };
        let bytes = bytes_of(n as i64, std::mem::size_of::<Scalar>());
        ex.reserve(bytes, "a structured step's arguments")?;
        temp += bytes;
        args.push(arg);
    }
    let mut results = crate::structured::reference(&call, &args)?;
    ex.release(temp);
    let part = st.part.map_or(0, |(i, _)| i);
    if part >= results.len() {
        return Err(Error::invalid("internal: a structured step's result count"));
    }
    let mut it = results.swap_remove(part).into_iter();
    ex.write(me, |_| {
        it.next()
            .ok_or_else(|| Error::invalid("internal: structured result element count"))
    })
}

/// Runs `p` at `b` on inputs made by the fill formula (no limit on the bytes it allocates
/// beyond [`MAX_ELEMENTS`] per storage; see [`execute_within`]).
pub fn execute(p: &Program, b: &Bindings) -> Result<Executed> {
    execute_within(p, b, u64::MAX)
}

/// [`execute`] allocating at most `limit` bytes, storages and temporaries together (see
/// the module docs); beyond it [`Error::Limit`], before the allocation.
pub fn execute_within(p: &Program, b: &Bindings, limit: u64) -> Result<Executed> {
    let layouts = concrete(p, b)?;
    let n = layouts.len();
    let mut ex = Executed {
        layouts,
        storages: vec![None; n],
        budget: Budget { limit, held: 0 },
    };
    let moduli = input_moduli(p, b)?;
    for (k, modulus) in moduli.into_iter().enumerate() {
        let dtype = ex.layouts[k].dtype;
        let mut l = 0i64;
        ex.write(k, |_| {
            let v = match modulus {
                Some(m) => fill_value_mod(l, k as i64, m, dtype),
                None => fill_value(l, k as i64, dtype),
            };
            l += 1;
            Ok(v)
        })?;
    }
    for k in 0..p.steps.len() {
        let me = p.inputs.len() + k;
        if ex.layouts[me].storage != me {
            continue; // a view: nothing to compute
        }
        let r = match p.steps[k].op {
            StepOp::Op(op) => op_step(&mut ex, p, k, op, b),
            StepOp::Reduce(_) => reduce_step(&mut ex, p, k),
            StepOp::Structured(_) => structured_step(&mut ex, p, k, b),
            _ => copy_step(&mut ex, p, k),
        };
        r.map_err(|e| in_step(e, &p.steps[k].label))?;
    }
    Ok(ex)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_formula() {
        assert_eq!(fill_value(0, 0, DType::F32), Scalar::Float(-5.0));
        assert_eq!(fill_value(1, 0, DType::F32), Scalar::Float(2.0));
        assert_eq!(fill_value(1, 1, DType::U8), Scalar::Int(10));
        assert_eq!(fill_value(0, 0, DType::Bool), Scalar::Bool(true));
        assert_eq!(fill_value(1, 1, DType::Bool), Scalar::Bool(false));
        assert_eq!(fill_value(2, 1, DType::Bool), Scalar::Bool(false));
        assert_eq!(fill_value(1, 2, DType::Bool), Scalar::Bool(false));
        assert_eq!(fill_value(3, 0, DType::Bool), Scalar::Bool(true));
    }

    #[test]
    fn views_alias_and_ops_compute() {
        let p = Program::from_json(
            r#"{"inputs": [{"name": "x", "sizes": ["n", 3], "layout": "contiguous"}],
                "hints": {"n": 2},
                "steps": [{"let": "t", "op": "transpose", "args": ["x", 0, 1]},
                          {"let": "y", "op": "mul", "args": ["t", 2]},
                          {"let": "s", "op": "sum", "args": ["y", [1]]}],
                "outputs": ["t", "y", "s"]}"#,
        )
        .unwrap();
        let ex = execute(&p, &p.hint_bindings()).unwrap();
        assert!(ex.storages[1].is_none());
        let x = ex.values(0).unwrap();
        let t = ex.values(1).unwrap();
        // t[i][j] = x[j][i]
        for i in 0..3 {
            for j in 0..2 {
                assert_eq!(t[i * 2 + j], x[j * 3 + i]);
            }
        }
        let s = ex.values(3).unwrap();
        for i in 0..3 {
            let want = 2.0 * (to_f64(x[i]) + to_f64(x[3 + i]));
            assert_eq!(to_f64(s[i]), want);
        }
    }
}
