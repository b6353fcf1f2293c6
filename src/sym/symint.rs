//! `SymInt` / `SymBool`: symbolic values with hints, implementing the crate's `Int`/`Bool`.

use super::boolexpr::BoolExpr;
use super::env::ShapeEnv;
use super::eval::Bindings;
use super::expr::Expr;
use crate::error::{Error, Result};
use crate::int::{Bool, Int};
use num_integer::Integer;
use std::fmt;

/// A symbolic integer: a canonical expression, its value at the hints, and the environment
/// its symbols belong to (constants need none).
#[derive(Clone)]
pub struct SymInt {
    expr: Expr,
    hint: Option<i64>,
    env: Option<ShapeEnv>,
}

/// A symbolic boolean: a canonical condition, its value at the hints, and the environment.
#[derive(Clone)]
pub struct SymBool {
    expr: BoolExpr,
    hint: Option<bool>,
    env: Option<ShapeEnv>,
}

fn pick_env(a: &Option<ShapeEnv>, b: &Option<ShapeEnv>) -> Option<ShapeEnv> {
    match a {
        Some(e) => Some(e.clone()),
        None => b.clone(),
    }
}

impl SymInt {
    pub(crate) fn from_parts(expr: Expr, hint: Option<i64>, env: Option<ShapeEnv>) -> SymInt {
        if let Some(c) = expr.as_const() {
            return SymInt {
                expr,
                hint: Some(c),
                env: None,
            };
        }
        SymInt { expr, hint, env }
    }

    /// A constant.
    pub fn constant(v: i64) -> SymInt {
        SymInt {
            expr: Expr::constant(v),
            hint: Some(v),
            env: None,
        }
    }

    /// A value from an expression over `env`'s symbols; the hint is evaluated at the
    /// symbols' hints (`None` if one is unbacked or the value does not fit `i64`).
    pub fn from_expr(expr: Expr, env: &ShapeEnv) -> SymInt {
        let hint = expr.eval(&env.hints()).ok();
        SymInt::from_parts(expr, hint, Some(env.clone()))
    }

    /// The example value (`None` for values depending on unbacked symbols, or whose value at
    /// the hints does not fit `i64`).
    pub fn hint(&self) -> Option<i64> {
        self.hint
    }

    /// The canonical expression.
    pub fn expr(&self) -> &Expr {
        &self.expr
    }

    /// The environment (`None` for constants).
    pub fn env(&self) -> Option<&ShapeEnv> {
        self.env.as_ref()
    }

    /// `Some(v)` for a constant.
    pub fn as_const(&self) -> Option<i64> {
        self.expr.as_const()
    }

    /// Evaluates at concrete symbol values.
    pub fn eval(&self, b: &Bindings) -> Result<i64> {
        self.expr.eval(b)
    }

    fn bin(&self, o: &SymInt, e: Expr, h: impl FnOnce(i64, i64) -> Option<i64>) -> SymInt {
        let hint = match (self.hint, o.hint) {
            (Some(a), Some(b)) => h(a, b),
            _ => None,
        };
        SymInt::from_parts(e, hint, pick_env(&self.env, &o.env))
    }

    fn known(&self, o: &SymInt, cond: impl FnOnce() -> BoolExpr) -> Option<bool> {
        let env = self.env.as_ref().or(o.env.as_ref())?;
        env.statically_known(&cond())
    }

    /// Floor division (Python `//`). Divides exactly when the divisor is a monomial known
    /// to be positive that divides every term (`(a*b) // b == a` for `b >= 1`).
    pub fn floor_div(&self, o: &SymInt) -> SymInt {
        let mut e = None;
        if !o.expr.is_const()
            && self.known(o, || BoolExpr::ge(&o.expr, &Expr::constant(1))) == Some(true)
        {
            e = self.expr.div_by_monomial(&o.expr);
        }
        let e = e.unwrap_or_else(|| self.expr.floor_div(&o.expr));
        self.bin(o, e, |a, b| {
            if b == 0 || (a == i64::MIN && b == -1) {
                None
            } else {
                Some(Integer::div_floor(&a, &b))
            }
        })
    }

    /// Modulo with the sign of the divisor (Python `%`).
    pub fn modulo(&self, o: &SymInt) -> SymInt {
        let mut e = None;
        if !o.expr.is_const()
            && self.known(o, || BoolExpr::ge(&o.expr, &Expr::constant(1))) == Some(true)
            && self.expr.div_by_monomial(&o.expr).is_some()
        {
            e = Some(Expr::constant(0));
        }
        let e = e.unwrap_or_else(|| self.expr.modulo(&o.expr));
        self.bin(o, e, |a, b| {
            if b == 0 {
                None
            } else if b == -1 {
                Some(0)
            } else {
                Some(Integer::mod_floor(&a, &b))
            }
        })
    }

    fn cmp(&self, o: &SymInt, e: BoolExpr, h: impl FnOnce(i64, i64) -> bool) -> SymBool {
        let hint = match (self.hint, o.hint) {
            (Some(a), Some(b)) => Some(h(a, b)),
            _ => None,
        };
        SymBool::from_parts(e, hint, pick_env(&self.env, &o.env))
    }
}

impl SymBool {
    pub(crate) fn from_parts(expr: BoolExpr, hint: Option<bool>, env: Option<ShapeEnv>) -> SymBool {
        if let Some(c) = expr.as_const() {
            return SymBool {
                expr,
                hint: Some(c),
                env: None,
            };
        }
        SymBool { expr, hint, env }
    }

    /// A constant.
    pub fn constant(b: bool) -> SymBool {
        SymBool {
            expr: BoolExpr::constant(b),
            hint: Some(b),
            env: None,
        }
    }

    /// The value at the hints (`None` when it depends on unbacked symbols).
    pub fn hint(&self) -> Option<bool> {
        self.hint
    }

    /// The canonical condition.
    pub fn expr(&self) -> &BoolExpr {
        &self.expr
    }

    /// Evaluates at concrete symbol values.
    pub fn eval(&self, b: &Bindings) -> Result<bool> {
        self.expr.eval(b)
    }

    fn combine(&self, o: &SymBool, e: BoolExpr, h: impl FnOnce(bool, bool) -> bool) -> SymBool {
        let hint = match (self.hint, o.hint) {
            (Some(a), Some(b)) => Some(h(a, b)),
            _ => None,
        };
        SymBool::from_parts(e, hint, pick_env(&self.env, &o.env))
    }

    /// Decides without recording; `(decided, hint)`.
    fn decide(&self) -> (Option<bool>, Option<bool>) {
        if let Some(c) = self.expr.as_const() {
            return (Some(c), Some(c));
        }
        match &self.env {
            Some(env) => env.decide_or_hint(&self.expr),
            None => (None, self.hint),
        }
    }
}

impl fmt::Display for SymInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.expr, f)
    }
}

impl fmt::Debug for SymInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.hint {
            Some(h) if !self.expr.is_const() => write!(f, "{} (hint {h})", self.expr),
            Some(_) => write!(f, "{}", self.expr),
            None => write!(f, "{} (unbacked)", self.expr),
        }
    }
}

impl fmt::Display for SymBool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.expr, f)
    }
}

impl fmt::Debug for SymBool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.hint {
            Some(h) if self.expr.as_const().is_none() => write!(f, "{} (hint {h})", self.expr),
            Some(_) => write!(f, "{}", self.expr),
            None => write!(f, "{} (unbacked)", self.expr),
        }
    }
}

macro_rules! int_ops {
    ($tr:ident, $m:ident, $checked:ident) => {
        impl std::ops::$tr<&SymInt> for &SymInt {
            type Output = SymInt;
            fn $m(self, o: &SymInt) -> SymInt {
                let e = Expr::$m(&self.expr, &o.expr);
                self.bin(o, e, |a, b| a.$checked(b))
            }
        }
        impl std::ops::$tr<SymInt> for SymInt {
            type Output = SymInt;
            fn $m(self, o: SymInt) -> SymInt {
                std::ops::$tr::$m(&self, &o)
            }
        }
        impl std::ops::$tr<&SymInt> for SymInt {
            type Output = SymInt;
            fn $m(self, o: &SymInt) -> SymInt {
                std::ops::$tr::$m(&self, o)
            }
        }
        impl std::ops::$tr<i64> for SymInt {
            type Output = SymInt;
            fn $m(self, o: i64) -> SymInt {
                std::ops::$tr::$m(&self, &SymInt::constant(o))
            }
        }
        impl std::ops::$tr<i64> for &SymInt {
            type Output = SymInt;
            fn $m(self, o: i64) -> SymInt {
                std::ops::$tr::$m(self, &SymInt::constant(o))
            }
        }
    };
}
int_ops!(Add, add, checked_add);
int_ops!(Sub, sub, checked_sub);
int_ops!(Mul, mul, checked_mul);

impl std::ops::Neg for SymInt {
    type Output = SymInt;
    fn neg(self) -> SymInt {
        SymInt::constant(0) - self
    }
}

impl From<i64> for SymInt {
    fn from(v: i64) -> Self {
        SymInt::constant(v)
    }
}

impl Int for SymInt {
    type Bool = SymBool;
    const SYMBOLIC: bool = true;

    fn from_i64(v: i64) -> Self {
        SymInt::constant(v)
    }
    fn hint(&self) -> Option<i64> {
        self.hint
    }
    fn as_const(&self) -> Option<i64> {
        self.expr.as_const()
    }
    fn plan_scope<'a, R>(
        probe: impl IntoIterator<Item = &'a Self>,
        f: impl FnOnce() -> Result<R>,
    ) -> Result<R>
    where
        Self: 'a,
    {
        match probe.into_iter().find_map(|x| x.env.clone()) {
            Some(env) => env.plan_scope(f),
            None => f(),
        }
    }
    fn sym_eq(&self, o: &Self) -> SymBool {
        self.cmp(o, BoolExpr::eq(&self.expr, &o.expr), |a, b| a == b)
    }
    fn sym_ne(&self, o: &Self) -> SymBool {
        self.cmp(o, BoolExpr::ne(&self.expr, &o.expr), |a, b| a != b)
    }
    fn sym_lt(&self, o: &Self) -> SymBool {
        self.cmp(o, BoolExpr::lt(&self.expr, &o.expr), |a, b| a < b)
    }
    fn sym_le(&self, o: &Self) -> SymBool {
        self.cmp(o, BoolExpr::le(&self.expr, &o.expr), |a, b| a <= b)
    }
    fn sym_gt(&self, o: &Self) -> SymBool {
        self.cmp(o, BoolExpr::gt(&self.expr, &o.expr), |a, b| a > b)
    }
    fn sym_ge(&self, o: &Self) -> SymBool {
        self.cmp(o, BoolExpr::ge(&self.expr, &o.expr), |a, b| a >= b)
    }
    fn max(&self, o: &Self) -> Self {
        let e = Expr::max(&self.expr, &o.expr);
        if e.has_non_polynomial() {
            match self.known(o, || BoolExpr::ge(&self.expr, &o.expr)) {
                Some(true) => return self.clone(),
                Some(false) => return o.clone(),
                None => {}
            }
        }
        self.bin(o, e, |a, b| Some(a.max(b)))
    }
    fn min(&self, o: &Self) -> Self {
        let e = Expr::min(&self.expr, &o.expr);
        if e.has_non_polynomial() {
            match self.known(o, || BoolExpr::le(&self.expr, &o.expr)) {
                Some(true) => return self.clone(),
                Some(false) => return o.clone(),
                None => {}
            }
        }
        self.bin(o, e, |a, b| Some(a.min(b)))
    }
    fn floor_div(&self, o: &Self) -> Self {
        SymInt::floor_div(self, o)
    }
    fn modulo(&self, o: &Self) -> Self {
        SymInt::modulo(self, o)
    }
    fn checked_mul(&self, o: &Self, what: impl FnOnce() -> String) -> Result<Self> {
        let product = self * o;
        match (self.hint, o.hint, product.hint) {
            (Some(_), Some(_), None) => Err(Error::overflow(what())),
            _ => Ok(product),
        }
    }
    fn mul_eq(&self, factor: &Self, other: &Self) -> SymBool {
        let product = Expr::mul(&self.expr, &factor.expr);
        let hint = match (self.hint, factor.hint, other.hint) {
            (Some(a), Some(b), Some(c)) => Some(a as i128 * b as i128 == c as i128),
            _ => None,
        };
        let env = pick_env(&pick_env(&self.env, &factor.env), &other.env);
        SymBool::from_parts(BoolExpr::eq(&product, &other.expr), hint, env)
    }
}

impl Bool for SymBool {
    fn from_bool(b: bool) -> Self {
        SymBool::constant(b)
    }
    fn and(&self, o: &Self) -> Self {
        self.combine(o, self.expr.and(&o.expr), |a, b| a && b)
    }
    fn or(&self, o: &Self) -> Self {
        self.combine(o, self.expr.or(&o.expr), |a, b| a || b)
    }
    fn not(&self) -> Self {
        SymBool::from_parts(self.expr.not(), self.hint.map(|h| !h), self.env.clone())
    }
    fn guard(&self, why: impl FnOnce() -> String) -> Result<bool> {
        if let Some(c) = self.expr.as_const() {
            return Ok(c);
        }
        match &self.env {
            Some(env) => env.evaluate_guard(&self.expr, why),
            // No environment: no symbols (e.g. `Mod(0, 0) != 0`); evaluate it exactly.
            None => match self.expr.eval(&Bindings::new()) {
                Err(Error::Symbol { .. }) => Err(Error::DataDependent {
                    expr: self.expr.to_string(),
                    reason: why(),
                }),
                r => r,
            },
        }
    }
    fn statically_known(&self) -> Option<bool> {
        self.decide().0
    }
    fn guard_or_false(&self, why: impl FnOnce() -> String) -> bool {
        match self.decide() {
            (Some(v), _) => v,
            (None, None) => false,
            (None, Some(_)) => self.guard(why).unwrap_or(false),
        }
    }
    fn guard_or_true(&self, why: impl FnOnce() -> String) -> bool {
        match self.decide() {
            (Some(v), _) => v,
            (None, None) => true,
            (None, Some(_)) => self.guard(why).unwrap_or(true),
        }
    }
}
