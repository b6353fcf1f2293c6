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

/// The outcome of evaluating a [`GuardSet`] at a binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GuardCheck {
    /// Every guard holds.
    Pass,
    /// The guard at this index (the first in order) does not hold.
    Fail(usize),
}

impl GuardCheck {
    /// True when every guard holds.
    pub fn is_pass(self) -> bool {
        self == GuardCheck::Pass
    }

    /// The index of the first failing guard, `None` on a pass.
    pub fn failed(self) -> Option<usize> {
        match self {
            GuardCheck::Pass => None,
            GuardCheck::Fail(i) => Some(i),
        }
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

    /// [`GuardCheck::Pass`] when every guard holds at `b`, else [`GuardCheck::Fail`] with
    /// the index of the first that does not. Errors on unbound symbols and division by zero.
    pub fn eval(&self, b: &Bindings) -> Result<GuardCheck> {
        for (i, g) in self.guards.iter().enumerate() {
            if !g.cond.eval(b)? {
                return Ok(GuardCheck::Fail(i));
            }
        }
        Ok(GuardCheck::Pass)
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
