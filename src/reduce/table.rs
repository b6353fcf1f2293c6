//! The reduction table: one entry per reduction, read by the meta function, the kernels,
//! the conformance runner and the tests.

use crate::dtype::{Category, DType};
use crate::error::{Error, Result};

/// A reduction PyTorch offers (`torch.sum`, `torch.amax`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReductionOp {
    /// `sum`
    Sum,
    /// `mean`
    Mean,
    /// `prod`
    Prod,
    /// `amax`
    Amax,
    /// `amin`
    Amin,
    /// `argmax`
    Argmax,
    /// `argmin`
    Argmin,
    /// `all`
    All,
    /// `any`
    Any,
}

/// How a reduction's result dtype follows from its input dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultDType {
    /// The input's dtype.
    Same,
    /// Floating dtypes stay, `bool` and integers accumulate into `int64` (`sum`, `prod`).
    IntegralToInt64,
    /// Floating inputs only (`mean`: any other dtype is a `dtype` error).
    FloatingOnly,
    /// Always `int64` (indices); `bool` input is a `dtype` error.
    Index,
    /// `bool`, except `uint8` stays `uint8` (`all`, `any`).
    Logical,
}

/// Which `dim` arguments a reduction accepts and what `dim=[]` means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DimsRule {
    /// A list of dims; `[]` (like `None`) reduces every dim.
    ListEmptyIsAll,
    /// A list of dims; `[]` reduces nothing (`all`, `any`), `None` reduces every dim.
    ListEmptyIsNone,
    /// One dim or `None` (`prod`, `argmax`, `argmin`).
    One,
}

/// What a reduction does with an empty input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmptyRule {
    /// Fine: the result is the identity (`sum` 0, `prod` 1, `mean` NaN, `all` true, `any`
    /// false).
    Identity,
    /// `amax`/`amin`: a `numel() == 0` input needs explicit dims, none of size 0 (`index`).
    NeedsNonEmptyDims,
    /// `argmax`/`argmin`: the reduced dim (or, with no dim, the input) must not be empty
    /// (`index`).
    NeedsNonEmptyDim,
}

/// One entry of the reduction table.
#[derive(Clone, Copy, Debug)]
pub struct ReductionInfo {
    /// The op.
    pub op: ReductionOp,
    /// PyTorch's name.
    pub name: &'static str,
    /// Result dtype rule.
    pub result: ResultDType,
    /// Accepted `dim` forms.
    pub dims: DimsRule,
    /// Behaviour on empty inputs.
    pub empty: EmptyRule,
    /// The identity the kernels start from, in words (also the result over nothing).
    pub identity: &'static str,
    /// The naive reference over values widened to `f64`, in logical order: the result
    /// (for `argmax`/`argmin` the index of the first extreme, NaN counting as extreme; for
    /// `all`/`any` 0 or 1). Tests compare the kernels against it.
    pub reference: fn(&[f64]) -> f64,
    /// The naive reference over integer and bool inputs widened to `i64`, where `f64`
    /// cannot stand for them: `sum`/`prod` accumulate in `int64` and wrap on overflow as
    /// PyTorch's do (`f64` would round beyond 2**53 and saturate when narrowed), and the
    /// extremes and their indices compare exactly. `None` where the `f64` reference is exact
    /// for integers (`all`, `any`) or the op takes no integers (`mean`).
    pub int_reference: Option<fn(&[i64]) -> i64>,
}

fn ref_sum(v: &[f64]) -> f64 {
    v.iter().sum()
}
fn ref_mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}
fn ref_prod(v: &[f64]) -> f64 {
    v.iter().product()
}
fn ref_sum_int(v: &[i64]) -> i64 {
    v.iter().fold(0i64, |a, &x| a.wrapping_add(x))
}
fn ref_prod_int(v: &[i64]) -> i64 {
    v.iter().fold(1i64, |a, &x| a.wrapping_mul(x))
}
fn ref_amax_int(v: &[i64]) -> i64 {
    v.iter().copied().max().unwrap_or(i64::MIN)
}
fn ref_amin_int(v: &[i64]) -> i64 {
    v.iter().copied().min().unwrap_or(i64::MAX)
}
/// The index of the first element that no later one beats.
fn ref_arg_int(v: &[i64], better: fn(i64, i64) -> bool) -> i64 {
    let mut best = 0usize;
    for (i, &x) in v.iter().enumerate() {
        if better(x, v[best]) {
            best = i;
        }
    }
    best as i64
}
fn ref_argmax_int(v: &[i64]) -> i64 {
    ref_arg_int(v, |x, b| x > b)
}
fn ref_argmin_int(v: &[i64]) -> i64 {
    ref_arg_int(v, |x, b| x < b)
}
fn ref_amax(v: &[f64]) -> f64 {
    v.iter().fold(f64::NEG_INFINITY, |a, &x| {
        if a.is_nan() || x.is_nan() {
            f64::NAN
        } else {
            a.max(x)
        }
    })
}
fn ref_amin(v: &[f64]) -> f64 {
    -ref_amax(&v.iter().map(|x| -x).collect::<Vec<_>>())
}
fn ref_arg(v: &[f64], better: fn(f64, f64) -> bool) -> f64 {
    let mut best = 0usize;
    for (i, &x) in v.iter().enumerate() {
        let b = v[best];
        if !b.is_nan() && (x.is_nan() || better(x, b)) {
            best = i;
        }
    }
    best as f64
}
fn ref_argmax(v: &[f64]) -> f64 {
    ref_arg(v, |x, b| x > b)
}
fn ref_argmin(v: &[f64]) -> f64 {
    ref_arg(v, |x, b| x < b)
}
fn ref_all(v: &[f64]) -> f64 {
    f64::from(u8::from(v.iter().all(|&x| x != 0.0)))
}
fn ref_any(v: &[f64]) -> f64 {
    f64::from(u8::from(v.iter().any(|&x| x != 0.0)))
}

/// The table, in [`ReductionOp`] order.
pub const REDUCTIONS: [ReductionInfo; 9] = [
    ReductionInfo {
        op: ReductionOp::Sum,
        name: "sum",
        result: ResultDType::IntegralToInt64,
        dims: DimsRule::ListEmptyIsAll,
        empty: EmptyRule::Identity,
        identity: "0",
        reference: ref_sum,
        int_reference: Some(ref_sum_int),
    },
    ReductionInfo {
        op: ReductionOp::Mean,
        name: "mean",
        result: ResultDType::FloatingOnly,
        dims: DimsRule::ListEmptyIsAll,
        empty: EmptyRule::Identity,
        identity: "0 (then divided by the count: NaN over nothing)",
        reference: ref_mean,
        int_reference: None,
    },
    ReductionInfo {
        op: ReductionOp::Prod,
        name: "prod",
        result: ResultDType::IntegralToInt64,
        dims: DimsRule::One,
        empty: EmptyRule::Identity,
        identity: "1",
        reference: ref_prod,
        int_reference: Some(ref_prod_int),
    },
    ReductionInfo {
        op: ReductionOp::Amax,
        name: "amax",
        result: ResultDType::Same,
        dims: DimsRule::ListEmptyIsAll,
        empty: EmptyRule::NeedsNonEmptyDims,
        identity: "the lowest value (never visible: empty reductions are errors)",
        reference: ref_amax,
        int_reference: Some(ref_amax_int),
    },
    ReductionInfo {
        op: ReductionOp::Amin,
        name: "amin",
        result: ResultDType::Same,
        dims: DimsRule::ListEmptyIsAll,
        empty: EmptyRule::NeedsNonEmptyDims,
        identity: "the highest value (never visible: empty reductions are errors)",
        reference: ref_amin,
        int_reference: Some(ref_amin_int),
    },
    ReductionInfo {
        op: ReductionOp::Argmax,
        name: "argmax",
        result: ResultDType::Index,
        dims: DimsRule::One,
        empty: EmptyRule::NeedsNonEmptyDim,
        identity: "no candidate yet",
        reference: ref_argmax,
        int_reference: Some(ref_argmax_int),
    },
    ReductionInfo {
        op: ReductionOp::Argmin,
        name: "argmin",
        result: ResultDType::Index,
        dims: DimsRule::One,
        empty: EmptyRule::NeedsNonEmptyDim,
        identity: "no candidate yet",
        reference: ref_argmin,
        int_reference: Some(ref_argmin_int),
    },
    ReductionInfo {
        op: ReductionOp::All,
        name: "all",
        result: ResultDType::Logical,
        dims: DimsRule::ListEmptyIsNone,
        empty: EmptyRule::Identity,
        identity: "true",
        reference: ref_all,
        int_reference: None,
    },
    ReductionInfo {
        op: ReductionOp::Any,
        name: "any",
        result: ResultDType::Logical,
        dims: DimsRule::ListEmptyIsNone,
        empty: EmptyRule::Identity,
        identity: "false",
        reference: ref_any,
        int_reference: None,
    },
];

impl ReductionOp {
    /// Every reduction, in table order.
    pub const ALL: [ReductionOp; 9] = [
        ReductionOp::Sum,
        ReductionOp::Mean,
        ReductionOp::Prod,
        ReductionOp::Amax,
        ReductionOp::Amin,
        ReductionOp::Argmax,
        ReductionOp::Argmin,
        ReductionOp::All,
        ReductionOp::Any,
    ];

    /// The op's table entry.
    pub fn info(self) -> &'static ReductionInfo {
        &REDUCTIONS[self as usize]
    }

    /// PyTorch's name.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Parses a name as written by [`ReductionOp::name`].
    pub fn parse(name: &str) -> Result<ReductionOp> {
        REDUCTIONS
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.op)
            .ok_or_else(|| Error::invalid(format!("unknown reduction `{name}`")))
    }

    /// The result dtype for an input of `input`, or the `dtype` error PyTorch raises.
    pub fn result_dtype(self, input: DType) -> Result<DType> {
        let name = self.name();
        match self.info().result {
            ResultDType::Same => Ok(input),
            ResultDType::IntegralToInt64 => Ok(match input.category() {
                Category::Floating => input,
                _ => DType::I64,
            }),
            ResultDType::FloatingOnly if input.is_floating() => Ok(input),
            ResultDType::FloatingOnly => Err(Error::DType {
                message: format!(
                    "{name}(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: {input}"
                ),
            }),
            ResultDType::Index if input == DType::Bool => Err(Error::DType {
                message: format!("{name}(): does not support bool input"),
            }),
            ResultDType::Index => Ok(DType::I64),
            ResultDType::Logical if input == DType::U8 => Ok(DType::U8),
            ResultDType::Logical => Ok(DType::Bool),
        }
    }
}

impl std::fmt::Display for ReductionOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_enum_order_and_names_round_trip() {
        for (i, op) in ReductionOp::ALL.into_iter().enumerate() {
            assert_eq!(REDUCTIONS[i].op, op);
            assert_eq!(ReductionOp::parse(op.name()).unwrap(), op);
        }
        assert!(ReductionOp::parse("median").is_err());
    }

    #[test]
    fn result_dtypes() {
        use DType::*;
        assert_eq!(ReductionOp::Sum.result_dtype(Bool).unwrap(), I64);
        assert_eq!(ReductionOp::Prod.result_dtype(U8).unwrap(), I64);
        assert_eq!(ReductionOp::Sum.result_dtype(F32).unwrap(), F32);
        assert_eq!(
            ReductionOp::Mean.result_dtype(I32).unwrap_err().category(),
            "dtype"
        );
        assert_eq!(
            ReductionOp::Argmax
                .result_dtype(Bool)
                .unwrap_err()
                .category(),
            "dtype"
        );
        assert_eq!(ReductionOp::Argmin.result_dtype(F64).unwrap(), I64);
        assert_eq!(ReductionOp::Any.result_dtype(U8).unwrap(), U8);
        assert_eq!(ReductionOp::All.result_dtype(F32).unwrap(), Bool);
        assert_eq!(ReductionOp::Amax.result_dtype(Bool).unwrap(), Bool);
    }

    #[test]
    fn references() {
        let v = [1.0, 3.0, -2.0, 3.0];
        assert_eq!((ReductionOp::Sum.info().reference)(&v), 5.0);
        assert_eq!((ReductionOp::Argmax.info().reference)(&v), 1.0);
        assert_eq!((ReductionOp::Argmin.info().reference)(&v), 2.0);
        assert_eq!((ReductionOp::Amin.info().reference)(&v), -2.0);
        let n = [1.0, f64::NAN, 5.0, f64::NAN];
        assert_eq!((ReductionOp::Argmax.info().reference)(&n), 1.0);
        assert_eq!((ReductionOp::Argmin.info().reference)(&n), 1.0);
        assert!((ReductionOp::Amax.info().reference)(&n).is_nan());
        assert_eq!((ReductionOp::All.info().reference)(&[]), 1.0);
        assert_eq!((ReductionOp::Any.info().reference)(&[0.0, 2.0]), 1.0);
    }

    /// Integer sums and products wrap in `int64` as PyTorch's do (`33**13` overflows;
    /// `2**62 * 4` is 0), and extremes beyond 2**53 compare exactly.
    #[test]
    fn integer_references_wrap_and_compare_exactly() {
        let int = |op: ReductionOp| op.info().int_reference.unwrap();
        let v = [33i64; 13];
        assert_eq!(int(ReductionOp::Prod)(&v), 33i64.wrapping_pow(13));
        assert_ne!(int(ReductionOp::Prod)(&v) as f64, 33f64.powi(13));
        assert_eq!(int(ReductionOp::Prod)(&[1 << 62, 4]), 0);
        assert_eq!(int(ReductionOp::Sum)(&[i64::MAX, 1]), i64::MIN);
        assert_eq!(int(ReductionOp::Prod)(&[]), 1);
        assert_eq!(int(ReductionOp::Sum)(&[]), 0);
        let big = [(1 << 60) + 1, 1 << 60, (1 << 60) + 1];
        assert_eq!(int(ReductionOp::Amax)(&big), (1 << 60) + 1);
        assert_eq!(int(ReductionOp::Argmax)(&big), 0);
        assert_eq!(int(ReductionOp::Argmin)(&big), 1);
        assert_eq!(int(ReductionOp::Amin)(&big), 1 << 60);
        // The f64 reference cannot tell these apart.
        assert_eq!((ReductionOp::Argmin.info().reference)(&big.map(|x| x as f64)), 0.0);
        assert!(ReductionOp::Mean.info().int_reference.is_none());
    }
}
