//! Native admission test for the common guard shape: bounds on single symbols.
//!
//! Almost every guard of an elementwise trace compares one size with a constant (`c >= 1`,
//! `h >= 2`, `w != 1`, `h == 1`), alone or in `&&`/`||` combinations. Checking those as
//! direct comparisons on the value slice is a few instructions each, several times cheaper
//! than interpreting [`CompiledGuards`](crate::sym::CompiledGuards) programs, which matters
//! on the dispatch hot path. A specialization uses this only when *every* guard has that
//! shape; otherwise, and to find which guard failed, it uses `CompiledGuards`. Both are
//! tested to agree.

use crate::sym::{BoolExpr, Rel};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Ge,
    Le,
    Eq,
    Ne,
}

/// A guard as native comparisons.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    Cmp { sym: u32, op: Op, k: i64 },
    And(Vec<Bound>),
    Or(Vec<Bound>),
}

impl Bound {
    /// `cond` as native comparisons, when it only bounds single symbols.
    pub(crate) fn from_cond(cond: &BoolExpr, symbols: &[String]) -> Option<Bound> {
        if let Some(v) = cond.conjuncts() {
            return v
                .iter()
                .map(|c| Bound::from_cond(c, symbols))
                .collect::<Option<_>>()
                .map(Bound::And);
        }
        if let Some(v) = cond.disjuncts() {
            return v
                .iter()
                .map(|c| Bound::from_cond(c, symbols))
                .collect::<Option<_>>()
                .map(Bound::Or);
        }
        let (rel, p) = cond.as_cmp()?;
        let terms = p.polynomial_terms()?;
        let (mut a, mut sym, mut k) = (0i64, None, 0i64);
        for (coef, fs) in &terms {
            match fs.as_slice() {
                [] => k = *coef,
                [(s, 1)] if sym.is_none() => {
                    a = *coef;
                    sym = Some(symbols.iter().position(|n| n == s.as_str())? as u32);
                }
                _ => return None,
            }
        }
        let sym = sym?;
        // a*s + k  rel  0, a = ±1.
        let (op, k) = match (rel, a) {
            (Rel::Le, 1) => (Op::Le, k.checked_neg()?),
            (Rel::Le, -1) => (Op::Ge, k),
            (Rel::Eq, 1) | (Rel::Ne, 1) => (
                if rel == Rel::Eq { Op::Eq } else { Op::Ne },
                k.checked_neg()?,
            ),
            (Rel::Eq, -1) | (Rel::Ne, -1) => (if rel == Rel::Eq { Op::Eq } else { Op::Ne }, k),
            _ => return None,
        };
        Some(Bound::Cmp { sym, op, k })
    }

    /// Evaluates at `values` (`None` if a symbol index is out of range).
    #[inline]
    pub(crate) fn eval(&self, values: &[i64]) -> Option<bool> {
        match self {
            Bound::Cmp { sym, op, k } => {
                let v = *values.get(*sym as usize)?;
                Some(match op {
                    Op::Ge => v >= *k,
                    Op::Le => v <= *k,
                    Op::Eq => v == *k,
                    Op::Ne => v != *k,
                })
            }
            Bound::And(v) => {
                for b in v {
                    if !b.eval(values)? {
                        return Some(false);
                    }
                }
                Some(true)
            }
            Bound::Or(v) => {
                for b in v {
                    if b.eval(values)? {
                        return Some(true);
                    }
                }
                Some(false)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sym::{Bindings, Guard, GuardSet};

    #[test]
    fn bounds_agree_with_exact_evaluation() {
        let syms = vec!["a".to_string(), "b".to_string()];
        for text in [
            "a >= 2",
            "a <= 1",
            "a == 1",
            "b != 1",
            "a != 1 && b != 1",
            "a == 0 || b >= 3",
            "3 - a >= 0",
            "-a + 1 == 0",
        ] {
            let c = BoolExpr::parse(text).unwrap();
            let b = Bound::from_cond(&c, &syms).unwrap_or_else(|| panic!("{text}"));
            let g = GuardSet::from(vec![Guard {
                cond: c.clone(),
                reason: String::new(),
            }]);
            let compiled = g.compile(&syms).unwrap();
            for x in -2..6 {
                for y in -2..6 {
                    let want = c.eval(&Bindings::from_pairs([("a", x), ("b", y)])).unwrap();
                    assert_eq!(b.eval(&[x, y]), Some(want), "{text} at {x},{y}");
                    assert_eq!(compiled.eval(&[x, y]).unwrap().is_none(), want);
                }
            }
        }
        for text in ["a*b >= 2", "a + b == 3", "a - b >= 0", "Max(a, 1) == a"] {
            assert!(
                Bound::from_cond(&BoolExpr::parse(text).unwrap(), &syms).is_none(),
                "{text}"
            );
        }
    }
}
