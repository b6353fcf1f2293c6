//! Views (`symstride::view`): random chains of movement ops on random strided tensors.
//!
//! * symbolic (every base size, stride, the offset and the storage size a symbol) evaluated
//!   at the hints is the concrete answer, error categories included;
//! * at any binding the recorded guards admit, the symbolic answer evaluated there is a
//!   fresh concrete computation at that binding;
//! * every op addresses exactly the elements a naive multi-index walk of its definition
//!   does (`permute` moves indices, `slice` scales them, `reshape` keeps row-major order...).

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use symstride::sym::{Bindings, ShapeEnv, SymInt, SymbolSpec};
use symstride::tensor::{Storage, Tensor};
use symstride::view::{SqueezeDims, View, ViewChain, ViewOp};
use symstride::Result;

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A random strided base tensor.
#[derive(Clone, Debug)]
struct Base {
    sizes: Vec<i64>,
    strides: Vec<i64>,
    offset: i64,
    storage: i64,
}

fn base_strategy() -> impl Strategy<Value = Base> {
    (0usize..=4)
        .prop_flat_map(|rank| {
            (
                prop::collection::vec(
                    prop_oneof![1 => Just(0i64), 2 => Just(1), 6 => 2i64..=5],
                    rank,
                ),
                prop::collection::vec(0i64..=12, rank),
                any::<bool>(),
                0i64..=6,
                0i64..=3,
            )
        })
        .prop_map(|(sizes, mut strides, contiguous, offset, extra)| {
            if contiguous {
                strides = View::<i64>::contiguous(sizes.clone())
                    .unwrap()
                    .strides()
                    .to_vec();
            }
            let extent: i64 = sizes
                .iter()
                .zip(&strides)
                .map(|(n, s)| (n - 1).max(0) * s)
                .sum();
            Base {
                sizes,
                strides,
                offset,
                storage: offset + extent + 1 + extra,
            }
        })
}

/// Picks a number in `lo..=hi` from a seed (deterministic).
fn pick(seed: &mut u64, lo: i64, hi: i64) -> i64 {
    if hi < lo {
        return lo;
    }
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    lo + ((*seed >> 33) % ((hi - lo + 1) as u64)) as i64
}

/// A dim argument: usually valid (possibly negative), sometimes out of range.
fn dim_arg(seed: &mut u64, rank: usize) -> i64 {
    let n = rank.max(1) as i64;
    match pick(seed, 0, 29) {
        0 => pick(seed, n, n + 1),
        1 => pick(seed, -n - 2, -n - 1),
        _ => pick(seed, -n, n - 1),
    }
}

/// A shape with the same number of elements as `sizes` (split, merge, insert 1, -1), or
/// occasionally a wrong one.
fn reshape_arg(seed: &mut u64, sizes: &[i64]) -> Vec<i64> {
    let mut shape = sizes.to_vec();
    for _ in 0..pick(seed, 1, 3) {
        match pick(seed, 0, 11) {
            0 if shape.len() >= 2 => {
                let i = pick(seed, 0, shape.len() as i64 - 2) as usize;
                let m = shape[i] * shape[i + 1];
                shape.splice(i..i + 2, [m]);
            }
            1 if !shape.is_empty() => {
                let i = pick(seed, 0, shape.len() as i64 - 1) as usize;
                let n = shape[i];
                let divs: Vec<i64> = (1..=n.max(1)).filter(|d| n % d == 0).collect();
                let d = divs[pick(seed, 0, divs.len() as i64 - 1) as usize];
                if n > 0 {
                    shape.splice(i..=i, [d, n / d]);
                }
            }
            2 => {
                let i = pick(seed, 0, shape.len() as i64) as usize;
                shape.insert(i, 1);
            }
            3 if shape.len() > 1 => {
                shape = vec![shape.iter().product()];
            }
            4 if pick(seed, 0, 2) == 0 => {
                let i = pick(seed, 0, shape.len() as i64 - 1).max(0) as usize;
                if i < shape.len() {
                    shape[i] += pick(seed, -1, 1); // occasionally wrong
                }
            }
            _ => {}
        }
    }
    if !shape.is_empty() && pick(seed, 0, 2) == 0 {
        let i = pick(seed, 0, shape.len() as i64 - 1) as usize;
        shape[i] = -1;
    }
    shape
}

/// A random op for a view of these sizes (arguments mostly valid, sometimes not).
fn random_op(mut seed: u64, sizes: &[i64]) -> ViewOp {
    let s = &mut seed;
    let n = sizes.len();
    let size_at = |d: i64| -> i64 {
        let w = if d < 0 { d + n as i64 } else { d };
        if (0..n as i64).contains(&w) {
            sizes[w as usize]
        } else {
            1
        }
    };
    match pick(s, 0, 18) {
        0 => {
            let mut perm: Vec<i64> = (0..n as i64).collect();
            for i in (1..n).rev() {
                perm.swap(i, pick(s, 0, i as i64) as usize);
            }
            if n > 0 && pick(s, 0, 3) == 0 {
                perm[0] -= n as i64;
            }
            ViewOp::Permute(perm)
        }
        1 => ViewOp::Transpose(dim_arg(s, n), dim_arg(s, n)),
        2 if n <= 2 => ViewOp::T,
        2 => ViewOp::Transpose(dim_arg(s, n), dim_arg(s, n)),
        3 => {
            let mut t: Vec<i64> = sizes
                .iter()
                .map(|&x| match (x, pick(s, 0, 3)) {
                    (1, 0) => pick(s, 2, 4),
                    (_, 1) => -1,
                    (x, _) => x,
                })
                .collect();
            for _ in 0..pick(s, 0, 2) {
                t.insert(0, pick(s, 1, 3));
            }
            ViewOp::Expand(t)
        }
        4 => {
            let d = dim_arg(s, n);
            let m = size_at(d);
            let bound = |s: &mut u64| match pick(s, 0, 3) {
                0 => None,
                _ => Some(pick(s, -m - 2, m + 2)),
            };
            ViewOp::Slice {
                dim: d,
                start: bound(s),
                end: bound(s),
                step: pick(s, 1, 3),
            }
        }
        5 => {
            let d = dim_arg(s, n);
            let m = size_at(d);
            ViewOp::Narrow(d, pick(s, -m, m), pick(s, 0, m))
        }
        6 => {
            let d = dim_arg(s, n);
            let m = size_at(d);
            ViewOp::Select(d, pick(s, -m - 1, m))
        }
        7 => ViewOp::Unsqueeze(dim_arg(s, n + 1)),
        8 => ViewOp::Squeeze(match pick(s, 0, 2) {
            0 => SqueezeDims::All,
            1 => SqueezeDims::One(dim_arg(s, n)),
            _ => SqueezeDims::Many((0..pick(s, 0, 2)).map(|_| dim_arg(s, n)).collect()),
        }),
        9 => ViewOp::Flatten(dim_arg(s, n), dim_arg(s, n)),
        10 => {
            let d = dim_arg(s, n);
            let m = size_at(d);
            ViewOp::Unflatten(d, reshape_arg(s, &[m]))
        }
        11 => ViewOp::Movedim(dim_arg(s, n), dim_arg(s, n)),
        12 => ViewOp::View(reshape_arg(s, sizes)),
        13 | 17 | 18 => ViewOp::Reshape(reshape_arg(s, sizes)),
        14 => {
            let k = pick(s, 0, 3) as usize;
            let sz = (0..k).map(|_| pick(s, 0, 3)).collect();
            let st = (0..k).map(|_| pick(s, 0, 2)).collect();
            ViewOp::AsStrided(sz, st, pick(s, 0, 4))
        }
        15 => ViewOp::Diagonal(pick(s, -3, 3), dim_arg(s, n), dim_arg(s, n)),
        16 => {
            let d = dim_arg(s, n);
            ViewOp::Unfold(d, pick(s, 0, size_at(d) + 1), pick(s, 0, 3))
        }
        _ => unreachable!(),
    }
}

/// The ops of a chain, generated from the concrete views along the way (so later ops fit
/// the shapes earlier ones produced); generation stops at the first error.
fn ops_for(base: &Base, seeds: &[u64]) -> Vec<ViewOp> {
    let mut chain = concrete_chain(base);
    let mut ops = Vec::new();
    for &seed in seeds {
        let op = random_op(seed, chain.view.sizes());
        let ok = chain.apply(&op).is_ok();
        ops.push(op);
        if !ok {
            break;
        }
    }
    ops
}

fn concrete_chain(b: &Base) -> ViewChain<i64> {
    let view = View::new(b.sizes.clone(), b.strides.clone(), b.offset).unwrap();
    ViewChain::new(view, b.storage)
}

/// What a chain answers: `(sizes, strides, offset, aliases)` or an error category.
type Answer = std::result::Result<(Vec<i64>, Vec<i64>, i64, bool), &'static str>;

fn run_concrete(b: &Base, ops: &[ViewOp]) -> Answer {
    let mut chain = concrete_chain(b);
    for op in ops {
        chain.apply(op).map_err(|e| e.category())?;
    }
    let (sizes, strides, offset) = chain.view.clone().into_parts();
    Ok((sizes, strides, offset, chain.aliases))
}

/// Runs the chain on symbols; returns the environment and the symbolic result.
fn run_symbolic(
    b: &Base,
    ops: &[ViewOp],
) -> (
    ShapeEnv,
    std::result::Result<ViewChain<SymInt>, &'static str>,
) {
    let env = ShapeEnv::default();
    let spec = SymbolSpec::default();
    let sym = |name: String, v: i64| env.create_symbol(&name, v, spec).unwrap();
    let sizes = env.create_symbols("s", &b.sizes, spec).unwrap();
    let strides = env.create_symbols("t", &b.strides, spec).unwrap();
    let view = View::new(sizes, strides, sym("o".into(), b.offset)).unwrap();
    let mut chain = ViewChain::new(view, sym("n".into(), b.storage));
    for op in ops {
        if let Err(e) = chain.apply(op) {
            return (env, Err(e.category()));
        }
    }
    (env, Ok(chain))
}

fn eval_chain(chain: &ViewChain<SymInt>, b: &Bindings) -> Result<Answer> {
    let ev = |v: &[SymInt]| v.iter().map(|x| x.eval(b)).collect::<Result<Vec<_>>>();
    Ok(Ok((
        ev(chain.view.sizes())?,
        ev(chain.view.strides())?,
        chain.view.offset().eval(b)?,
        chain.aliases,
    )))
}

/// The base at a binding of its symbols.
fn base_at(b: &Base, bind: &Bindings) -> Base {
    let get = |name: String| bind.get(&name).unwrap();
    Base {
        sizes: (0..b.sizes.len()).map(|d| get(format!("s{d}"))).collect(),
        strides: (0..b.strides.len()).map(|d| get(format!("t{d}"))).collect(),
        offset: get("o".into()),
        storage: get("n".into()),
    }
}

/// A binding near the hints: each symbol keeps its hint or takes a small random value.
fn perturb(env: &ShapeEnv, mut seed: u64) -> Bindings {
    let mut b = env.hints();
    for name in env.symbol_names() {
        if pick(&mut seed, 0, 1) == 0 {
            let hi = if name.starts_with('s') { 5 } else { 14 };
            b.insert(&name, pick(&mut seed, 0, hi));
        }
    }
    b
}

/// Row-major multi-indices of a shape.
fn indices(sizes: &[i64]) -> Vec<Vec<i64>> {
    let mut out = vec![vec![]];
    for &n in sizes {
        out = out
            .into_iter()
            .flat_map(|p| {
                (0..n).map(move |i| {
                    let mut q = p.clone();
                    q.push(i);
                    q
                })
            })
            .collect();
    }
    out
}

fn addr(v: &View<i64>, idx: &[i64]) -> i64 {
    v.offset() + idx.iter().zip(v.strides()).map(|(i, s)| i * s).sum::<i64>()
}

fn wrap(d: i64, n: usize) -> usize {
    let n = n.max(1) as i64;
    (if d < 0 { d + n } else { d }) as usize
}

/// The storage element a naive reading of the op's definition puts at each row-major
/// output index, from the input view `x` (only for ops that succeeded).
fn reference(op: &ViewOp, x: &View<i64>, out_sizes: &[i64]) -> Vec<i64> {
    let n = x.dim();
    let row_major: Vec<i64> = indices(x.sizes()).iter().map(|i| addr(x, i)).collect();
    let map = |f: &dyn Fn(&[i64]) -> Vec<i64>| -> Vec<i64> {
        indices(out_sizes).iter().map(|o| addr(x, &f(o))).collect()
    };
    let perm_of = |perm: Vec<usize>| {
        move |o: &[i64]| {
            let mut i = vec![0; o.len()];
            for (k, &p) in perm.iter().enumerate() {
                i[p] = o[k];
            }
            i
        }
    };
    match op {
        ViewOp::Permute(d) => map(&perm_of(d.iter().map(|&d| wrap(d, n)).collect())),
        ViewOp::Transpose(a, b) => {
            let mut p: Vec<usize> = (0..n).collect();
            if n > 0 {
                p.swap(wrap(*a, n), wrap(*b, n));
            }
            map(&perm_of(p))
        }
        ViewOp::T => map(&|o: &[i64]| o.iter().rev().cloned().collect()),
        ViewOp::Movedim(s, d) => {
            let mut p: Vec<usize> = (0..n).filter(|&k| k != wrap(*s, n)).collect();
            if n > 0 {
                p.insert(wrap(*d, n), wrap(*s, n));
            }
            map(&perm_of(p))
        }
        ViewOp::Expand(_) => map(&|o: &[i64]| {
            let lead = o.len() - n;
            (0..n)
                .map(|d| if x.sizes()[d] == 1 { 0 } else { o[lead + d] })
                .collect()
        }),
        ViewOp::Slice {
            dim, start, step, ..
        } => {
            let d = wrap(*dim, n);
            let m = x.sizes()[d];
            let s0 = start
                .map_or(0, |s| if s < 0 { s + m } else { s })
                .clamp(0, m);
            map(&|o: &[i64]| {
                let mut i = o.to_vec();
                i[d] = s0 + o[d] * step;
                i
            })
        }
        ViewOp::Narrow(dim, start, _) => {
            let d = wrap(*dim, n);
            let s0 = if *start < 0 {
                start + x.sizes()[d]
            } else {
                *start
            };
            map(&|o: &[i64]| {
                let mut i = o.to_vec();
                i[d] += s0;
                i
            })
        }
        ViewOp::Select(dim, index) => {
            let d = wrap(*dim, n);
            let k = if *index < 0 {
                index + x.sizes()[d]
            } else {
                *index
            };
            map(&|o: &[i64]| {
                let mut i = o.to_vec();
                i.insert(d, k);
                i
            })
        }
        ViewOp::Unsqueeze(dim) => {
            let d = wrap(*dim, n + 1);
            map(&|o: &[i64]| {
                let mut i = o.to_vec();
                i.remove(d);
                i
            })
        }
        ViewOp::Squeeze(_) => {
            // The dropped dims all have size 1: the row-major order is unchanged.
            row_major
        }
        ViewOp::Diagonal(off, a, b) => {
            let (a, b) = (wrap(*a, n), wrap(*b, n));
            map(&|o: &[i64]| {
                let k = o[o.len() - 1];
                let mut rest = o[..o.len() - 1].iter();
                (0..n)
                    .map(|d| {
                        if d == a {
                            k + (-off).max(0)
                        } else if d == b {
                            k + (*off).max(0)
                        } else {
                            *rest.next().unwrap()
                        }
                    })
                    .collect()
            })
        }
        ViewOp::Unfold(dim, _, step) => {
            let d = wrap(*dim, n);
            map(&|o: &[i64]| {
                let mut i = o[..o.len() - 1].to_vec();
                if n > 0 {
                    i[d] = o[d] * step + o[o.len() - 1];
                }
                i
            })
        }
        // view/reshape/flatten/unflatten keep row-major order (a copy keeps the values).
        ViewOp::View(_) | ViewOp::Reshape(_) | ViewOp::Flatten(..) | ViewOp::Unflatten(..) => {
            row_major
        }
        ViewOp::AsStrided(..) => unreachable!("as_strided is its own definition"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(512), ..ProptestConfig::default() })]

    /// Symbolic at the hints is concrete, and so is symbolic at every admitted binding.
    #[test]
    fn symbolic_views_specialize_to_concrete_views(
        base in base_strategy(),
        seeds in prop::collection::vec(any::<u64>(), 1..5),
        bindings in prop::collection::vec(any::<u64>(), 6),
    ) {
        let ops = ops_for(&base, &seeds);
        let concrete = run_concrete(&base, &ops);
        let (env, symbolic) = run_symbolic(&base, &ops);
        let guards = env.guard_set();
        let hints = env.hints();
        prop_assert!(guards.eval(&hints).unwrap().is_pass(), "guards fail at the hints");
        let at = |b: &Bindings| match &symbolic {
            Ok(chain) => eval_chain(chain, b).unwrap(),
            Err(cat) => Err(*cat),
        };
        prop_assert_eq!(&at(&hints), &concrete, "ops {:?}", ops);
        for seed in bindings {
            let b = perturb(&env, seed);
            if !guards.eval(&b).unwrap().is_pass() {
                continue;
            }
            let fresh = run_concrete(&base_at(&base, &b), &ops);
            prop_assert_eq!(&at(&b), &fresh, "ops {:?} at {:?}, guards {:?}", ops, b, guards.guards);
        }
    }

    /// Each successful op addresses exactly the elements its naive definition does.
    #[test]
    fn views_address_what_a_naive_walk_does(
        base in base_strategy(),
        seeds in prop::collection::vec(any::<u64>(), 1..5),
    ) {
        let ops = ops_for(&base, &seeds);
        let mut chain = concrete_chain(&base);
        for op in &ops {
            let before = chain.view.clone();
            if chain.apply(op).is_err() {
                break;
            }
            if matches!(op, ViewOp::AsStrided(..)) {
                continue;
            }
            let out = &chain.view;
            let got: Vec<i64> = indices(out.sizes()).iter().map(|i| addr(out, i)).collect();
            let copied = match op {
                ViewOp::Reshape(shape) => before.reshape(shape).unwrap().copied,
                ViewOp::Flatten(a, b) => before.flatten(*a, *b).unwrap().copied,
                _ => false,
            };
            let expect = reference(op, &before, out.sizes());
            if copied {
                // A copy is contiguous from 0 and holds the input's row-major elements.
                prop_assert_eq!(&got, &(0..expect.len() as i64).collect::<Vec<_>>());
            } else {
                prop_assert_eq!(&got, &expect, "op {:?} on {:?}", op, before);
            }
        }
    }
}

/// Symbolic values printed (canonical forms compare structurally).
fn show(v: &[SymInt]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// Guard-free decisions: splitting, merging and flattening a contiguous symbolic tensor,
/// and merging dims whose strides chain, record no guard.
#[test]
fn common_symbolic_reshapes_record_no_guard() -> Result<()> {
    let env = ShapeEnv::default();
    let spec = SymbolSpec::default();
    let [b, s, h, d] = ["b", "s", "h", "d"].map(|n| env.create_symbol(n, 3, spec).unwrap());
    let hd = h.clone() * d.clone();
    let x = View::contiguous(vec![b.clone(), s.clone(), hd.clone()])?;
    // split [b, s, h*d] -> [b, s, h, d], then transpose(1, 2)
    let q = x.view(&[b.clone(), s.clone(), h.clone(), d.clone()])?;
    let qt = q.transpose(1, 2)?;
    assert_eq!(
        show(qt.sizes()),
        show(&[b.clone(), h.clone(), s.clone(), d.clone()])
    );
    // merge back and flatten
    let m = q.reshape(&[b.clone(), s.clone(), hd.clone()])?;
    assert!(!m.copied);
    let f = q.flatten(0, -1)?;
    assert!(!f.copied);
    assert!(env.guards().is_empty(), "guards: {:?}", env.guards());
    Ok(())
}

/// Dims whose strides chain inside a non-contiguous tensor merge without a guard once the
/// sizes are known to be at least 2 (what PyTorch assumes of backed symbols): `[b, s, h, d]`
/// with a padded batch stride `(s+1)*h*d`, viewed as `[b, s, h*d]` and `[b, s*h*d]`.
#[test]
fn chained_dims_merge_without_guards() -> Result<()> {
    let env = ShapeEnv::default();
    let spec = SymbolSpec {
        min: 2,
        ..SymbolSpec::default()
    };
    let [b, s, h, d] = ["b", "s", "h", "d"].map(|n| env.create_symbol(n, 3, spec).unwrap());
    let hd = h.clone() * d.clone();
    let batch = (s.clone() + SymInt::from(1)) * hd.clone();
    let y = View::new(
        vec![b.clone(), s.clone(), h.clone(), d.clone()],
        vec![batch.clone(), hd.clone(), d.clone(), SymInt::from(1)],
        SymInt::from(0),
    )?;
    let merged = y.view(&[b.clone(), s.clone(), hd.clone()])?;
    assert_eq!(
        show(merged.strides()),
        show(&[batch.clone(), hd.clone(), SymInt::from(1)])
    );
    let flat = y.view(&[b.clone(), s.clone() * hd.clone()])?;
    assert_eq!(show(flat.strides()), show(&[batch, SymInt::from(1)]));
    // -1 inference divides exactly: (b*s*h*d) // (b*s*h) == d, with no divisibility guard.
    let x = View::contiguous(vec![b.clone(), s.clone(), hd.clone()])?;
    let r = x.view(&[b.clone(), s.clone(), h.clone(), SymInt::from(-1)])?;
    assert_eq!(show(&r.sizes()[3..]), show(std::slice::from_ref(&d)));
    // Merging across the padded batch is impossible, decided without a guard too.
    assert!(y.view(&[b.clone() * s.clone(), hd]).is_err());
    assert!(env.guards().is_empty(), "guards: {:?}", env.guards());
    Ok(())
}

/// Not vacuous: over fixed random chains, most succeed, every op kind occurs, and a good
/// share of perturbed bindings pass the guards (and are then compared above).
#[test]
fn random_chains_and_bindings_are_not_vacuous() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = (base_strategy(), prop::collection::vec(any::<u64>(), 1..5));
    let (mut ok, mut total, mut tried, mut admitted, mut reshapes, mut copies) = (0, 0, 0, 0, 0, 0);
    let mut kinds = std::collections::BTreeSet::new();
    for _ in 0..400 {
        let (base, seeds) = strategy.new_tree(&mut runner).unwrap().current();
        let ops = ops_for(&base, &seeds);
        for op in &ops {
            kinds.insert(
                format!("{op:?}")
                    .split(['(', ' '])
                    .next()
                    .unwrap()
                    .to_string(),
            );
        }
        total += 1;
        let concrete = run_concrete(&base, &ops);
        if let Ok(a) = &concrete {
            ok += 1;
            if ops
                .iter()
                .any(|o| matches!(o, ViewOp::View(_) | ViewOp::Reshape(_)))
            {
                reshapes += 1;
            }
            copies += usize::from(!a.3);
        }
        let (env, _) = run_symbolic(&base, &ops);
        let guards = env.guard_set();
        for seed in 0..8u64 {
            tried += 1;
            if guards
                .eval(&perturb(&env, seed * 7919 + 1))
                .unwrap()
                .is_pass()
            {
                admitted += 1;
            }
        }
    }
    eprintln!("{ok}/{total} chains ok ({reshapes} with view/reshape, {copies} copied); {admitted}/{tried} bindings admitted; kinds {kinds:?}");
    assert!(ok * 2 > total, "{ok}/{total}");
    assert!(reshapes * 10 > total && copies > 5, "{reshapes} {copies}");
    assert!(admitted * 5 > tried, "{admitted}/{tried}");
    assert_eq!(kinds.len(), 17, "{kinds:?}");
}

/// `Tensor<T>` views are the same code at `i64`: each op applied to a tensor over
/// `0, 1, 2, ...` reads exactly the storage elements the naive definition names (a copying
/// `reshape`/`flatten` reads the input's elements in row-major order).
fn tensor_op(t: &Tensor<f64>, op: &ViewOp) -> Result<Tensor<f64>> {
    let n = t.dim();
    // The tensor API takes `usize` dims: a negative dim is passed wrapped, an invalid one
    // as an out-of-range `usize`.
    let u = |d: i64| {
        let m = n.max(1) as i64;
        if (-m..m).contains(&d) {
            wrap(d, n)
        } else {
            usize::MAX
        }
    };
    match op {
        ViewOp::Permute(d) => t.permute(&d.iter().map(|&d| u(d)).collect::<Vec<_>>()),
        ViewOp::Transpose(a, b) => t.transpose(u(*a), u(*b)),
        ViewOp::T => t.t(),
        ViewOp::Expand(s) => t.expand(s),
        ViewOp::Slice {
            dim,
            start,
            end,
            step,
        } => t.slice(u(*dim), start.unwrap_or(0), end.unwrap_or(i64::MAX), *step),
        ViewOp::Narrow(d, s, l) => t.narrow(u(*d), *s, *l),
        ViewOp::Select(d, i) => t.select(u(*d), *i),
        ViewOp::Unsqueeze(d) => t.unsqueeze(if (-(n as i64) - 1..=n as i64).contains(d) {
            wrap(*d, n + 1)
        } else {
            usize::MAX
        }),
        ViewOp::Squeeze(d) => t.squeeze(d),
        ViewOp::Flatten(s, e) => t.flatten(*s, *e),
        ViewOp::Unflatten(d, s) => t.unflatten(*d, s),
        ViewOp::Movedim(s, d) => t.movedim(*s, *d),
        ViewOp::View(s) => t.view(s),
        ViewOp::Reshape(s) => t.reshape(s),
        ViewOp::AsStrided(s, st, o) => t.as_strided(s, st, *o),
        ViewOp::Diagonal(o, a, b) => t.diagonal(*o, *a, *b),
        ViewOp::Unfold(d, s, st) => t.unfold(*d, *s, *st),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    #[test]
    fn tensor_views_read_what_a_naive_walk_does(
        base in base_strategy(),
        seeds in prop::collection::vec(any::<u64>(), 1..5),
    ) {
        let ops = ops_for(&base, &seeds);
        let data: Vec<f64> = (0..base.storage).map(|k| k as f64).collect();
        let mut store: Vec<i64> = (0..base.storage).collect();
        let mut t = Tensor::from_storage(Storage::from_vec(data), &base.sizes, &base.strides, base.offset).unwrap();
        let mut chain = concrete_chain(&base);
        for op in &ops {
            let before = chain.view.clone();
            let view_result = chain.apply(op);
            let tensor_result = tensor_op(&t, op);
            // The tensor fails exactly when the view layer does (as_strided is also
            // checked against the real storage, which a copy replaced).
            prop_assert_eq!(view_result.is_ok(), tensor_result.is_ok(), "op {:?}", op);
            let Ok(next) = tensor_result else { break };
            let values: Vec<i64> = next.to_vec().unwrap().iter().map(|&v| v as i64).collect();
            let copied = match op {
                ViewOp::Reshape(shape) => before.reshape(shape).unwrap().copied,
                ViewOp::Flatten(a, b) => before.flatten(*a, *b).unwrap().copied,
                _ => false,
            };
            if !matches!(op, ViewOp::AsStrided(..)) {
                // Reference positions index the current storage (`store`).
                let expect: Vec<i64> = reference(op, &before, chain.view.sizes())
                    .iter()
                    .map(|&p| store[p as usize])
                    .collect();
                prop_assert_eq!(&values, &expect, "op {:?}", op);
            }
            if copied {
                store = values.clone();
            }
            prop_assert_eq!(next.storage_offset(), *chain.view.offset());
            prop_assert_eq!(next.strides(), chain.view.strides());
            prop_assert_eq!(next.sizes(), chain.view.sizes());
            t = next;
        }
    }
}

/// The golden cases (`tests/golden/views.jsonl`, PyTorch's answers) as property seeds: each
/// traced symbolically, then compared with a fresh concrete run at perturbed bindings its
/// guards admit (the hints themselves are checked by `symstride conformance --symbolic`).
#[test]
fn golden_view_traces_are_sound_at_admitted_bindings() {
    let path = symstride::testing::golden_path("views.jsonl");
    let lines = symstride::golden::read_cases(&path).unwrap();
    let (mut cases, mut checked) = (0, 0);
    for line in lines {
        let Ok(symstride::golden::Case::View(c)) = line.case else {
            panic!("line {}: not a view case", line.number)
        };
        let base = Base {
            sizes: c.base.sizes.clone(),
            strides: c.base.strides.clone(),
            offset: c.base.offset,
            storage: c.base.storage_numel,
        };
        let (env, symbolic) = run_symbolic(&base, &c.ops);
        let guards = env.guard_set();
        cases += 1;
        for seed in 0..4u64 {
            let b = perturb(&env, seed * 104729 + line.number as u64);
            if !guards.eval(&b).unwrap().is_pass() {
                continue;
            }
            let want = run_concrete(&base_at(&base, &b), &c.ops);
            let got = match &symbolic {
                Ok(chain) => eval_chain(chain, &b).unwrap(),
                Err(cat) => Err(*cat),
            };
            assert_eq!(got, want, "line {} at {b:?}", line.number);
            checked += 1;
        }
    }
    assert_eq!(cases, 3000);
    assert!(checked > 3000, "only {checked} admitted bindings");
}

/// A symbolic shape op for the unbacked test: `flatten`, or `view`/`reshape` to a shape
/// built from the input's (symbolic) sizes by merging neighbours, inserting 1s and one -1.
fn unbacked_target(sizes: &[SymInt], seed: &mut u64) -> Vec<SymInt> {
    let mut shape = sizes.to_vec();
    for _ in 0..pick(seed, 0, 2) {
        match pick(seed, 0, 2) {
            0 if shape.len() >= 2 => {
                let i = pick(seed, 0, shape.len() as i64 - 2) as usize;
                let m = shape[i].clone() * shape[i + 1].clone();
                shape.splice(i..i + 2, [m]);
            }
            1 => {
                let i = pick(seed, 0, shape.len() as i64) as usize;
                shape.insert(i, SymInt::from(1));
            }
            _ => {}
        }
    }
    if !shape.is_empty() && pick(seed, 0, 1) == 0 {
        let i = pick(seed, 0, shape.len() as i64 - 1) as usize;
        shape[i] = SymInt::from(-1);
    }
    shape
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    /// With an unbacked size (no hint, so no guard can be recorded), `view`/`reshape`/
    /// `flatten` may fail (data-dependent, or `view` refusing) or copy, but a view they do
    /// return addresses exactly the elements of the concrete answer at every value of the
    /// unbacked size for which the concrete op succeeds.
    #[test]
    fn unbacked_reshapes_never_give_a_wrong_view(
        base in base_strategy(),
        which in any::<prop::sample::Index>(),
        mut seed in any::<u64>(),
    ) {
        if base.sizes.is_empty() {
            return Ok(());
        }
        let k = which.index(base.sizes.len());
        let env = ShapeEnv::default();
        let u = env.create_unbacked("u", 0).unwrap();
        let sizes: Vec<SymInt> = base.sizes.iter().enumerate()
            .map(|(d, &v)| if d == k { u.clone() } else { SymInt::from(v) }).collect();
        let contiguous = pick(&mut seed, 0, 1) == 0;
        let strides: Vec<SymInt> = if contiguous {
            let mut st = vec![SymInt::from(1); sizes.len()];
            for d in (0..sizes.len() - 1).rev() {
                st[d] = st[d + 1].clone() * sizes[d + 1].clone();
            }
            st
        } else {
            base.strides.iter().map(|&s| SymInt::from(s)).collect()
        };
        let x = View::new(sizes.clone(), strides.clone(), SymInt::from(base.offset)).unwrap();
        let op = pick(&mut seed, 0, 2);
        let target = unbacked_target(&sizes, &mut seed);
        let (start, end) = (pick(&mut seed, 0, sizes.len() as i64 - 1), sizes.len() as i64 - 1);
        let symbolic = match op {
            0 => x.view(&target).map(|v| (v, false)),
            1 => x.reshape(&target).map(|r| (r.view, r.copied)),
            _ => x.flatten(start, end).map(|r| (r.view, r.copied)),
        };
        prop_assert!(env.guards().is_empty(), "guards on an unbacked size: {:?}", env.guards());
        let Ok((view, copied)) = symbolic else { return Ok(()) };
        for v in 0..=5i64 {
            let b = Bindings::from_pairs([("u", v)]);
            let at = |s: &[SymInt]| s.iter().map(|e| e.eval(&b).unwrap()).collect::<Vec<i64>>();
            let cx = View::new(at(&sizes), at(&strides), base.offset).unwrap();
            let ct = at(&target);
            let concrete = match op {
                0 => cx.view(&ct).map(|v| (v, false)),
                1 => cx.reshape(&ct).map(|r| (r.view, r.copied)),
                _ => cx.flatten(start, end).map(|r| (r.view, r.copied)),
            };
            // Where the concrete run rejects the shape, the symbolic answer claims nothing
            // about this value (PyTorch would fail at run time too).
            let Ok((cview, ccopied)) = concrete else { continue };
            prop_assert_eq!(at(view.sizes()), cview.sizes().to_vec(), "u = {}", v);
            let what = format!("op {op} target {target:?} start {start} view {view:?}");
            // A view is wrong if it addresses other elements (or in another order) than
            // the concrete view; strides of size-1 dims and of empty results address
            // nothing, and c10 itself answers those size-obliviously (`guard_or_false`).
            if !copied {
                prop_assert!(!ccopied, "a view where PyTorch copies, u = {} {}", v, what);
                let sv = View::new(at(view.sizes()), at(view.strides()), view.offset().eval(&b).unwrap()).unwrap();
                let walk = |w: &View<i64>| indices(w.sizes()).iter().map(|i| addr(w, i)).collect::<Vec<_>>();
                prop_assert_eq!(walk(&sv), walk(&cview), "u = {} {}", v, what);
            }
        }
    }
}
