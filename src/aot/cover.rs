//! `--cover`: enough specializations that every binding of the symbols is admitted.

use super::spec::Spec;
use super::specialization::Specialization;
use super::trace::trace;
use crate::error::{Error, Result};

/// Options of a compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileOptions {
    /// Compile a covering set of specializations rather than only the one at the hints.
    pub cover: bool,
    /// With `cover`, also cover bindings where sizes are 0.
    pub cover_zero: bool,
    /// With `cover`, the largest number of probe bindings examined ([`crate::Error::Limit`]
    /// beyond; the probe grid has 3 or 4 values per symbol).
    pub max_probes: usize,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            cover: false,
            cover_zero: true,
            max_probes: 100_000,
        }
    }
}

/// The probe values of each symbol: 0 (optionally), 1, and two distinct values >= 2 (the
/// hint when it is >= 2, and a larger one). Layout decisions of elementwise ops depend on
/// whether sizes are 0, 1 or larger and on how sizes compare with each other; the two large
/// values per symbol, chosen differently for different symbols, make the probes see both
/// orders of every pair.
fn probe_values(spec: &Spec, zero: bool, two_large: bool) -> Vec<Vec<i64>> {
    spec.hints
        .iter()
        .enumerate()
        .map(|(i, &h)| {
            let a = if h >= 2 { h } else { 2 + i as i64 };
            let mut v = vec![a, 1];
            if two_large {
                v.push(a + 3 + 2 * i as i64);
            }
            if zero {
                v.push(0);
            }
            v
        })
        .collect()
}

fn covered(out: &[Specialization], probe: &[i64]) -> Result<bool> {
    for s in out {
        if s.admits(probe)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Compiles the specializations of `spec`: the one traced at the hints, and with
/// `options.cover` one more for every probe binding (see [`CompileOptions`]) that none of
/// the previous ones admits. A probe whose trace fails (e.g. shapes that do not broadcast
/// at that binding) is skipped: no plan exists there.
pub fn compile_specializations(
    spec: &Spec,
    options: &CompileOptions,
) -> Result<Vec<Specialization>> {
    let mut out = vec![trace(spec, &spec.hints)?];
    if !options.cover {
        return Ok(out);
    }
    let k = spec.symbols.len();
    let per = if options.cover_zero { 4usize } else { 3 };
    let grid = |p: usize| -> Option<usize> { p.checked_pow(k as u32) };
    let two_large = grid(per).is_some_and(|n| n <= options.max_probes);
    let total = grid(if two_large { per } else { per - 1 });
    let total = match total {
        Some(n) if n <= options.max_probes => n,
        _ => {
            return Err(Error::Limit {
                message: format!(
                    "--cover over {k} symbols needs more than max_probes = {} probe bindings",
                    options.max_probes
                ),
            })
        }
    };
    // Positive sizes first (the bindings users run), then the classes with a zero size,
    // so that dispatch meets the general specializations first.
    let passes: &[bool] = if options.cover_zero {
        &[false, true]
    } else {
        &[false]
    };
    let mut probe = vec![0i64; k];
    for &zero in passes {
        let values = probe_values(spec, zero, two_large);
        let count: usize = values.iter().map(Vec::len).product();
        for n in 0..count {
            let mut r = n;
            for (i, vs) in values.iter().enumerate() {
                probe[i] = vs[r % vs.len()];
                r /= vs.len();
            }
            if zero && !probe.contains(&0) {
                continue;
            }
            // A probe at which the inputs are not tensors (a stride dividing by zero or
            // negative there) is no binding any call can have: nothing to cover.
            if spec.concrete_inputs(&probe).is_err() {
                continue;
            }
            if covered(&out, &probe)? {
                continue;
            }
            match trace(spec, &probe) {
                Ok(s) => {
                    if !out.iter().any(|o| o.guards == s.guards) {
                        out.push(s);
                    }
                }
                Err(Error::Broadcast { .. }) => {}
                Err(e) => return Err(e),
            }
        }
    }
    let _ = total;
    Ok(out)
}
