//! Structured ops: kernel (`structured::run`) vs the naive reference
//! (`structured::reference`), differentially, on random calls of every op of the registry.
//!
//! Each case is one call: random sizes (0..=5 per dim, ranks as the op allows), inputs in
//! random strided layouts (permuted dims, strided views of a larger storage, an expanded
//! stride-0 dim, a storage offset), dtypes among the six (the meta function rejects what
//! the op does not take: then both sides must fail with the same error category),
//! keywords drawn per op, 1-3 threads and a grain size that forces the parallel paths.
//!
//! The proptest strategies draw a seed and build the case from it with a small
//! deterministic generator ([`Gen`]): the cases are structured per op (a dozen dependent
//! choices each), which reads far better as straight-line code than as nested
//! `prop_flat_map`s. Shrinking therefore does not simplify a failing case, but every
//! failure prints the whole case (`Case`'s `Debug`) and the seed reproduces it.
//!
//! Checked per case: both sides succeed or both fail (same `Error::category()`); the same
//! number of results; each result's sizes, strides and dtype are what `meta` returned
//! (the kernel does not change the layout); views (`split`, `chunk`, `unbind`) share the
//! input's storage at `meta`'s offset; values read row-major are equal (exactly for
//! copies, fills, indexing and integer/float cumsum; within a relative tolerance for the
//! float computations, see [`close`]). NaN equals NaN.
//!
//! The mismatches these tests found (a 0-d gather index, softmax of a row holding `+inf`,
//! attention over an empty head dim with an infinite scale) were fixed in the kernels and
//! are kept as regressions in `found_mismatches_now_agree`.

use proptest::prelude::*;
use std::sync::OnceLock;
use symstride::kernel::ExecConfig;
use symstride::op::AnyTensor;
use symstride::structured::{self, Call, KArg, Kw, RArg, Results, SOp, STRUCTURED};
use symstride::tensor::{Scalar, Storage, Tensor};
use symstride::DType;

// ---------------------------------------------------------------------------------------
// Cases

/// A tensor input: dtype, sizes, logical values (row-major, as `f64`) and its layout.
#[derive(Clone, Debug)]
struct TIn {
    dtype: DType,
    sizes: Vec<i64>,
    vals: Vec<f64>,
    lay: Lay,
}

/// How an input is laid out in its storage.
#[derive(Clone, Debug)]
struct Lay {
    /// Storage order of the dims, outermost first (a permutation).
    perm: Vec<usize>,
    /// Per dim, a stride multiplier (2: every other element of a larger storage).
    gaps: Vec<i64>,
    /// Storage offset.
    offset: i64,
    /// A dim read with stride 0 (its values are made equal along it).
    expand: Option<usize>,
}

impl Lay {
    fn plain(rank: usize) -> Lay {
        Lay {
            perm: (0..rank).collect(),
            gaps: vec![1; rank],
            offset: 0,
            expand: None,
        }
    }
}

#[derive(Clone, Debug)]
enum AIn {
    T(TIn),
    L(Vec<TIn>),
    Absent,
}

#[derive(Clone, Debug)]
struct Case {
    op: SOp,
    args: Vec<AIn>,
    kwargs: Vec<(&'static str, Kw<i64>)>,
    threads: usize,
    grain: usize,
}

fn numel(sizes: &[i64]) -> usize {
    sizes.iter().map(|&s| s.max(0) as usize).product()
}

fn unravel(mut l: usize, sizes: &[i64]) -> Vec<i64> {
    let mut at = vec![0i64; sizes.len()];
    for k in (0..sizes.len()).rev() {
        let s = sizes[k].max(1) as usize;
        at[k] = (l % s) as i64;
        l /= s;
    }
    at
}

fn ravel(at: &[i64], sizes: &[i64]) -> usize {
    at.iter().zip(sizes).fold(0usize, |l, (&i, &s)| l * s as usize + i as usize)
}

/// The strides of `t`'s layout.
fn strides_of(t: &TIn) -> Vec<i64> {
    let r = t.sizes.len();
    let mut strides = vec![0i64; r];
    let mut acc = 1i64;
    for &d in t.lay.perm.iter().rev() {
        strides[d] = acc * t.lay.gaps[d];
        acc = strides[d] * t.sizes[d].max(1);
    }
    if let Some(e) = t.lay.expand {
        strides[e] = 0;
    }
    strides
}

/// Builds the strided tensor of `t`: a storage filled with a sentinel (99) where no
/// element of the view lies, the logical values at their addresses.
fn build(t: &TIn) -> AnyTensor {
    let strides = strides_of(t);
    let n = numel(&t.sizes);
    let extent: i64 = t
        .sizes
        .iter()
        .zip(&strides)
        .map(|(&s, &st)| if s > 0 { (s - 1) * st } else { 0 })
        .sum();
    let len = (t.lay.offset + extent + 1) as usize;
    let mut store = vec![99.0f64; len];
    for l in 0..n {
        let at = unravel(l, &t.sizes);
        let addr = t.lay.offset + at.iter().zip(&strides).map(|(i, s)| i * s).sum::<i64>();
        store[addr as usize] = t.vals[l];
    }
    fn mk<T: symstride::tensor::Element>(
        v: Vec<T>,
        t: &TIn,
        strides: &[i64],
    ) -> Tensor<T> {
        Tensor::from_storage(Storage::from_vec(v), &t.sizes, strides, t.lay.offset).unwrap()
    }
    match t.dtype {
        DType::Bool => mk(store.iter().map(|&v| v != 0.0).collect(), t, &strides).into(),
        DType::U8 => mk(store.iter().map(|&v| v as i64 as u8).collect(), t, &strides).into(),
        DType::I32 => mk(store.iter().map(|&v| v as i32).collect(), t, &strides).into(),
        DType::I64 => mk(store.iter().map(|&v| v as i64).collect(), t, &strides).into(),
        DType::F32 => mk(store.iter().map(|&v| v as f32).collect(), t, &strides).into(),
        DType::F64 => mk(store, t, &strides).into(),
    }
}

/// `t`'s values in row-major order, read element by element (`AnyTensor::get`).
fn read(t: &AnyTensor) -> Vec<Scalar> {
    (0..numel(t.sizes()))
        .map(|l| t.get(&unravel(l, t.sizes())).unwrap())
        .collect()
}

fn same_storage(a: &AnyTensor, b: &AnyTensor) -> bool {
    use AnyTensor as A;
    match (a, b) {
        (A::Bool(x), A::Bool(y)) => x.shares_storage(y),
        (A::U8(x), A::U8(y)) => x.shares_storage(y),
        (A::I32(x), A::I32(y)) => x.shares_storage(y),
        (A::I64(x), A::I64(y)) => x.shares_storage(y),
        (A::F32(x), A::F32(y)) => x.shares_storage(y),
        (A::F64(x), A::F64(y)) => x.shares_storage(y),
        _ => false,
    }
}

fn pools() -> &'static [rayon::ThreadPool] {
    static POOLS: OnceLock<Vec<rayon::ThreadPool>> = OnceLock::new();
    POOLS.get_or_init(|| {
        (1..=3)
            .map(|n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap())
            .collect()
    })
}

/// What both sides answered for a case.
struct Outcome {
    call: Call<i64>,
    inputs: Vec<KArg>,
    kernel: symstride::Result<Vec<AnyTensor>>,
    reference: symstride::Result<Vec<Vec<Scalar>>>,
}

fn evaluate(case: &Case) -> Outcome {
    let inputs: Vec<KArg> = case
        .args
        .iter()
        .map(|a| match a {
            AIn::T(t) => KArg::Tensor(build(t)),
            AIn::L(ts) => KArg::List(ts.iter().map(build).collect()),
            AIn::Absent => KArg::Absent,
        })
        .collect();
    let rargs: Vec<RArg> = inputs
        .iter()
        .map(|a| match a {
            KArg::Tensor(t) => RArg::Tensor {
                sizes: t.sizes().to_vec(),
                values: read(t),
            },
            KArg::List(ts) => RArg::List(ts.iter().map(|t| (t.sizes().to_vec(), read(t))).collect()),
            KArg::Absent => RArg::Absent,
        })
        .collect();
    let call = Call::new(case.op, structured::sargs_of(&inputs), &mut |name: &str| {
        Ok(case.kwargs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone()))
    })
    .expect("the case builds a call");
    let cfg = ExecConfig {
        grain_size: case.grain,
        ..ExecConfig::default()
    };
    let kernel = pools()[case.threads - 1].install(|| structured::run(&call, &inputs, &cfg));
    let reference = structured::reference(&call, &rargs);
    Outcome {
        call,
        inputs,
        kernel,
        reference,
    }
}

/// Ops whose float results are computed (statistics, exponentials, products) rather than
/// moved: compared within a tolerance. Everything else (copies, fills, indexing, arange
/// and cumsum, whose kernel and reference accumulate in the same order in `f64`) exactly.
fn computed(op: SOp) -> bool {
    use SOp::*;
    matches!(op, Softmax | LogSoftmax | LayerNorm | RmsNorm | BatchNorm | GroupNorm | Sdpa)
}

/// Float values equal within the tolerance of `dtype`. Both sides compute in `f64` and
/// narrow once, so f32 results differ by at most an ulp of the f64 difference's rounding
/// (1e-5 * (1 + |ref|) is far above); f64 results differ by the summation order only:
/// the worst case here is a norm over a row of equal values, `(v - mean) / sqrt(var +
/// eps)` with `eps` down to 1e-5 (amplifying the cancellation error ~300x), hence
/// 1e-10 * (1 + |ref|). Infinities must be equal, NaN equals NaN.
fn close(got: f64, want: f64, dtype: DType, exact: bool) -> bool {
    if got.is_nan() || want.is_nan() {
        return got.is_nan() && want.is_nan();
    }
    if exact || got.is_infinite() || want.is_infinite() {
        return got == want;
    }
    let tol = if dtype == DType::F32 { 1e-5 } else { 1e-10 };
    (got - want).abs() <= tol * (1.0 + want.abs())
}

/// The case checked (see the module docs); `Err` describes the first difference.
fn check(case: &Case) -> Result<(), String> {
    let o = evaluate(case);
    let (got, want) = match (o.kernel, o.reference) {
        (Err(a), Err(b)) => {
            return if a.category() == b.category() {
                Ok(())
            } else {
                Err(format!("error categories differ: kernel {a:?}, reference {b:?}"))
            };
        }
        (Ok(g), Ok(w)) => (g, w),
        (g, w) => return Err(format!("one side failed: kernel {g:?}, reference {w:?}")),
    };
    let outs = structured::meta(&o.call).map_err(|e| format!("meta failed after a run: {e:?}"))?;
    if got.len() != want.len() || got.len() != outs.len() {
        return Err(format!(
            "result counts: kernel {}, reference {}, meta {}",
            got.len(),
            want.len(),
            outs.len()
        ));
    }
    let views = case.op.def().results == Results::Views;
    for (k, ((g, w), m)) in got.iter().zip(&want).zip(&outs).enumerate() {
        if g.sizes() != m.sizes.as_slice() || g.strides() != m.strides.as_slice() || g.dtype() != m.dtype {
            return Err(format!(
                "result {k}: kernel layout {:?}/{:?} {:?}, meta {:?}/{:?} {:?}",
                g.sizes(),
                g.strides(),
                g.dtype(),
                m.sizes,
                m.strides,
                m.dtype
            ));
        }
        if views {
            let KArg::Tensor(x) = &o.inputs[0] else {
                return Err("a view op without a tensor input".into());
            };
            if !same_storage(g, x) || Some(g.storage_offset()) != m.view_offset {
                return Err(format!(
                    "result {k} is not a view of the input at offset {:?} (offset {})",
                    m.view_offset,
                    g.storage_offset()
                ));
            }
        }
        let gv = read(g);
        if gv.len() != w.len() {
            return Err(format!("result {k}: {} values, reference {}", gv.len(), w.len()));
        }
        for (i, (&a, &b)) in gv.iter().zip(w).enumerate() {
            let ok = match (a, b) {
                (Scalar::Float(x), Scalar::Float(y)) => close(x, y, g.dtype(), !computed(case.op)),
                _ => a == b,
            };
            if !ok {
                return Err(format!(
                    "result {k}, element {i} (at {:?}): kernel {a:?}, reference {b:?}\n kernel: {gv:?}\n reference: {w:?}",
                    unravel(i, g.sizes())
                ));
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The generator

/// A small deterministic generator (splitmix64) the strategies seed.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % ((hi - lo + 1) as u64)) as i64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    fn float(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }
    fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())].clone()
    }
    fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            let j = self.below(i + 1);
            xs.swap(i, j);
        }
    }

    /// A size 0..=5: some 0s, more 1s.
    fn size(&mut self) -> i64 {
        match self.below(10) {
            0 => 0,
            1 | 2 => 1,
            _ => self.int(2, 5),
        }
    }
    fn sizes(&mut self, rank: usize) -> Vec<i64> {
        (0..rank).map(|_| self.size()).collect()
    }
    fn rank(&mut self, lo: usize, hi: usize) -> usize {
        self.int(lo as i64, hi as i64) as usize
    }
    fn any_dtype(&mut self) -> DType {
        self.pick(&[DType::F32, DType::F64, DType::I32, DType::I64, DType::U8, DType::Bool])
    }
    /// Mostly a float dtype; sometimes another (the float-only ops reject it).
    fn float_dtype(&mut self) -> DType {
        if self.chance(0.9) {
            self.pick(&[DType::F32, DType::F64])
        } else {
            self.any_dtype()
        }
    }
    fn index_dtype(&mut self) -> DType {
        if self.chance(0.95) {
            self.pick(&[DType::I64, DType::I32])
        } else {
            self.pick(&[DType::U8, DType::Bool, DType::F32])
        }
    }
    fn dtype_name(&mut self) -> Kw<i64> {
        Kw::Name(self.any_dtype().name().to_string())
    }

    /// A dim of a rank-`rank` tensor, negative half the time, rarely out of range.
    fn dim(&mut self, rank: usize) -> i64 {
        let r = rank.max(1) as i64;
        if self.chance(0.03) {
            return self.pick(&[r, -r - 1]);
        }
        let d = self.int(0, r - 1);
        if self.chance(0.5) {
            d - r
        } else {
            d
        }
    }

    /// A random layout for a tensor of `sizes`.
    fn lay(&mut self, sizes: &[i64]) -> Lay {
        let r = sizes.len();
        let mut perm: Vec<usize> = (0..r).collect();
        if self.chance(0.6) {
            self.shuffle(&mut perm);
        }
        let gaps = (0..r).map(|_| if self.chance(0.25) { 2 } else { 1 }).collect();
        let offset = if self.chance(0.5) { self.int(1, 3) } else { 0 };
        let expand = if r > 0 && self.chance(0.2) { Some(self.below(r)) } else { None };
        Lay {
            perm,
            gaps,
            offset,
            expand,
        }
    }

    /// Small integer values for `dtype` (exact sums), or for `floats` uniform in [-3, 3].
    fn values(&mut self, dtype: DType, n: usize, floats: bool) -> Vec<f64> {
        (0..n)
            .map(|_| match dtype {
                DType::Bool => self.int(0, 1) as f64,
                DType::U8 => self.int(0, 5) as f64,
                DType::F32 | DType::F64 if floats => self.float(-3.0, 3.0),
                _ => self.int(-3, 3) as f64,
            })
            .collect()
    }

    /// A tensor with the given values in a random layout (values made equal along an
    /// expanded dim).
    fn with_values(&mut self, dtype: DType, sizes: Vec<i64>, mut vals: Vec<f64>) -> TIn {
        let lay = self.lay(&sizes);
        if let Some(e) = lay.expand {
            for l in 0..vals.len() {
                let mut at = unravel(l, &sizes);
                at[e] = 0;
                vals[l] = vals[ravel(&at, &sizes)];
            }
        }
        TIn {
            dtype,
            sizes,
            vals,
            lay,
        }
    }

    fn tensor(&mut self, dtype: DType, sizes: Vec<i64>, floats: bool) -> TIn {
        let vals = self.values(dtype, numel(&sizes), floats);
        self.with_values(dtype, sizes, vals)
    }

    /// Index values for a dim of size `bound`: in range (negative too when
    /// `negative_ok`), rarely one out of range.
    fn index_values(&mut self, n: usize, bound: i64, negative_ok: bool) -> Vec<f64> {
        let bad = self.chance(0.05);
        let mut v: Vec<f64> = (0..n)
            .map(|_| {
                if bound <= 0 {
                    return self.int(-1, 1) as f64;
                }
                let i = self.int(0, bound - 1);
                (if negative_ok && self.chance(0.4) { i - bound } else { i }) as f64
            })
            .collect();
        if bad && n > 0 {
            let k = self.below(n);
            v[k] = self.pick(&[bound, bound + 2, -bound - 1, -1]) as f64;
        }
        v
    }

    fn index(&mut self, sizes: Vec<i64>, bound: i64, negative_ok: bool) -> TIn {
        let dtype = self.index_dtype();
        let vals = self.index_values(numel(&sizes), bound, negative_ok);
        self.with_values(dtype, sizes, vals)
    }

    /// A float parameter of `sizes` in `dtype` (rarely another dtype).
    fn param(&mut self, dtype: DType, sizes: Vec<i64>, lo: f64, hi: f64) -> TIn {
        let d = if self.chance(0.03) { self.any_dtype() } else { dtype };
        let vals = (0..numel(&sizes)).map(|_| self.float(lo, hi)).collect();
        self.with_values(d, sizes, vals)
    }

    fn maybe_param(&mut self, dtype: DType, sizes: Vec<i64>) -> AIn {
        if self.chance(0.5) {
            AIn::T(self.param(dtype, sizes, -2.0, 2.0))
        } else {
            AIn::Absent
        }
    }

    fn number(&mut self) -> Kw<i64> {
        match self.below(4) {
            0 => Kw::Float(self.pick(&[0.5, -1.25, 2.75])),
            1 => Kw::Bool(self.chance(0.5)),
            _ => Kw::Int(self.int(-3, 3)),
        }
    }

    fn eps(&mut self) -> Kw<i64> {
        Kw::Float(self.pick(&[1e-5, 1e-3, 0.1]))
    }
}

/// A random call of `op`.
fn gen_case(op: SOp, seed: u64) -> Case {
    let g = &mut Gen(seed);
    let mut kw: Vec<(&'static str, Kw<i64>)> = Vec::new();
    use SOp::*;
    let args: Vec<AIn> = match op {
        Arange => {
            let floats = g.chance(0.3);
            let num = |g: &mut Gen, v: i64| {
                if floats && g.chance(0.5) {
                    Kw::Float(v as f64 + 0.5)
                } else {
                    Kw::Int(v)
                }
            };
            let start = g.int(-5, 5);
            let step = if g.chance(0.03) { 0 } else { g.pick(&[1, 1, 2, 3, -1, -2]) };
            let mut end = start + step * g.int(0, 6) + g.int(-1, 1);
            if g.chance(0.05) {
                end = start - 3 * step.signum();
            }
            if g.chance(0.8) {
                kw.push(("start", num(g, start)));
            }
            kw.push(("end", num(g, end)));
            if g.chance(0.8) {
                kw.push(("step", num(g, step)));
            }
            if g.chance(0.4) {
                kw.push(("dtype", g.dtype_name()));
            }
            vec![]
        }
        Full | Zeros | Ones | Empty => {
            let r = g.rank(0, 3);
            let mut size = g.sizes(r);
            if g.chance(0.03) && r > 0 {
                size[0] = -1;
            }
            kw.push(("size", Kw::Ints(size)));
            if op == Full {
                kw.push(("fill_value", g.number()));
            }
            if g.chance(0.5) {
                kw.push(("dtype", g.dtype_name()));
            }
            if op == Empty && g.chance(0.3) {
                let f = g.pick(&["contiguous", "channels_last", "preserve"]);
                kw.push(("memory_format", Kw::Name(f.into())));
            }
            vec![]
        }
        ScalarTensor => {
            kw.push(("s", g.number()));
            if g.chance(0.6) {
                kw.push(("dtype", g.dtype_name()));
            }
            vec![]
        }
        ZerosLike | OnesLike | EmptyLike | FullLike | NewZeros | NewOnes | NewFull => {
            let r = g.rank(0, 4);
            let (d, s) = (g.any_dtype(), g.sizes(r));
            let x = g.tensor(d, s, false);
            if matches!(op, FullLike | NewFull) {
                kw.push(("fill_value", g.number()));
            }
            if matches!(op, NewZeros | NewOnes | NewFull) {
                let r = g.rank(0, 3);
                kw.push(("size", Kw::Ints(g.sizes(r))));
            } else if g.chance(0.5) {
                let f = g.pick(&["contiguous", "channels_last", "preserve"]);
                kw.push(("memory_format", Kw::Name(f.into())));
            }
            if g.chance(0.5) {
                kw.push(("dtype", g.dtype_name()));
            }
            vec![AIn::T(x)]
        }
        Triu | Tril => {
            let r = if g.chance(0.1) { g.rank(0, 1) } else { g.rank(2, 4) };
            let (d, s) = (g.any_dtype(), g.sizes(r));
            if g.chance(0.8) {
                kw.push(("diagonal", Kw::Int(g.int(-4, 4))));
            }
            vec![AIn::T(g.tensor(d, s, false))]
        }
        Cat | Stack => {
            let n = g.int(1, 3) as usize;
            let r = if g.chance(0.05) { 0 } else { g.rank(1, 3) };
            let base = g.sizes(r);
            let dim = if op == Cat { g.dim(r) } else { g.dim(r + 1) };
            let wd = if dim < 0 { dim + r.max(1) as i64 } else { dim } as usize;
            let same = g.chance(0.7);
            let d0 = g.any_dtype();
            let ts = (0..n)
                .map(|_| {
                    let d = if same { d0 } else { g.any_dtype() };
                    let mut s = base.clone();
                    if op == Cat && g.chance(0.1) {
                        s = vec![0];
                    } else if op == Cat && wd < r {
                        s[wd] = g.int(0, 3);
                    }
                    if g.chance(0.04) && !s.is_empty() {
                        let k = g.below(s.len());
                        s[k] += 1;
                    }
                    g.tensor(d, s, false)
                })
                .collect();
            kw.push(("dim", Kw::Int(dim)));
            vec![AIn::L(ts)]
        }
        Repeat => {
            let r = g.rank(0, 3);
            let (d, s) = (g.any_dtype(), g.sizes(r));
            let mut n = r + g.below(3);
            if g.chance(0.05) && r > 0 {
                n = r - 1;
            }
            let reps = (0..n)
                .map(|_| if g.chance(0.15) { 0 } else { g.int(1, 3) })
                .collect();
            kw.push(("repeats", Kw::Ints(reps)));
            vec![AIn::T(g.tensor(d, s, false))]
        }
        Flip => {
            let r = g.rank(0, 4);
            let (d, s) = (g.any_dtype(), g.sizes(r));
            let mut dims: Vec<i64> = (0..r as i64).filter(|_| g.chance(0.5)).collect();
            g.shuffle(&mut dims);
            for x in dims.iter_mut() {
                if g.chance(0.5) {
                    *x -= r as i64;
                }
            }
            if g.chance(0.05) {
                dims.push(g.dim(r));
            }
            kw.push(("dims", Kw::Ints(dims)));
            vec![AIn::T(g.tensor(d, s, false))]
        }
        Roll => {
            let r = g.rank(0, 4);
            let (d, s) = (g.any_dtype(), g.sizes(r));
            if g.chance(0.3) {
                kw.push(("shifts", Kw::Ints(vec![g.int(-7, 7)])));
                if g.chance(0.5) {
                    kw.push(("dims", Kw::Null));
                }
            } else {
                let k = g.int(1, r.max(1) as i64) as usize;
                let dims: Vec<i64> = (0..k).map(|_| g.dim(r)).collect();
                let mut shifts: Vec<i64> = (0..k).map(|_| g.int(-7, 7)).collect();
                if g.chance(0.05) {
                    shifts.push(1);
                }
                kw.push(("shifts", Kw::Ints(shifts)));
                kw.push(("dims", Kw::Ints(dims)));
            }
            vec![AIn::T(g.tensor(d, s, false))]
        }
        Cumsum => {
            let r = g.rank(0, 4);
            let (d, s) = (g.any_dtype(), g.sizes(r));
            kw.push(("dim", Kw::Int(g.dim(r))));
            if g.chance(0.3) {
                kw.push(("dtype", g.dtype_name()));
            }
            vec![AIn::T(g.tensor(d, s, false))]
        }
        IndexSelect => {
            let r = g.rank(0, 3);
            let (d, s) = (g.any_dtype(), g.sizes(r));
            let dim = g.dim(r);
            let bound = if r == 0 { 1 } else { s[dim.rem_euclid(r as i64) as usize] };
            let ir = if g.chance(0.1) { 0 } else if g.chance(0.05) { 2 } else { 1 };
            let isz = (0..ir).map(|_| g.int(0, 4)).collect();
            kw.push(("dim", Kw::Int(dim)));
            vec![AIn::T(g.tensor(d, s, false)), AIn::T(g.index(isz, bound, false))]
        }
        Gather => {
            let r = g.rank(0, 3);
            let (d, s) = (g.any_dtype(), g.sizes(r));
            let dim = g.dim(r);
            let wd = dim.rem_euclid(r.max(1) as i64) as usize;
            let bound = s.get(wd).copied().unwrap_or(1);
            // A 0-d tensor counts as 1-D: a 0-d or 1-D input takes a 0-d or 1-D index.
            let ir = if g.chance(0.05) { r + 1 } else if r <= 1 { g.rank(0, 1) } else { r };
            let isz = (0..ir)
                .map(|k| {
                    let cap = s.get(k).copied().unwrap_or(1);
                    if k == wd {
                        g.int(0, 4)
                    } else if g.chance(0.04) {
                        cap + 1
                    } else {
                        g.int(0, cap)
                    }
                })
                .collect();
            kw.push(("dim", Kw::Int(dim)));
            vec![AIn::T(g.tensor(d, s, false)), AIn::T(g.index(isz, bound, false))]
        }
        Embedding => {
            let wr = if g.chance(0.05) { 1 } else { 2 };
            let ws: Vec<i64> = (0..wr)
                .map(|_| {
                    let lo = if g.chance(0.05) { 0 } else { 1 };
                    g.int(lo, 5)
                })
                .collect();
            let d = if g.chance(0.7) { g.float_dtype() } else { g.any_dtype() };
            let ir = g.rank(0, 2);
            let isz = (0..ir).map(|_| g.int(0, 3)).collect();
            let bound = ws[0];
            vec![AIn::T(g.tensor(d, ws, true)), AIn::T(g.index(isz, bound, false))]
        }
        Index => {
            let r = if g.chance(0.05) { 0 } else { g.rank(1, 3) };
            let (d, s) = (g.any_dtype(), g.sizes(r));
            let dim = g.dim(r);
            let bound = s.get(dim.rem_euclid(r.max(1) as i64) as usize).copied().unwrap_or(1);
            let ir = g.rank(0, 2);
            let isz = (0..ir).map(|_| g.int(0, 3)).collect();
            if g.chance(0.8) {
                kw.push(("dim", Kw::Int(dim)));
            } else {
                kw.push(("dim", Kw::Int(0)));
            }
            let bound = if g.chance(0.8) { bound } else { s.first().copied().unwrap_or(1) };
            vec![AIn::T(g.tensor(d, s, false)), AIn::T(g.index(isz, bound, true))]
        }
        Softmax | LogSoftmax => {
            let r = g.rank(0, 4);
            let (d, s) = (g.float_dtype(), g.sizes(r));
            kw.push(("dim", Kw::Int(g.dim(r))));
            if g.chance(0.2) {
                kw.push(("dtype", Kw::Name(g.pick(&["float32", "float64", "int64"]).into())));
            }
            vec![AIn::T(g.tensor(d, s, true))]
        }
        LayerNorm | RmsNorm => {
            let r = g.rank(1, 4);
            let (d, s) = (g.float_dtype(), g.sizes(r));
            let k = g.int(1, r as i64) as usize;
            let mut shape = s[r - k..].to_vec();
            if g.chance(0.04) {
                shape[0] += 1;
            }
            let x = g.tensor(d, s, true);
            let w = g.maybe_param(d, shape.clone());
            kw.push(("normalized_shape", Kw::Ints(shape.clone())));
            if op == LayerNorm {
                let b = g.maybe_param(d, shape);
                if g.chance(0.7) {
                    kw.push(("eps", g.eps()));
                }
                vec![AIn::T(x), w, b]
            } else {
                if g.chance(0.5) {
                    kw.push(("eps", g.eps()));
                }
                vec![AIn::T(x), w]
            }
        }
        BatchNorm => {
            let r = if g.chance(0.04) { 1 } else { g.rank(2, 4) };
            let (d, s) = (g.float_dtype(), g.sizes(r));
            let c = s.get(1).copied().unwrap_or(1);
            let cs = if g.chance(0.04) { vec![c + 1] } else { vec![c] };
            let x = g.tensor(d, s, true);
            let mean = g.param(d, cs.clone(), -1.0, 1.0);
            let var = g.param(d, cs.clone(), 0.1, 3.0);
            let w = g.maybe_param(d, cs.clone());
            let b = g.maybe_param(d, cs);
            if g.chance(0.05) {
                kw.push(("training", Kw::Bool(true)));
            }
            if g.chance(0.7) {
                kw.push(("eps", g.eps()));
            }
            vec![AIn::T(x), AIn::T(mean), AIn::T(var), w, b]
        }
        GroupNorm => {
            let r = if g.chance(0.04) { 1 } else { g.rank(2, 4) };
            let (d, mut s) = (g.float_dtype(), g.sizes(r));
            let c = g.pick(&[1i64, 2, 3, 4, 6]);
            if r > 1 {
                s[1] = c;
            }
            let divisors: Vec<i64> = (1..=c).filter(|k| c % k == 0).collect();
            let groups = if g.chance(0.08) { g.int(0, 5) } else { g.pick(&divisors) };
            let x = g.tensor(d, s, true);
            let w = g.maybe_param(d, vec![c]);
            let b = g.maybe_param(d, vec![c]);
            kw.push(("num_groups", Kw::Int(groups)));
            if g.chance(0.7) {
                kw.push(("eps", g.eps()));
            }
            vec![AIn::T(x), w, b]
        }
        Sdpa => {
            let nb = g.rank(0, 2);
            let batch: Vec<i64> = (0..nb).map(|_| g.int(1, 3)).collect();
            let small = |g: &mut Gen| if g.chance(0.08) { 0 } else { g.int(1, 4) };
            let (l, s, e, ev) = (small(g), small(g), small(g), small(g));
            let d = g.float_dtype();
            // Each operand's batch dims: a suffix of `batch`, some of them 1 (broadcast).
            let bdims = |g: &mut Gen| -> Vec<i64> {
                let keep = if g.chance(0.7) { nb } else { g.rank(0, nb) };
                batch[nb - keep..]
                    .iter()
                    .map(|&b| if g.chance(0.2) { 1 } else { b })
                    .collect()
            };
            let mut qs = bdims(g);
            qs.extend([l, e]);
            let mut ks = bdims(g);
            ks.extend([s, if g.chance(0.03) { e + 1 } else { e }]);
            let mut vs = bdims(g);
            vs.extend([s, ev]);
            let q = g.tensor(d, qs, true);
            let kd = if g.chance(0.03) { g.any_dtype() } else { d };
            let k = g.tensor(kd, ks, true);
            let v = g.tensor(d, vs, true);
            let mask = if g.chance(0.4) {
                AIn::Absent
            } else {
                let mut ms = bdims(g);
                ms.extend([if g.chance(0.2) { 1 } else { l }, if g.chance(0.1) { 1 } else { s }]);
                if g.chance(0.5) {
                    AIn::T(g.tensor(DType::Bool, ms, false))
                } else {
                    let n = numel(&ms);
                    let vals = (0..n)
                        .map(|_| if g.chance(0.2) { f64::NEG_INFINITY } else { g.float(-3.0, 3.0) })
                        .collect();
                    let md = if g.chance(0.05) { g.any_dtype() } else { d };
                    AIn::T(g.with_values(md, ms, vals))
                }
            };
            let masked = !matches!(mask, AIn::Absent);
            if g.chance(if masked { 0.03 } else { 0.3 }) {
                kw.push(("is_causal", Kw::Bool(true)));
            }
            if g.chance(0.4) {
                kw.push(("scale", Kw::Float(g.pick(&[0.5, 1.0, 0.125, 2.0]))));
            }
            vec![AIn::T(q), AIn::T(k), AIn::T(v), mask]
        }
        Split | SplitWithSizes | Chunk | Unbind => {
            let r = if g.chance(0.05) { 0 } else { g.rank(1, 3) };
            let (d, s) = (g.any_dtype(), g.sizes(r));
            let dim = g.dim(r);
            let size = s.get(dim.rem_euclid(r.max(1) as i64) as usize).copied().unwrap_or(0);
            match op {
                Split => kw.push(("split_size", Kw::Int(if g.chance(0.05) { 0 } else { g.int(1, 4) }))),
                SplitWithSizes => {
                    let mut left = size;
                    let mut parts = Vec::new();
                    while left > 0 {
                        let p = g.int(0, left);
                        parts.push(p);
                        left -= p;
                    }
                    if parts.is_empty() || g.chance(0.2) {
                        parts.push(0);
                    }
                    if g.chance(0.05) {
                        parts[0] += 1;
                    }
                    kw.push(("split_sizes", Kw::Ints(parts)));
                }
                Chunk => kw.push(("chunks", Kw::Int(if g.chance(0.05) { 0 } else { g.int(1, 5) }))),
                _ => {}
            }
            if op == Unbind || g.chance(0.8) {
                kw.push(("dim", Kw::Int(dim)));
            }
            vec![AIn::T(g.tensor(d, s, false))]
        }
    };
    let threads = g.int(1, 3) as usize;
    let grain = g.pick(&[1usize, 5, 32768]);
    Case {
        op,
        args,
        kwargs: kw,
        threads,
        grain,
    }
}

// ---------------------------------------------------------------------------------------
// The properties: one per op, `PROPTEST_CASES` cases (256 by default: the whole file
// runs in well under a second at that count).

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(256)
}

macro_rules! differential {
    ($($name:ident: $op:ident,)*) => {
        /// Every op the properties below cover, in registry order.
        const TESTED: &[SOp] = &[$(SOp::$op),*];

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(cases()))]
            $(
                #[test]
                fn $name(seed in any::<u64>()) {
                    let case = gen_case(SOp::$op, seed);
                    if let Err(e) = check(&case) {
                        return Err(TestCaseError::fail(format!("{e}\ncase: {case:#?}")));
                    }
                }
            )*
        }
    };
}

differential! {
    arange: Arange,
    full: Full,
    zeros: Zeros,
    ones: Ones,
    empty: Empty,
    scalar_tensor: ScalarTensor,
    zeros_like: ZerosLike,
    ones_like: OnesLike,
    empty_like: EmptyLike,
    full_like: FullLike,
    new_zeros: NewZeros,
    new_ones: NewOnes,
    new_full: NewFull,
    triu: Triu,
    tril: Tril,
    cat: Cat,
    stack: Stack,
    repeat: Repeat,
    flip: Flip,
    roll: Roll,
    cumsum: Cumsum,
    index_select: IndexSelect,
    gather: Gather,
    embedding: Embedding,
    index: Index,
    softmax: Softmax,
    log_softmax: LogSoftmax,
    layer_norm: LayerNorm,
    rms_norm: RmsNorm,
    batch_norm: BatchNorm,
    group_norm: GroupNorm,
    scaled_dot_product_attention: Sdpa,
    split: Split,
    split_with_sizes: SplitWithSizes,
    chunk: Chunk,
    unbind: Unbind,
}

#[test]
fn every_registry_op_has_a_property() {
    let all: Vec<SOp> = STRUCTURED.iter().map(|d| d.op).collect();
    assert_eq!(TESTED, all.as_slice());
}

/// The generator reaches both outcomes for every op: enough successful calls that the
/// value comparisons mean something, and (where the op can fail) some rejected ones.
#[test]
fn generated_cases_mostly_run() {
    for d in STRUCTURED {
        let ok = (0..64u64)
            .filter(|&s| evaluate(&gen_case(d.op, s)).reference.is_ok())
            .count();
        assert!(ok >= 24, "{}: only {ok} of 64 generated calls run", d.name);
    }
}

// ---------------------------------------------------------------------------------------
// Deterministic regressions where a kernel is most likely wrong

fn t(dtype: DType, sizes: &[i64], vals: &[f64]) -> TIn {
    TIn {
        dtype,
        sizes: sizes.to_vec(),
        vals: vals.to_vec(),
        lay: Lay::plain(sizes.len()),
    }
}

fn permuted(mut x: TIn, perm: &[usize]) -> TIn {
    x.lay.perm = perm.to_vec();
    x
}

fn iota(n: usize) -> Vec<f64> {
    (0..n).map(|v| v as f64).collect()
}

fn case(op: SOp, args: Vec<AIn>, kwargs: Vec<(&'static str, Kw<i64>)>) -> Case {
    Case {
        op,
        args,
        kwargs,
        threads: 2,
        grain: 1,
    }
}

/// Checks `c` and returns the kernel's values (row-major) of its results.
fn checked(c: &Case) -> Vec<Vec<Scalar>> {
    if let Err(e) = check(c) {
        panic!("{e}\ncase: {c:#?}");
    }
    evaluate(c).kernel.unwrap().iter().map(read).collect()
}

fn ints(v: &[i64]) -> Vec<Scalar> {
    v.iter().map(|&i| Scalar::Int(i)).collect()
}

fn floats(v: &[Scalar]) -> Vec<f64> {
    v.iter()
        .map(|s| match s {
            Scalar::Float(f) => *f,
            other => panic!("not a float: {other:?}"),
        })
        .collect()
}

#[test]
fn gather_with_an_index_smaller_than_the_input_off_dim() {
    // x = [[0..5], [5..10], [10..15]] (3x5), index 2x2 along dim 1 and 2x3 along dim 0.
    let x = t(DType::I64, &[3, 5], &iota(15));
    let idx = t(DType::I64, &[2, 2], &[4., 0., 1., 3.]);
    let r = checked(&case(SOp::Gather, vec![AIn::T(x.clone()), AIn::T(idx)], vec![("dim", Kw::Int(1))]));
    assert_eq!(r[0], ints(&[4, 0, 6, 8]));
    let idx = t(DType::I32, &[2, 3], &[2., 0., 1., 1., 2., 0.]);
    let r = checked(&case(
        SOp::Gather,
        vec![AIn::T(permuted(x, &[1, 0])), AIn::T(idx)],
        vec![("dim", Kw::Int(-2))],
    ));
    assert_eq!(r[0], ints(&[10, 1, 7, 5, 11, 2]));
}

#[test]
fn index_with_a_2d_index_and_negative_values() {
    let x = t(DType::F32, &[2, 4], &iota(8));
    let idx = t(DType::I64, &[2, 2], &[-1., 0., 2., -4.]);
    let r = checked(&case(SOp::Index, vec![AIn::T(x), AIn::T(idx)], vec![("dim", Kw::Int(1))]));
    assert_eq!(floats(&r[0]), [3., 0., 2., 0., 7., 4., 6., 4.]);
    let x = t(DType::I32, &[3, 2], &iota(6));
    let idx = t(DType::I32, &[2, 1], &[-3., 2.]);
    let r = checked(&case(SOp::Index, vec![AIn::T(x), AIn::T(idx)], vec![]));
    assert_eq!(r[0], ints(&[0, 1, 4, 5]));
}

#[test]
fn roll_over_two_dims_and_over_the_flattened_tensor() {
    let x = t(DType::I64, &[3, 4], &iota(12));
    let r = checked(&case(
        SOp::Roll,
        vec![AIn::T(x.clone())],
        vec![("shifts", Kw::Ints(vec![1, -2])), ("dims", Kw::Ints(vec![0, 1]))],
    ));
    assert_eq!(r[0], ints(&[10, 11, 8, 9, 2, 3, 0, 1, 6, 7, 4, 5]));
    // The flattened tensor of a transposed input: its logical order rolled by 5.
    let xt = permuted(t(DType::I64, &[3, 4], &iota(12)), &[1, 0]);
    let r = checked(&case(SOp::Roll, vec![AIn::T(xt)], vec![("shifts", Kw::Ints(vec![5]))]));
    assert_eq!(r[0], ints(&[7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 6]));
    // A dim given twice rolls by the sum of its shifts.
    let r = checked(&case(
        SOp::Roll,
        vec![AIn::T(x)],
        vec![("shifts", Kw::Ints(vec![1, 2])), ("dims", Kw::Ints(vec![-1, 1]))],
    ));
    assert_eq!(r[0], ints(&[1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8]));
}

#[test]
fn stack_at_the_last_dim() {
    let a = t(DType::I64, &[2, 3], &iota(6));
    let b = permuted(t(DType::I64, &[2, 3], &[10., 11., 12., 13., 14., 15.]), &[1, 0]);
    let c = t(DType::I32, &[2, 3], &[20., 21., 22., 23., 24., 25.]);
    let r = checked(&case(SOp::Stack, vec![AIn::L(vec![a, b, c])], vec![("dim", Kw::Int(-1))]));
    assert_eq!(
        r[0],
        ints(&[0, 10, 20, 1, 11, 21, 2, 12, 22, 3, 13, 23, 4, 14, 24, 5, 15, 25])
    );
}

#[test]
fn repeat_with_more_repeats_than_dims() {
    let x = permuted(t(DType::U8, &[2, 2], &[1., 2., 3., 4.]), &[1, 0]);
    let r = checked(&case(SOp::Repeat, vec![AIn::T(x)], vec![("repeats", Kw::Ints(vec![2, 1, 2]))]));
    assert_eq!(r[0], ints(&[1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4]));
}

#[test]
fn group_norm_with_several_groups() {
    let n = 2 * 6 * 2;
    let vals: Vec<f64> = (0..n).map(|v| ((v * 7) % 11) as f64 - 5.0).collect();
    let x = t(DType::F64, &[2, 6, 2], &vals);
    let w = t(DType::F64, &[6], &[1., 2., 0.5, -1., 3., 1.5]);
    let b = t(DType::F64, &[6], &[0., 1., -1., 0.5, 2., -2.]);
    let r = checked(&case(
        SOp::GroupNorm,
        vec![AIn::T(x), AIn::T(w.clone()), AIn::T(b.clone())],
        vec![("num_groups", Kw::Int(3)), ("eps", Kw::Float(1e-5))],
    ));
    // Spot check: sample 1, group 2 (channels 4 and 5).
    let got = floats(&r[0]);
    let row: Vec<f64> = (0..4).map(|k| vals[12 + 8 + k]).collect();
    let mean = row.iter().sum::<f64>() / 4.0;
    let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 4.0;
    for k in 0..4 {
        let c = 4 + k / 2;
        let want = (row[k] - mean) / (var + 1e-5).sqrt() * w.vals[c] + b.vals[c];
        assert!((got[12 + 8 + k] - want).abs() < 1e-12, "{k}: {} vs {want}", got[20 + k]);
    }
    // f32, channels-last-like input, 4-D.
    let x = permuted(t(DType::F32, &[2, 4, 2, 3], &iota(48)), &[0, 2, 3, 1]);
    checked(&case(SOp::GroupNorm, vec![AIn::T(x), AIn::Absent, AIn::Absent], vec![("num_groups", Kw::Int(2))]));
}

#[test]
fn batch_norm_on_channels_last_input() {
    let vals: Vec<f64> = (0..24).map(|v| (v % 5) as f64 - 2.0).collect();
    let x = permuted(t(DType::F32, &[2, 3, 2, 2], &vals), &[0, 2, 3, 1]);
    let mean = t(DType::F32, &[3], &[0.5, -1., 0.]);
    let var = t(DType::F32, &[3], &[1., 4., 0.25]);
    let w = t(DType::F32, &[3], &[2., 1., -1.]);
    let b = t(DType::F32, &[3], &[0., 1., 0.5]);
    let c = case(
        SOp::BatchNorm,
        vec![AIn::T(x), AIn::T(mean.clone()), AIn::T(var.clone()), AIn::T(w.clone()), AIn::T(b.clone())],
        vec![],
    );
    let r = checked(&c);
    let out = evaluate(&c).kernel.unwrap();
    assert_eq!(out[0].strides(), [12, 1, 6, 3], "channels_last in, channels_last out");
    let got = floats(&r[0]);
    for (l, &v) in vals.iter().enumerate() {
        let ch = (l / 4) % 3;
        let want = (v - mean.vals[ch]) / (var.vals[ch] + 1e-5).sqrt() * w.vals[ch] + b.vals[ch];
        assert!((got[l] - want).abs() <= 1e-5 * (1.0 + want.abs()), "{l}: {} vs {want}", got[l]);
    }
}

#[test]
fn softmax_of_a_row_of_all_minus_infinity() {
    // PyTorch: softmax and log_softmax of an all -inf row are NaN (exp(-inf - -inf)).
    let inf = f64::NEG_INFINITY;
    for op in [SOp::Softmax, SOp::LogSoftmax] {
        for dtype in [DType::F32, DType::F64] {
            let x = t(dtype, &[2, 3], &[inf, inf, inf, 0., 1., inf]);
            let r = checked(&case(op, vec![AIn::T(x)], vec![("dim", Kw::Int(1))]));
            let got = floats(&r[0]);
            assert!(got[..3].iter().all(|v| v.is_nan()), "{op} {dtype}: {got:?}");
            assert!(got[3..5].iter().all(|v| v.is_finite()) && (got[5] == 0.0 || got[5] == inf));
        }
    }
}

#[test]
fn attention_with_masks_causal_and_broadcast_batch() {
    let f = |sizes: &[i64], seed: u64| {
        let mut g = Gen(seed);
        let n = numel(sizes);
        t(DType::F32, sizes, &(0..n).map(|_| g.float(-2.0, 2.0)).collect::<Vec<_>>())
    };
    let (q, k, v) = (f(&[2, 1, 3, 4], 1), f(&[1, 2, 5, 4], 2), f(&[2, 2, 5, 3], 3));
    // A bool mask with a fully masked row (zeros, PyTorch's safe softmax).
    let bm: Vec<f64> = (0..15).map(|i| if i < 5 { 0. } else { ((i * 3) % 4 != 0) as u8 as f64 }).collect();
    let bool_mask = t(DType::Bool, &[3, 5], &bm);
    let r = checked(&case(
        SOp::Sdpa,
        vec![AIn::T(q.clone()), AIn::T(k.clone()), AIn::T(v.clone()), AIn::T(bool_mask)],
        vec![],
    ));
    assert_eq!(r[0].len(), 2 * 2 * 3 * 3);
    assert!(floats(&r[0])[..3].iter().all(|&x| x == 0.0), "the fully masked row is zeros");
    // A float mask broadcast over the heads, with an explicit scale.
    let fm = f(&[2, 1, 3, 5], 4);
    checked(&case(
        SOp::Sdpa,
        vec![AIn::T(q.clone()), AIn::T(k.clone()), AIn::T(v.clone()), AIn::T(fm)],
        vec![("scale", Kw::Float(0.3))],
    ));
    // Causal, transposed (non-flash) layouts.
    checked(&case(
        SOp::Sdpa,
        vec![AIn::T(permuted(q, &[0, 1, 3, 2])), AIn::T(k), AIn::T(permuted(v, &[1, 0, 2, 3])), AIn::Absent],
        vec![("is_causal", Kw::Bool(true))],
    ));
    // 3-D query against 4-D key/value: one more batch dim broadcast in.
    let (q3, k4, v4) = (f(&[3, 2, 4], 5), f(&[2, 1, 2, 4], 6), f(&[1, 3, 2, 2], 7));
    checked(&case(SOp::Sdpa, vec![AIn::T(q3), AIn::T(k4), AIn::T(v4), AIn::Absent], vec![]));
}

// ---------------------------------------------------------------------------------------
// Mismatches the properties found, now fixed in the kernels (PyTorch's answers, which the
// reference gave): a 0-d `gather` index on a 1-D input read `x[0]`; `softmax`/`log_softmax`
// of a row holding `+inf` replaced the non-finite max by 0 (PyTorch: the row is NaN);
// attention over an empty head dim with `scale=inf` gave zeros (PyTorch's math path: the
// scores of an empty head dim are 0, the softmax uniform, the output the mean of v's rows).

/// The cases above agree now.
#[test]
fn found_mismatches_now_agree() {
    let found: Vec<(&str, Case)> = vec![
        (
            "gather of a 1-D input with a 0-d index reads x[index]",
            case(
                SOp::Gather,
                vec![AIn::T(t(DType::I64, &[5], &[1., 2., 3., 4., 5.])), AIn::T(t(DType::I64, &[], &[3.]))],
                vec![("dim", Kw::Int(0))],
            ),
        ),
        (
            "softmax of a row holding +inf",
            case(SOp::Softmax, vec![AIn::T(t(DType::F32, &[3], &[f64::INFINITY, 0., 1.]))], vec![("dim", Kw::Int(0))]),
        ),
        (
            "log_softmax of a row holding +inf",
            case(SOp::LogSoftmax, vec![AIn::T(t(DType::F64, &[3], &[f64::INFINITY, 0., 1.]))], vec![("dim", Kw::Int(0))]),
        ),
        (
            "attention with an empty head dim and an infinite scale",
            case(
                SOp::Sdpa,
                vec![
                    AIn::T(t(DType::F32, &[2, 0], &[])),
                    AIn::T(t(DType::F32, &[3, 0], &[])),
                    AIn::T(t(DType::F32, &[3, 2], &iota(6))),
                    AIn::Absent,
                ],
                vec![("scale", Kw::Float(f64::INFINITY))],
            ),
        ),
    ];
    for (what, c) in &found {
        assert!(check(c).is_ok(), "{what}: {:?}", check(c).err());
    }
}
