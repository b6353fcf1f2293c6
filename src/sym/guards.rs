//! Recorded guards and their evaluation against concrete shapes.

use super::boolexpr::BoolExpr;
use super::eval::Bindings;
use crate::error::Result;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A condition a symbolic trace relied on, with the reason the algorithm gave.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Guard {
    /// The condition that must hold for the traced decisions to be valid.
    pub cond: BoolExpr,
    /// Which step asked (e.g. `"is_contiguous: dim 1 size != 1"`).
    pub reason: String,
}

impl fmt::Display for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.cond)
    }
}

/// A list of guards evaluated together (the specialization check of a plan).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuardSet {
    /// The guards, in recording order.
    pub guards: Vec<Guard>,
}

impl From<Vec<Guard>> for GuardSet {
    fn from(guards: Vec<Guard>) -> Self {
        GuardSet { guards }
    }
}

impl GuardSet {
    /// Number of guards.
    pub fn len(&self) -> usize {
        self.guards.len()
    }

    /// True when there is no guard.
    pub fn is_empty(&self) -> bool {
        self.guards.is_empty()
    }

    /// Index of the first guard that does not hold (`None` when all hold). Errors on
    /// unbound symbols and division by zero.
    pub fn eval(&self, b: &Bindings) -> Result<Option<usize>> {
        for (i, g) in self.guards.iter().enumerate() {
            if !g.cond.eval(b)? {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    /// All symbols the guards mention, sorted.
    pub fn symbols(&self) -> Vec<super::expr::Symbol> {
        let mut out = Vec::new();
        for g in &self.guards {
            g.cond.collect_symbols(&mut out);
        }
        out.sort();
        out.dedup();
        out
    }
}
