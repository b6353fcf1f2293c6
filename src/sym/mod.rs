//! The symbolic layer: expressions over size symbols, a `ShapeEnv` that records guards, and
//! `SymInt`/`SymBool` implementing the crate's [`Int`](crate::Int)/[`Bool`](crate::Bool).
//!
//! # Why a canonical polynomial form (and egg only as a fallback)
//!
//! Layout code builds a great many small expressions (`c*h*w`, `stride * size`, `numel`) and
//! compares them constantly (`size == 1`, `stride == expected`). Almost all of them are
//! polynomials in the size symbols. Every [`Expr`] constructor therefore keeps expressions in
//! a canonical normal form (in the spirit of tract's `TDim`): a sorted sum of terms with
//! exact (`i64`, falling back to `BigInt`) coefficients, each term a sorted product of atoms
//! with exponents, the atoms being symbols or canonicalized `FloorDiv`/`Mod`/`Max`/`Min`
//! nodes. Equality of polynomials is then structural (`a*(b+c)` *is* `c*a + a*b`), and the
//! structural check is usually O(1) thanks to `Arc` sharing and cached hashes.
//!
//! Comparisons are normalized too (`p == 0`, `p != 0`, `p <= 0`, with coprime coefficients),
//! and static decisions are interval reasoning on that form: symbol ranges (sizes are `>= 0`,
//! or what the caller declared) plus the facts recorded guards established. This is the hot
//! path and involves no e-graph.
//!
//! The egg simplifier (`simplify`) handles what the normal form cannot: `Max`/`Min`/
//! `FloorDiv`/`Mod` identities under range assumptions (e.g. `Max(s, 1) == s` when `s >= 1`).
//! It runs only when a condition involving such atoms is not decided by the fast path, with
//! explicit Runner limits, and its answers are cached per `ShapeEnv`.
//!
//! # Guards
//!
//! [`Bool::guard`](crate::Bool::guard) on a [`SymBool`] first tries to decide the condition
//! statically; a decided branch records nothing. Otherwise the condition, or its negation if
//! the hints make it false, is recorded with the caller's reason and immediately used as a
//! fact: bounds on the same (normalized) expression are intersected (`s >= 2` decides
//! `s != 1`, `s >= 1`, `s != 0`), `!=` facts exclude values (and tighten a range at its
//! ends), and equalities become substitutions. After each recording, older guards implied
//! by the remaining ones are dropped, so the final list is deduplicated and free of bounds
//! subsumed by stronger ones. Conditions over unbacked symbols that cannot be decided are an
//! [`Error::DataDependent`](crate::Error::DataDependent) (except through `guard_or_false`/
//! `guard_or_true`/`statically_known_true`, which answer a default and record nothing).
//!
//! Guards are evaluated exactly against concrete shapes ([`GuardSet::eval`]), or, for
//! dispatch, through [`CompiledGuards`]: a flat postfix program over a slice of symbol values
//! with checked `i64` arithmetic that falls back to the exact evaluator for the rare guard
//! that overflows or divides by zero, so both always agree.

mod boolexpr;
mod compiled;
mod env;
mod eval;
mod expr;
mod guards;
mod interval;
mod knowledge;
mod num;
mod parse;
mod print;
mod simplify;
mod symint;

pub use boolexpr::{BoolExpr, Rel};
pub use compiled::CompiledGuards;
pub use env::{ShapeEnv, ShapeEnvConfig, SymbolSpec};
pub use eval::Bindings;
pub use expr::{Expr, Symbol};
pub use guards::{Guard, GuardSet};
pub use interval::Interval;
pub use simplify::{
    clear_simplifier_cache, simplify, simplify_bool, simplify_with, SimplifyConfig, SymbolRanges,
};
pub use symint::{SymBool, SymInt};
