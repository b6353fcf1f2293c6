//! egg-based simplification (fallback for non-polynomial atoms).

use super::boolexpr::BoolExpr;
use super::expr::Expr;
use super::knowledge::Knowledge;

/// Simplifies `e` (currently: the canonical form itself).
pub fn simplify(e: &Expr) -> Expr {
    e.clone()
}

pub(crate) fn decide_with_simplifier(_cond: &BoolExpr, _know: &Knowledge) -> Option<bool> {
    None
}
