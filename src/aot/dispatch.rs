//! Dispatch: concrete tensors → symbol values → first admitting specialization → plan.

use super::artifact::Artifact;
use super::program::ExprProgram;
use super::spec::{InputSpec, SizeSpec, Spec, StrideSpec};
use super::specialization::Specialization;
use super::trace::trace;
use crate::error::{Error, Result};
use crate::iter::Plan;
use crate::layout::MemoryFormat;
use smallvec::SmallVec;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// Symbol values of one call; inline for the usual handful of symbols.
pub type Values = SmallVec<[i64; 8]>;

/// Sentinel of an unbound symbol while binding (values are sizes/strides, never negative).
const UNBOUND: i64 = -1;

/// Binds symbols from concrete layouts and checks that the layouts are the spec's (a
/// single-op spec's or a program's inputs: both are sizes that are constants or bare
/// symbols, and strides given by a memory format or by expressions).
#[derive(Clone, Debug)]
pub(crate) struct Binder {
    /// Symbols, in value order.
    symbols: Vec<String>,
    /// The inputs' sizes and strides.
    inputs: Vec<InputSpec>,
    /// How messages name each input (`input 0`, ``input 0 (`x`)``).
    labels: Vec<String>,
    /// What takes the inputs, for the arity message (`op add`, ``program `heads` ``).
    what: String,
    /// Stride expressions of all inputs given by expressions, flattened (input order).
    strides: ExprProgram,
    /// First slot in `strides` of each input (unused for layout inputs).
    first: Vec<usize>,
    /// Fast path: where each symbol is read from (first occurrence).
    sources: Vec<Src>,
    /// Fast path: every other size/stride that must equal a symbol or a constant.
    checks: Vec<(Src, Want)>,
}

/// A size or stride of an input.
#[derive(Clone, Copy, Debug)]
struct Src {
    input: u32,
    dim: u32,
    stride: bool,
}

#[derive(Clone, Copy, Debug)]
enum Want {
    Sym(u32),
    Const(i64),
}

impl Src {
    #[inline(always)]
    fn read(self, inputs: &[(&[i64], &[i64])]) -> i64 {
        let (sizes, strides) = inputs[self.input as usize];
        if self.stride {
            strides[self.dim as usize]
        } else {
            sizes[self.dim as usize]
        }
    }
}

/// The subset of a spec the binder reads.
struct BindSpec<'a> {
    symbols: &'a [String],
    inputs: &'a [InputSpec],
}

impl BindSpec<'_> {
    fn symbol_index(&self, name: &str) -> Option<usize> {
        self.symbols.iter().position(|s| s == name)
    }
}

impl Binder {
    fn new(spec: &Spec) -> Result<Binder> {
        Binder::from_parts(
            spec.symbols.clone(),
            spec.inputs.clone(),
            (0..spec.inputs.len())
                .map(|i| format!("input {i}"))
                .collect(),
            format!("op {}", spec.op),
        )
    }

    /// A binder for `inputs` over `symbols` (every symbol must be some input's size or
    /// whole stride); `labels` name the inputs in messages, `what` is what takes them.
    pub(crate) fn from_parts(
        symbols: Vec<String>,
        inputs: Vec<InputSpec>,
        labels: Vec<String>,
        what: String,
    ) -> Result<Binder> {
        let spec = BindSpec {
            symbols: &symbols,
            inputs: &inputs,
        };
        let mut exprs = Vec::new();
        let mut first = Vec::with_capacity(spec.inputs.len());
        for inp in spec.inputs {
            first.push(exprs.len());
            if let StrideSpec::Exprs(es) = &inp.strides {
                exprs.extend(es.iter().cloned());
            }
        }
        // The same order as `bind_checked`: per input its sizes, then its bare stride symbols.
        let mut sources: Vec<Option<Src>> = vec![None; spec.symbols.len()];
        let mut checks = Vec::new();
        let mut see = |src: Src, j: usize, checks: &mut Vec<(Src, Want)>| match sources[j] {
            None => sources[j] = Some(src),
            Some(_) => checks.push((src, Want::Sym(j as u32))),
        };
        for (i, inp) in spec.inputs.iter().enumerate() {
            for (d, s) in inp.sizes.iter().enumerate() {
                let src = Src {
                    input: i as u32,
                    dim: d as u32,
                    stride: false,
                };
                match s {
                    SizeSpec::Const(k) => checks.push((src, Want::Const(*k))),
                    SizeSpec::Sym(j) => see(src, *j, &mut checks),
                }
            }
            if let StrideSpec::Exprs(es) = &inp.strides {
                for (d, e) in es.iter().enumerate() {
                    if let Some(j) = e.as_symbol().and_then(|s| spec.symbol_index(s.as_str())) {
                        let src = Src {
                            input: i as u32,
                            dim: d as u32,
                            stride: true,
                        };
                        see(src, j, &mut checks);
                    }
                }
            }
        }
        let sources = sources
            .into_iter()
            .enumerate()
            .map(|(j, s)| {
                s.ok_or_else(|| {
                    Error::symbol(format!(
                        "symbol `{}` could not be bound from the inputs",
                        spec.symbols[j]
                    ))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let strides = ExprProgram::new(spec.symbols, exprs)?;
        Ok(Binder {
            symbols,
            inputs,
            labels,
            what,
            strides,
            first,
            sources,
            checks,
        })
    }

    /// Binds `values` from `inputs`; on any problem, the checked path gives the error.
    #[inline]
    pub(crate) fn bind(&self, inputs: &[(&[i64], &[i64])], values: &mut [i64]) -> Result<()> {
        if self.bind_fast(inputs, values) == Some(true) {
            Ok(())
        } else {
            self.bind_checked(inputs, values)
        }
    }

    /// The binding without error reporting: `Some(true)` when the inputs are the spec's
    /// (same conditions as [`Binder::bind_checked`]).
    #[inline]
    fn bind_fast(&self, inputs: &[(&[i64], &[i64])], values: &mut [i64]) -> Option<bool> {
        let spec = self;
        if inputs.len() != spec.inputs.len() || values.len() != self.sources.len() {
            return None;
        }
        for ((sizes, strides), inp) in inputs.iter().zip(&spec.inputs) {
            if sizes.len() != inp.sizes.len() || strides.len() != sizes.len() {
                return None;
            }
        }
        for (v, src) in values.iter_mut().zip(&self.sources) {
            *v = src.read(inputs);
        }
        // Sizes are symbols or (non-negative) constants, so this covers negative sizes and
        // negative bare stride symbols.
        if values.iter().any(|&v| v < 0) {
            return None;
        }
        for &(src, want) in &self.checks {
            let w = match want {
                Want::Sym(j) => values[j as usize],
                Want::Const(k) => k,
            };
            if src.read(inputs) != w {
                return None;
            }
        }
        for (i, ((sizes, strides), inp)) in inputs.iter().zip(&spec.inputs).enumerate() {
            match &inp.strides {
                StrideSpec::Layout(f) => {
                    if layout_differs(sizes, strides, *f).is_some() {
                        return None;
                    }
                }
                StrideSpec::Exprs(es) => {
                    let first = self.first[i];
                    let ok = self
                        .strides
                        .with_values(values, |v| {
                            (0..es.len()).all(|d| v.get(first + d) == strides[d])
                        })
                        .ok()?;
                    if !ok {
                        return None;
                    }
                }
            }
        }
        Some(true)
    }

    fn set(&self, values: &mut [i64], j: usize, v: i64, what: impl Fn() -> String) -> Result<()> {
        if values[j] == UNBOUND {
            values[j] = v;
            Ok(())
        } else if values[j] != v {
            Err(Error::symbol(format!(
                "{} is {v}, but symbol `{}` is already bound to {}",
                what(),
                self.symbols[j],
                values[j]
            )))
        } else {
            Ok(())
        }
    }

    /// The symbol values `inputs` give (every size, and every stride that is a bare
    /// symbol; they must agree, and sizes must be the spec's constants), without checking
    /// that the other strides are the spec's: what a caller plans for inputs in another
    /// layout binds.
    pub(crate) fn bind_symbols(
        &self,
        inputs: &[(&[i64], &[i64])],
        values: &mut [i64],
    ) -> Result<()> {
        let spec = BindSpec {
            symbols: &self.symbols,
            inputs: &self.inputs,
        };
        if inputs.len() != spec.inputs.len() {
            return Err(Error::invalid(format!(
                "{} takes {} inputs, got {}",
                self.what,
                spec.inputs.len(),
                inputs.len()
            )));
        }
        if values.len() != spec.symbols.len() {
            return Err(Error::invalid(format!(
                "{} symbol values for {} symbols",
                values.len(),
                spec.symbols.len()
            )));
        }
        values.fill(UNBOUND);
        for (i, ((sizes, strides), inp)) in inputs.iter().zip(spec.inputs).enumerate() {
            if sizes.len() != inp.sizes.len() || strides.len() != sizes.len() {
                return Err(Error::layout(
                    self.labels[i].clone(),
                    format!(
                        "{} sizes and {} strides; the spec has rank {}",
                        sizes.len(),
                        strides.len(),
                        inp.sizes.len()
                    ),
                ));
            }
            for (d, (&n, s)) in sizes.iter().zip(&inp.sizes).enumerate() {
                if n < 0 {
                    return Err(Error::layout(
                        self.labels[i].clone(),
                        format!("size {n} at dim {d} is negative"),
                    ));
                }
                match s {
                    SizeSpec::Const(k) if *k != n => {
                        return Err(Error::layout(
                            self.labels[i].clone(),
                            format!("size {n} at dim {d}, but the spec fixes it to {k}"),
                        ))
                    }
                    SizeSpec::Const(_) => {}
                    SizeSpec::Sym(j) => {
                        self.set(values, *j, n, || format!("{} size {d}", self.labels[i]))?
                    }
                }
            }
            if let StrideSpec::Exprs(es) = &inp.strides {
                for (d, e) in es.iter().enumerate() {
                    if let Some(s) = e.as_symbol() {
                        if let Some(j) = spec.symbol_index(s.as_str()) {
                            let st = strides[d];
                            if st < 0 {
                                return Err(Error::layout(
                                    self.labels[i].clone(),
                                    format!("stride {st} at dim {d} is negative"),
                                ));
                            }
                            self.set(values, j, st, || format!("{} stride {d}", self.labels[i]))?;
                        }
                    }
                }
            }
        }
        if let Some(j) = values.iter().position(|&v| v == UNBOUND) {
            // The spec guarantees every symbol is a size or a whole stride.
            return Err(Error::symbol(format!(
                "symbol `{}` could not be bound from the inputs",
                spec.symbols[j]
            )));
        }
        Ok(())
    }

    #[cold]
    fn bind_checked(&self, inputs: &[(&[i64], &[i64])], values: &mut [i64]) -> Result<()> {
        self.bind_symbols(inputs, values)?;
        // The layouts must be the spec's at these values.
        for (i, ((sizes, strides), inp)) in inputs.iter().zip(&self.inputs).enumerate() {
            match &inp.strides {
                StrideSpec::Layout(f) => {
                    if let Some(d) = layout_differs(sizes, strides, *f) {
                        return Err(Error::layout(
                            self.labels[i].clone(),
                            format!(
                                "strides {strides:?} are not {} strides for sizes {sizes:?} (first difference at dim {d})",
                                f.name()
                            ),
                        ));
                    }
                }
                StrideSpec::Exprs(es) => {
                    let first = self.first[i];
                    let bad = self.strides.with_values(values, |v| {
                        (0..es.len())
                            .map(|d| (d, v.get(first + d)))
                            .find(|&(d, want)| want != strides[d])
                    })?;
                    if let Some((d, want)) = bad {
                        return Err(Error::layout(
                            self.labels[i].clone(),
                            format!(
                                "stride {} at dim {d}, but the spec's `{}` is {want} here",
                                strides[d], es[d]
                            ),
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// First dim where an input's `strides` make it another layout than `format` at `sizes`:
/// [`layout_mismatch`], except that an empty input (a size 0) with non-negative strides is
/// `format` whatever its strides.
///
/// # Why an empty input's strides are not compared
/// An empty tensor addresses no memory, so its strides are arbitrary: numpy 2 gives every
/// empty array zero strides, PyTorch's `is_contiguous` is true for any of them. Requiring
/// the format's exact strides would send every empty numpy array past the specializations.
/// Accepting them is sound only with the run taking the input *as* the format's layout:
/// the instantiated values describe the input with the format's strides, and the program
/// dispatcher re-strides such an input (no element is read, so any strides address its
/// memory) before running, so the result is a fresh concrete computation at the
/// normalized layout. Where PyTorch itself would read an empty input's strides (a view's
/// strides are computed from them), the result is the normalized input's.
fn layout_differs(sizes: &[i64], strides: &[i64], format: MemoryFormat) -> Option<usize> {
    if sizes.contains(&0) && strides.iter().all(|&s| s >= 0) {
        return None;
    }
    layout_mismatch(sizes, strides, format)
}

/// First dim where `strides` differ from the dense strides of `format` at `sizes` (the
/// same strides as [`crate::layout::strides_for_format`], computed without allocating).
fn layout_mismatch(sizes: &[i64], strides: &[i64], format: MemoryFormat) -> Option<usize> {
    const CL2D: [usize; 4] = [1, 3, 2, 0];
    const CL3D: [usize; 5] = [1, 4, 3, 2, 0];
    let order: &[usize] = match format {
        MemoryFormat::ChannelsLast if sizes.len() == 4 => &CL2D,
        MemoryFormat::ChannelsLast3d if sizes.len() == 5 => &CL3D,
        MemoryFormat::ChannelsLast | MemoryFormat::ChannelsLast3d => return Some(0),
        _ => {
            // Row-major with max(size, 1).
            let mut expect: i64 = 1;
            for d in (0..sizes.len()).rev() {
                if strides[d] != expect {
                    return Some(d);
                }
                expect = expect.saturating_mul(sizes[d].max(1));
            }
            return None;
        }
    };
    let mut expect: i64 = 1;
    for &d in order {
        if strides[d] != expect {
            return Some(d);
        }
        expect = expect.saturating_mul(sizes[d]);
    }
    None
}

/// Dispatch counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DispatchStats {
    /// Calls admitted by a cached specialization.
    pub hits: u64,
    /// Calls no cached specialization admitted.
    pub misses: u64,
    /// Traces run for misses (a miss whose trace fails, e.g. shapes that do not broadcast,
    /// counts here too; a concurrent miss may find another thread's new specialization).
    pub retraces: u64,
    /// Specializations in the cache.
    pub specializations: usize,
    /// Program runs of inputs in another layout than the program's served by a cached
    /// plan for their layouts (always 0 for a single op).
    pub layout_hits: u64,
    /// Program runs of inputs in another layout planned for the call (a new plan, cached
    /// while there is room).
    pub layout_misses: u64,
    /// Plans for inputs in other layouts in the cache.
    pub layout_plans: usize,
}

/// How one call was served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dispatched {
    /// Index of the specialization used.
    pub specialization: usize,
    /// True when the call missed and a new specialization was traced for it.
    pub retraced: bool,
}

/// A thread-safe specialization cache over one spec: the runtime side of an [`Artifact`].
///
/// Lookups take a read lock and run the compiled guards of each specialization in order;
/// a miss traces at the call's values *without* holding any lock, then takes the write lock
/// only to append (re-checking first whether a concurrent miss already added a
/// specialization that admits the values). Any admitting specialization instantiates the
/// same plan (soundness), so concurrent use gives the results of serial use.
#[derive(Debug)]
pub struct Dispatcher {
    spec: Spec,
    binder: Binder,
    cache: RwLock<Vec<Arc<Specialization>>>,
    coverage: Option<super::cover::Coverage>,
    hits: AtomicU64,
    misses: AtomicU64,
    retraces: AtomicU64,
}

impl Dispatcher {
    /// A dispatcher starting with the artifact's specializations.
    pub fn new(artifact: Artifact) -> Result<Dispatcher> {
        Ok(Dispatcher {
            binder: Binder::new(&artifact.spec)?,
            spec: artifact.spec,
            cache: RwLock::new(artifact.specializations.into_iter().map(Arc::new).collect()),
            coverage: artifact.coverage,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            retraces: AtomicU64::new(0),
        })
    }

    /// The spec.
    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// Symbol values (spec order) from concrete input layouts `(sizes, strides)`: each
    /// symbol from the sizes (and bare stride symbols) it names, which must agree; then the
    /// layouts must be exactly the spec's at those values.
    pub fn bind(&self, inputs: &[(&[i64], &[i64])]) -> Result<Values> {
        let mut v: Values = SmallVec::from_elem(UNBOUND, self.spec.symbols.len());
        self.binder.bind(inputs, &mut v)?;
        Ok(v)
    }

    /// The error of a binding an error specialization admits: the concrete build's own
    /// (PyTorch's message, with the real sizes).
    #[cold]
    fn error_at(&self, values: &[i64]) -> Error {
        match super::trace::concrete_plan(&self.spec, values) {
            Err(e) => e,
            Ok(_) => Error::invalid(format!(
                "internal error: an error specialization admits {values:?}, where the build succeeds"
            )),
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<Arc<Specialization>>> {
        self.cache.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Index of the first cached specialization admitting `values`, without counting.
    pub fn lookup(&self, values: &[i64]) -> Result<Option<usize>> {
        let cache = self.read();
        for (k, s) in cache.iter().enumerate() {
            if s.admits(values)? {
                return Ok(Some(k));
            }
        }
        Ok(None)
    }

    /// The plan for symbol values `values` into `out` (no allocation on a hit when `out`
    /// has the plan's structure): guards checked in order, first admitting specialization
    /// instantiated; on a miss, a new trace at `values` is added to the cache.
    pub fn dispatch_values(&self, values: &[i64], out: &mut Plan<i64>) -> Result<Dispatched> {
        {
            let cache = self.read();
            for (k, s) in cache.iter().enumerate() {
                if s.admits(values)? {
                    if s.error.is_some() {
                        return Err(self.error_at(values));
                    }
                    s.instantiate_into(values, out)?;
                    self.hits.fetch_add(1, Ordering::Relaxed);
                    return Ok(Dispatched {
                        specialization: k,
                        retraced: false,
                    });
                }
            }
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        self.retraces.fetch_add(1, Ordering::Relaxed);
        let fresh = trace(&self.spec, values)?;
        if !fresh.admits(values)? {
            return Err(Error::invalid(format!(
                "internal error: a trace at {values:?} does not admit its own values"
            )));
        }
        let mut cache = self.cache.write().unwrap_or_else(|e| e.into_inner());
        // A concurrent miss may have added an admitting specialization meanwhile.
        for (k, s) in cache.iter().enumerate() {
            if s.admits(values)? {
                if s.error.is_some() {
                    return Err(self.error_at(values));
                }
                s.instantiate_into(values, out)?;
                return Ok(Dispatched {
                    specialization: k,
                    retraced: true,
                });
            }
        }
        fresh.instantiate_into(values, out)?;
        cache.push(Arc::new(fresh));
        Ok(Dispatched {
            specialization: cache.len() - 1,
            retraced: true,
        })
    }

    /// Binds `inputs` and dispatches (see [`Dispatcher::bind`], [`Dispatcher::dispatch_values`]).
    pub fn dispatch(&self, inputs: &[(&[i64], &[i64])], out: &mut Plan<i64>) -> Result<Dispatched> {
        let n = self.binder.sources.len();
        if n <= 8 {
            let mut v = [UNBOUND; 8];
            self.binder.bind(inputs, &mut v[..n])?;
            self.dispatch_values(&v[..n], out)
        } else {
            let v = self.bind(inputs)?;
            self.dispatch_values(&v, out)
        }
    }

    /// Like [`Dispatcher::dispatch`], returning a fresh plan.
    pub fn plan_for(&self, inputs: &[(&[i64], &[i64])]) -> Result<(Plan<i64>, Dispatched)> {
        let mut plan = empty_plan();
        let d = self.dispatch(inputs, &mut plan)?;
        Ok((plan, d))
    }

    /// The counters.
    pub fn stats(&self) -> DispatchStats {
        DispatchStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            retraces: self.retraces.load(Ordering::Relaxed),
            specializations: self.read().len(),
            ..DispatchStats::default()
        }
    }

    /// A cached specialization.
    pub fn specialization(&self, k: usize) -> Option<Arc<Specialization>> {
        self.read().get(k).cloned()
    }

    /// The cache as an artifact (e.g. to save the specializations retraced at run time).
    pub fn to_artifact(&self) -> Artifact {
        Artifact {
            spec: self.spec.clone(),
            specializations: self.read().iter().map(|s| (**s).clone()).collect(),
            coverage: self.coverage.clone(),
        }
    }
}

/// An empty plan to instantiate into.
pub fn empty_plan() -> Plan<i64> {
    Plan::nothing()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout;

    /// A binder over one `[n, c, 3, w]` input of memory format `f` and a contiguous `[c]`.
    fn binder(f: MemoryFormat) -> Binder {
        let input = |sizes: Vec<SizeSpec>, f| InputSpec {
            sizes,
            strides: StrideSpec::Layout(f),
        };
        Binder::from_parts(
            vec!["n".into(), "c".into(), "w".into()],
            vec![
                input(
                    vec![
                        SizeSpec::Sym(0),
                        SizeSpec::Sym(1),
                        SizeSpec::Const(3),
                        SizeSpec::Sym(2),
                    ],
                    f,
                ),
                input(vec![SizeSpec::Sym(1)], MemoryFormat::Contiguous),
            ],
            vec!["input 0".into(), "input 1".into()],
            "test".into(),
        )
        .unwrap()
    }

    fn bound(b: &Binder, inputs: &[(&[i64], &[i64])]) -> Result<Vec<i64>> {
        let mut v = vec![UNBOUND; 3];
        b.bind(inputs, &mut v).map(|()| v)
    }

    /// An empty input binds whatever its (non-negative) strides, to the values its sizes
    /// give, on both paths; a non-empty one only with the format's strides; the checked
    /// path agrees with the fast one.
    #[test]
    fn empty_inputs_bind_whatever_their_strides() {
        let mut rng = crate::testing::Lcg::new(7);
        for f in [MemoryFormat::Contiguous, MemoryFormat::ChannelsLast] {
            let b = binder(f);
            for sizes in [[0i64, 2, 3, 4], [2, 0, 3, 4], [2, 2, 3, 0], [2, 2, 3, 4]] {
                let c = [sizes[1]];
                let c_st = [1i64];
                let own = layout::strides_for_format(&sizes, f).unwrap();
                let want = vec![sizes[0], sizes[1], sizes[3]];
                assert_eq!(bound(&b, &[(&sizes, &own), (&c, &c_st)]).unwrap(), want);
                for _ in 0..20 {
                    let odd: Vec<i64> = (0..4).map(|_| rng.below(30) as i64).collect();
                    let inputs = [(&sizes[..], &odd[..]), (&c[..], &c_st[..])];
                    let mut v = vec![UNBOUND; 3];
                    let fast = b.bind_fast(&inputs, &mut v) == Some(true);
                    let checked = b.bind_checked(&inputs, &mut v).is_ok();
                    assert_eq!(fast, checked, "{sizes:?} {odd:?} {f}");
                    let empty = sizes.contains(&0);
                    assert_eq!(checked, empty || odd == own, "{sizes:?} {odd:?} {f}");
                    if checked {
                        assert_eq!(v, want);
                    }
                }
                if sizes.contains(&0) {
                    let neg = [-1i64, 0, 0, 0];
                    assert!(bound(&b, &[(&sizes, &neg), (&c, &c_st)]).is_err());
                }
            }
        }
    }

    #[test]
    fn layout_check_matches_layout_module() {
        let sizes_list: [&[i64]; 5] = [
            &[2, 3, 4, 5],
            &[1, 1, 1, 1],
            &[0, 3, 1, 2],
            &[3, 0, 2],
            &[2, 1, 3, 0, 4],
        ];
        for sizes in sizes_list {
            for f in [
                MemoryFormat::Contiguous,
                MemoryFormat::ChannelsLast,
                MemoryFormat::ChannelsLast3d,
            ] {
                let Ok(st) = layout::strides_for_format(sizes, f) else {
                    assert!(layout_mismatch(sizes, &vec![0; sizes.len()], f).is_some());
                    continue;
                };
                assert_eq!(layout_mismatch(sizes, &st, f), None, "{sizes:?} {f}");
                let mut bad = st.clone();
                bad[0] += 1;
                assert!(layout_mismatch(sizes, &bad, f).is_some());
            }
        }
    }
}
