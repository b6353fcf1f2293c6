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
//! check is usually O(1) thanks to `Arc` sharing and cached hashes. Constructors only use
//! identities valid for all integers (`(4*a + 7) // 2 == 2*a + 3`); identities that need
//! ranges (`(a*b) // b == a` for `b >= 1`) are applied by [`SymInt`] methods, which know the
//! ranges.
//!
//! Comparisons are normalized too ([`BoolExpr`]: `p == 0`, `p != 0`, `p <= 0` with coprime
//! coefficients, negation pushed to the leaves), so equivalent conditions compare equal.
//!
//! A static decision ([`Bool::guard`](crate::Bool::guard), `statically_known`) tries, in
//! order of cost:
//!
//! 1. interval arithmetic on the canonical form over the symbol ranges (sizes are `>= 0`
//!    unless declared otherwise) and the facts the recorded guards established;
//! 2. for conditions with `Max`/`Min`/`FloorDiv`/`Mod` atoms: rewriting the atoms the
//!    intervals decide (`Max(s, 1)` is `s` when `s >= 1`), then exact case splits on up to
//!    three `Max`/`Min` atoms (`Max(a, b) >= a` holds in both cases `a >= b` and `b >= a`);
//! 3. only then the egg simplifier ([`simplify`]): a `define_language!` language, an
//!    `Analysis` that folds constants exactly and keeps an interval per e-class, conditional
//!    rules for `Max`/`Min`/`FloorDiv`/`Mod` that consult those intervals, a `Runner` with
//!    explicit iteration/node/time limits, and smallest-form extraction. It runs for
//!    conditions involving `FloorDiv`/`Mod` (or too many `Max`/`Min` atoms to split on), is
//!    skipped for large inputs, and its results are cached process-wide.
//!
//! Most conditions that reach the fallbacks are genuinely undecidable (a size may be 0 or 1),
//! so the cheap steps come first and the e-graph has tight limits; a whole symbolic trace of
//! a broadcasting 4-D elementwise op stays well under a millisecond (`benches/symbolic.rs`).
//!
//! # Guards
//!
//! Before deciding, a comparison `p*q REL p*r` whose common monomial `p` is known positive
//! (every symbol `>= 1` by its range or by recorded facts) is rewritten as `q REL r`: an
//! equivalence wherever the earlier guards hold, which lets intervals decide `h*w >= w`
//! and makes recorded guards minimal (`c < c*w` is recorded as `w >= 2`).
//! A decided branch records nothing. Otherwise the condition, or its negation if the hints
//! make it false, is recorded with the caller's reason and immediately used as a fact: bounds
//! on the same normalized expression are intersected (`s >= 2` decides `s != 1`, `s >= 1`,
//! `s != 0`), `!=` facts exclude values (tightening a range at its ends), and equalities
//! become substitutions (`a == b` lets `a*c == b*c` be decided). When the guards are read,
//! guards implied by the others are dropped (duplicates up to canonical form, bounds subsumed
//! by stronger ones, conjunctions the others cover). Caps on guards per symbol and on
//! condition size give [`Error::Limit`](crate::Error::Limit).
//!
//! Conditions over unbacked symbols ([`ShapeEnv::create_unbacked`]) that cannot be decided
//! are an [`Error::DataDependent`](crate::Error::DataDependent), except through
//! `guard_or_false`/`guard_or_true`/`statically_known_true`, which answer a default and
//! record nothing.
//!
//! # Evaluation
//!
//! Guards evaluate exactly against concrete shapes ([`GuardSet::eval`]): checked `i64`
//! arithmetic, falling back to `BigInt`, never wrapping; division by zero is an error. For
//! dispatch, [`CompiledGuards`] flattens them for a fixed symbol order: plain polynomial
//! comparisons become coefficient/factor tables evaluated in checked `i64` (a single-symbol
//! comparison is one multiply-add), anything else a small postfix program; a guard whose
//! fast evaluation overflows or divides by zero is re-evaluated exactly, so compiled and
//! naive evaluation always agree. Expressions and guards serialize as their printed form.

mod boolexpr;
mod compiled;
mod env;
mod eval;
mod expr;
mod guards;
mod interval;
mod knowledge;
mod linear;
mod num;
mod parse;
mod print;
mod simplify;
mod symint;
mod terms;

pub use boolexpr::{BoolExpr, Rel};
pub use compiled::CompiledGuards;
pub use env::{ShapeEnv, ShapeEnvConfig, SymbolSpec};
pub(crate) use env::symbol_components;
pub use eval::Bindings;
pub use expr::{Expr, Symbol};
pub use guards::{Guard, GuardCheck, GuardSet};
pub use interval::Interval;
pub use simplify::{
    clear_simplifier_cache, simplify, simplify_bool, simplify_with, SimplifyConfig, SymbolRanges,
};
pub use symint::{SymBool, SymInt};
pub use terms::{decide_under, decide_under_by_cases, Facts, PolyTerm};
