//! The readable form of expressions: `c*h*w`, `2*c + 1`, `Max(s0, 1)`, `c >= 2`, `a != 1`.
//!
//! The printer is driven by the canonical form, so equal expressions print identically; the
//! parser (`parse.rs`) accepts everything printed here, and `parse(print(e)) == e`.

use super::boolexpr::{BoolExpr, BoolKind, Rel};
use super::expr::{Atom, Expr, Term};
use super::num::Coeff;
use std::fmt;

fn write_atom(f: &mut fmt::Formatter<'_>, a: &Atom) -> fmt::Result {
    match a {
        Atom::Sym(s) => f.write_str(s.as_str()),
        Atom::Func(func) => {
            write!(f, "{}(", func.kind.name())?;
            for (i, arg) in func.args.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{arg}")?;
            }
            f.write_str(")")
        }
    }
}

fn write_mono(f: &mut fmt::Formatter<'_>, t: &Term) -> fmt::Result {
    for (i, (a, e)) in t.mono.iter().enumerate() {
        if i > 0 {
            f.write_str("*")?;
        }
        write_atom(f, a)?;
        if *e != 1 {
            write!(f, "**{e}")?;
        }
    }
    Ok(())
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let terms = self.terms();
        if terms.is_empty() {
            return f.write_str("0");
        }
        for (i, t) in terms.iter().enumerate() {
            let neg = t.coef.signum() < 0;
            let abs = if neg { t.coef.neg() } else { t.coef.clone() };
            match (i == 0, neg) {
                (true, true) => f.write_str("-")?,
                (true, false) => {}
                (false, true) => f.write_str(" - ")?,
                (false, false) => f.write_str(" + ")?,
            }
            if t.mono.is_empty() {
                write!(f, "{abs}")?;
            } else {
                if !abs.is_one() {
                    write!(f, "{abs}*")?;
                }
                write_mono(f, t)?;
            }
        }
        Ok(())
    }
}

/// Splits `p = pos - neg + k` (pos/neg with positive coefficients, no constants).
fn split_sides(p: &Expr) -> (Expr, Expr, Coeff) {
    let mut pos = Vec::new();
    let mut neg = Vec::new();
    let mut k = Coeff::ZERO;
    for t in p.terms() {
        if t.mono.is_empty() {
            k = t.coef.clone();
        } else if t.coef.signum() > 0 {
            pos.push(t.clone());
        } else {
            neg.push(Term {
                mono: t.mono.clone(),
                coef: t.coef.neg(),
            });
        }
    }
    (
        Expr::from_sorted_terms(pos),
        Expr::from_sorted_terms(neg),
        k,
    )
}

fn write_cmp(f: &mut fmt::Formatter<'_>, rel: Rel, p: &Expr) -> fmt::Result {
    let (pos, neg, k) = split_sides(p);
    let kx = Expr::from_coeff(k.clone());
    let zero = |e: &Expr| e.terms().is_empty();
    match rel {
        Rel::Eq | Rel::Ne => {
            let op = if rel == Rel::Eq { "==" } else { "!=" };
            if zero(&neg) {
                write!(f, "{pos} {op} {}", kx.neg())
            } else if zero(&pos) {
                write!(f, "{neg} {op} {kx}")
            } else if k.signum() >= 0 {
                write!(f, "{} {op} {neg}", pos.add(&kx))
            } else {
                write!(f, "{pos} {op} {}", neg.sub(&kx))
            }
        }
        Rel::Le => {
            if zero(&neg) {
                write!(f, "{pos} <= {}", kx.neg())
            } else if zero(&pos) {
                write!(f, "{neg} >= {kx}")
            } else if k.is_one() {
                write!(f, "{pos} < {neg}")
            } else if k.signum() > 0 {
                write!(f, "{} <= {neg}", pos.add(&kx))
            } else {
                write!(f, "{pos} <= {}", neg.sub(&kx))
            }
        }
    }
}

impl fmt::Display for BoolExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind() {
            BoolKind::Const(true) => f.write_str("True"),
            BoolKind::Const(false) => f.write_str("False"),
            BoolKind::Cmp(rel, p) => write_cmp(f, *rel, p),
            BoolKind::And(v) | BoolKind::Or(v) => {
                let sep = if matches!(self.kind(), BoolKind::And(_)) {
                    " && "
                } else {
                    " || "
                };
                for (i, b) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(sep)?;
                    }
                    if matches!(b.kind(), BoolKind::And(_) | BoolKind::Or(_)) {
                        write!(f, "({b})")?;
                    } else {
                        write!(f, "{b}")?;
                    }
                }
                Ok(())
            }
        }
    }
}
