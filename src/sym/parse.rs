//! Parser for the readable form printed by `print.rs`.
//!
//! Grammar (loosest binding first): `||`, `&&`, `!`, comparisons (`== != < <= > >=`),
//! `+ -`, `* // %`, unary `-`, `**`, primaries (integers, symbols, parentheses and the calls
//! `Max Min FloorDiv Mod And Or Not Eq Ne Lt Le Gt Ge`, constants `True False`). Errors name
//! the byte position and what was expected.

use super::boolexpr::BoolExpr;
use super::expr::{Expr, FuncKind};
use super::num::Coeff;
use crate::error::{Error, Result};
use num_bigint::BigInt;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Int(String),
    Ident(String),
    Op(&'static str),
    End,
}

const OPS: [&str; 20] = [
    "**", "//", "==", "!=", "<=", ">=", "&&", "||", "+", "-", "*", "%", "<", ">", "!", "(", ")",
    ",", "/", "^",
];

fn lex(src: &str) -> Result<Vec<(Tok, usize)>> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    'outer: while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            out.push((Tok::Int(src[start..i].to_string()), start));
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'.')
            {
                i += 1;
            }
            out.push((Tok::Ident(src[start..i].to_string()), start));
            continue;
        }
        for op in OPS {
            if src[i..].starts_with(op) {
                out.push((Tok::Op(op), i));
                i += op.len();
                continue 'outer;
            }
        }
        let ch = src[i..].chars().next().unwrap_or('?');
        return Err(perr(src, i, &format!("unexpected character `{ch}`")));
    }
    out.push((Tok::End, src.len()));
    Ok(out)
}

fn perr(src: &str, pos: usize, msg: &str) -> Error {
    Error::parse("expression", format!("{msg} at position {pos} in `{src}`"))
}

#[derive(Clone)]
enum Val {
    Int(Expr),
    Bool(BoolExpr),
}

struct Parser<'a> {
    src: &'a str,
    toks: Vec<(Tok, usize)>,
    pos: usize,
    depth: usize,
}

const MAX_DEPTH: usize = 200;

/// Largest number of terms a parsed expression may expand to: products and powers of sums
/// expand into the normal form, so a short input like `(a+b+c+d+e+f+g+h)**64` would
/// otherwise need billions of terms. Beyond it, parsing fails with [`Error::Limit`].
const MAX_TERMS: usize = 1024;
/// Largest degree of any symbol (or call) in a parsed expression, and the largest exponent
/// literal (so every exponent the printer writes parses back): nested powers multiply
/// exponents (`((a**64)**64)**64`), and evaluating high powers costs big-integer time.
const MAX_DEGREE: u64 = 256;
/// Largest bit size of a constant power (`2**4000` is refused, `(2**64)**30` is fine).
const MAX_CONST_BITS: u64 = 4096;

impl<'a> Parser<'a> {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].0
    }
    fn at(&self) -> usize {
        self.toks[self.pos].1
    }
    fn err(&self, msg: &str) -> Error {
        perr(self.src, self.at(), msg)
    }
    fn describe(&self) -> String {
        match self.peek() {
            Tok::Int(s) => format!("`{s}`"),
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Op(o) => format!("`{o}`"),
            Tok::End => "end of input".to_string(),
        }
    }
    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Tok::Op(o) if *o == op) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, op: &str) -> Result<()> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(self.err(&format!("expected `{op}`, found {}", self.describe())))
        }
    }
    fn limit(&self, at: usize, what: &str) -> Error {
        Error::Limit {
            message: format!(
                "expression too large at position {at} in `{}`: {what}",
                self.src
            ),
        }
    }

    /// `a * b`, refused when the expansion could exceed [`MAX_TERMS`] or the degree
    /// [`MAX_DEGREE`] (which keeps every printed exponent parseable).
    fn mul(&self, a: &Expr, b: &Expr, at: usize) -> Result<Expr> {
        if a.terms().len().saturating_mul(b.terms().len()) > MAX_TERMS {
            return Err(self.limit(at, &format!("its expansion exceeds {MAX_TERMS} terms")));
        }
        if degree(a) + degree(b) > MAX_DEGREE {
            return Err(self.limit(at, &format!("a degree above {MAX_DEGREE}")));
        }
        Ok(a.mul(b))
    }

    /// `base ** e`, within [`MAX_TERMS`] and [`MAX_DEGREE`].
    fn pow(&self, base: &Expr, e: u32, at: usize) -> Result<Expr> {
        if let Some(c) = base.as_coeff() {
            if c.to_big().bits().saturating_mul(u64::from(e)) > MAX_CONST_BITS {
                return Err(self.limit(
                    at,
                    &format!("a constant of more than {MAX_CONST_BITS} bits"),
                ));
            }
            return Ok(base.pow(e));
        }
        if degree(base).saturating_mul(u64::from(e)) > MAX_DEGREE {
            return Err(self.limit(at, &format!("a degree above {MAX_DEGREE}")));
        }
        let mut acc = Expr::constant(1);
        for _ in 0..e {
            acc = self.mul(&acc, base, at)?;
        }
        Ok(acc)
    }

    fn int(&self, v: Val, at: usize) -> Result<Expr> {
        match v {
            Val::Int(e) => Ok(e),
            Val::Bool(_) => Err(perr(
                self.src,
                at,
                "expected an integer expression, found a boolean",
            )),
        }
    }
    fn boolean(&self, v: Val, at: usize) -> Result<BoolExpr> {
        match v {
            Val::Bool(b) => Ok(b),
            Val::Int(_) => Err(perr(
                self.src,
                at,
                "expected a boolean expression, found an integer",
            )),
        }
    }

    fn parse_or(&mut self) -> Result<Val> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("expression nested too deeply"));
        }
        let at = self.at();
        let first = self.parse_and()?;
        if !matches!(self.peek(), Tok::Op("||")) {
            self.depth -= 1;
            return Ok(first);
        }
        let mut items = vec![self.boolean(first, at)?];
        while self.eat("||") {
            let at = self.at();
            let v = self.parse_and()?;
            items.push(self.boolean(v, at)?);
        }
        self.depth -= 1;
        Ok(Val::Bool(BoolExpr::or_all(items)))
    }

    fn parse_and(&mut self) -> Result<Val> {
        let at = self.at();
        let first = self.parse_not()?;
        if !matches!(self.peek(), Tok::Op("&&")) {
            return Ok(first);
        }
        let mut items = vec![self.boolean(first, at)?];
        while self.eat("&&") {
            let at = self.at();
            let v = self.parse_not()?;
            items.push(self.boolean(v, at)?);
        }
        Ok(Val::Bool(BoolExpr::and_all(items)))
    }

    fn parse_not(&mut self) -> Result<Val> {
        if self.eat("!") {
            let at = self.at();
            self.depth += 1;
            if self.depth > MAX_DEPTH {
                return Err(self.err("expression nested too deeply"));
            }
            let v = self.parse_not()?;
            self.depth -= 1;
            return Ok(Val::Bool(self.boolean(v, at)?.not()));
        }
        self.parse_cmp()
    }

    fn parse_cmp(&mut self) -> Result<Val> {
        let at = self.at();
        let lhs = self.parse_sum()?;
        let op = match self.peek() {
            Tok::Op(o @ ("==" | "!=" | "<" | "<=" | ">" | ">=")) => *o,
            _ => return Ok(lhs),
        };
        self.pos += 1;
        let a = self.int(lhs, at)?;
        let at2 = self.at();
        let rhs = self.parse_sum()?;
        let b = self.int(rhs, at2)?;
        if matches!(self.peek(), Tok::Op("==" | "!=" | "<" | "<=" | ">" | ">=")) {
            return Err(self.err("chained comparisons are not supported; use `&&`"));
        }
        Ok(Val::Bool(relation(op, &a, &b)))
    }

    fn parse_sum(&mut self) -> Result<Val> {
        let at = self.at();
        let first = self.parse_prod()?;
        if !matches!(self.peek(), Tok::Op("+" | "-")) {
            return Ok(first);
        }
        let mut acc = self.int(first, at)?;
        loop {
            let plus = if self.eat("+") {
                true
            } else if self.eat("-") {
                false
            } else {
                break;
            };
            let at = self.at();
            let v = self.parse_prod()?;
            let v = self.int(v, at)?;
            acc = if plus { acc.add(&v) } else { acc.sub(&v) };
        }
        Ok(Val::Int(acc))
    }

    fn parse_prod(&mut self) -> Result<Val> {
        let at = self.at();
        let first = self.parse_unary()?;
        if !matches!(self.peek(), Tok::Op("*" | "//" | "%" | "/")) {
            return Ok(first);
        }
        let mut acc = self.int(first, at)?;
        loop {
            let op = match self.peek() {
                Tok::Op(o @ ("*" | "//" | "%")) => *o,
                Tok::Op("/") => {
                    return Err(
                        self.err("true division `/` is not supported; use `//` (floor division)")
                    )
                }
                _ => break,
            };
            self.pos += 1;
            let at = self.at();
            let v = self.parse_unary()?;
            let v = self.int(v, at)?;
            acc = match op {
                "*" => self.mul(&acc, &v, at)?,
                "//" => acc.floor_div(&v),
                _ => acc.modulo(&v),
            };
        }
        Ok(Val::Int(acc))
    }

    fn parse_unary(&mut self) -> Result<Val> {
        if self.eat("-") {
            let at = self.at();
            self.depth += 1;
            if self.depth > MAX_DEPTH {
                return Err(self.err("expression nested too deeply"));
            }
            let v = self.parse_unary()?;
            self.depth -= 1;
            return Ok(Val::Int(self.int(v, at)?.neg()));
        }
        self.parse_pow()
    }

    fn parse_pow(&mut self) -> Result<Val> {
        let at = self.at();
        let base = self.parse_primary()?;
        if self.eat("^") {
            return Err(perr(
                self.src,
                self.toks[self.pos - 1].1,
                "`^` is not supported; use `**`",
            ));
        }
        if !self.eat("**") {
            return Ok(base);
        }
        let base = self.int(base, at)?;
        let eat = self.at();
        let e = match self.peek().clone() {
            Tok::Int(s) => {
                self.pos += 1;
                s.parse::<u32>()
                    .ok()
                    .filter(|e| u64::from(*e) <= MAX_DEGREE)
            }
            _ => None,
        };
        let e = e.ok_or_else(|| {
            perr(
                self.src,
                eat,
                &format!("exponent must be an integer literal between 0 and {MAX_DEGREE}"),
            )
        })?;
        Ok(Val::Int(self.pow(&base, e, at)?))
    }

    fn args(&mut self) -> Result<Vec<(Val, usize)>> {
        self.expect("(")?;
        let mut out = Vec::new();
        if self.eat(")") {
            return Ok(out);
        }
        loop {
            let at = self.at();
            out.push((self.parse_or()?, at));
            if self.eat(")") {
                return Ok(out);
            }
            self.expect(",")?;
        }
    }

    fn parse_primary(&mut self) -> Result<Val> {
        let at = self.at();
        match self.peek().clone() {
            Tok::Int(s) => {
                self.pos += 1;
                let v: BigInt = s
                    .parse()
                    .map_err(|_| perr(self.src, at, "invalid integer"))?;
                Ok(Val::Int(Expr::from_coeff(Coeff::from_big(v))))
            }
            Tok::Op("(") => {
                self.pos += 1;
                let v = self.parse_or()?;
                self.expect(")")?;
                Ok(v)
            }
            Tok::Ident(name) => {
                self.pos += 1;
                match name.as_str() {
                    "True" | "true" => return Ok(Val::Bool(BoolExpr::constant(true))),
                    "False" | "false" => return Ok(Val::Bool(BoolExpr::constant(false))),
                    _ => {}
                }
                if !is_function(&name) {
                    if matches!(self.peek(), Tok::Op("(")) {
                        return Err(perr(self.src, at, &format!("unknown function `{name}`")));
                    }
                    return Ok(Val::Int(Expr::symbol(&name)));
                }
                let args = self.args()?;
                self.call(&name, args, at)
            }
            _ => Err(self.err(&format!(
                "expected an expression, found {}",
                self.describe()
            ))),
        }
    }

    fn call(&self, name: &str, args: Vec<(Val, usize)>, at: usize) -> Result<Val> {
        let arity = |n: usize| -> Result<()> {
            if args.len() == n {
                Ok(())
            } else {
                Err(perr(
                    self.src,
                    at,
                    &format!("`{name}` takes {n} argument(s), got {}", args.len()),
                ))
            }
        };
        let ints = |args: Vec<(Val, usize)>| -> Result<Vec<Expr>> {
            args.into_iter().map(|(v, a)| self.int(v, a)).collect()
        };
        let bools = |args: Vec<(Val, usize)>| -> Result<Vec<BoolExpr>> {
            args.into_iter().map(|(v, a)| self.boolean(v, a)).collect()
        };
        Ok(match name {
            "Max" | "Min" => {
                if args.is_empty() {
                    return Err(perr(
                        self.src,
                        at,
                        &format!("`{name}` needs at least one argument"),
                    ));
                }
                let kind = if name == "Max" {
                    FuncKind::Max
                } else {
                    FuncKind::Min
                };
                Val::Int(Expr::extremum(kind, &ints(args)?))
            }
            "FloorDiv" | "Mod" => {
                arity(2)?;
                let v = ints(args)?;
                Val::Int(if name == "Mod" {
                    v[0].modulo(&v[1])
                } else {
                    v[0].floor_div(&v[1])
                })
            }
            "And" => Val::Bool(BoolExpr::and_all(bools(args)?)),
            "Or" => Val::Bool(BoolExpr::or_all(bools(args)?)),
            "Not" => {
                arity(1)?;
                Val::Bool(bools(args)?[0].not())
            }
            _ => {
                arity(2)?;
                let v = ints(args)?;
                let op = match name {
                    "Eq" => "==",
                    "Ne" => "!=",
                    "Lt" => "<",
                    "Le" => "<=",
                    "Gt" => ">",
                    _ => ">=",
                };
                Val::Bool(relation(op, &v[0], &v[1]))
            }
        })
    }
}

/// The largest exponent of any atom in `e`.
fn degree(e: &Expr) -> u64 {
    e.terms()
        .iter()
        .flat_map(|t| t.mono.iter().map(|(_, x)| u64::from(*x)))
        .max()
        .unwrap_or(0)
}

/// Names that are functions (and so cannot be symbol names).
pub(crate) fn is_function(name: &str) -> bool {
    matches!(
        name,
        "Max"
            | "Min"
            | "FloorDiv"
            | "Mod"
            | "And"
            | "Or"
            | "Not"
            | "Eq"
            | "Ne"
            | "Lt"
            | "Le"
            | "Gt"
            | "Ge"
    )
}

/// True when `name` is a valid symbol name for the parser.
pub(crate) fn is_valid_symbol_name(name: &str) -> bool {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    first_ok
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && !is_function(name)
        && !matches!(name, "True" | "False" | "true" | "false")
}

fn relation(op: &str, a: &Expr, b: &Expr) -> BoolExpr {
    match op {
        "==" => BoolExpr::eq(a, b),
        "!=" => BoolExpr::ne(a, b),
        "<" => BoolExpr::lt(a, b),
        "<=" => BoolExpr::le(a, b),
        ">" => BoolExpr::gt(a, b),
        _ => BoolExpr::ge(a, b),
    }
}

fn parse_val(src: &str) -> Result<(Val, usize)> {
    let toks = lex(src)?;
    let mut p = Parser {
        src,
        toks,
        pos: 0,
        depth: 0,
    };
    if matches!(p.peek(), Tok::End) {
        return Err(p.err("empty expression"));
    }
    let v = p.parse_or()?;
    if !matches!(p.peek(), Tok::End) {
        return Err(p.err(&format!("unexpected {}", p.describe())));
    }
    Ok((v, 0))
}

impl Expr {
    /// Parses the readable form (`2*c + 1`, `Max(s0, 1)`, `FloorDiv(a, b)`, `a // 2`, ...).
    pub fn parse(src: &str) -> Result<Expr> {
        let (v, at) = parse_val(src)?;
        match v {
            Val::Int(e) => Ok(e),
            Val::Bool(_) => Err(perr(
                src,
                at,
                "expected an integer expression, found a boolean",
            )),
        }
    }
}

impl BoolExpr {
    /// Parses a condition (`a == b`, `a >= 2`, `a != 1 && b > 0`, `Or(..)`, `Not(..)`, ...).
    pub fn parse(src: &str) -> Result<BoolExpr> {
        let (v, at) = parse_val(src)?;
        match v {
            Val::Bool(b) => Ok(b),
            Val::Int(_) => Err(perr(
                src,
                at,
                "expected a boolean expression, found an integer",
            )),
        }
    }
}

impl std::str::FromStr for Expr {
    type Err = Error;
    fn from_str(s: &str) -> Result<Expr> {
        Expr::parse(s)
    }
}

impl std::str::FromStr for BoolExpr {
    type Err = Error;
    fn from_str(s: &str) -> Result<BoolExpr> {
        BoolExpr::parse(s)
    }
}

impl serde::Serialize for Expr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Expr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Expr::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl serde::Serialize for BoolExpr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for BoolExpr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        BoolExpr::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for src in [
            "c*h*w",
            "2*c + 1",
            "Max(s0, 1)",
            "FloorDiv(a, b)",
            "Mod(a, b)",
            "Min(a, b + 1, 7)",
            "-a + 3",
            "a**2*b - 1",
            "FloorDiv(a + 1, 2)",
            "3*Mod(a, 2)",
            "0",
            "-5",
            "123456789012345678901234567890*x",
        ] {
            let e = Expr::parse(src).unwrap();
            let printed = e.to_string();
            assert_eq!(Expr::parse(&printed).unwrap(), e, "{src} -> {printed}");
        }
        for src in [
            "a == b",
            "a >= 2",
            "a != 1",
            "a < b",
            "a <= 3 && b > 0",
            "Or(a == 1, b == 2)",
            "!(a == 1)",
            "True",
        ] {
            let b = BoolExpr::parse(src).unwrap();
            let printed = b.to_string();
            assert_eq!(BoolExpr::parse(&printed).unwrap(), b, "{src} -> {printed}");
        }
        assert_eq!(Expr::parse("c*h*w").unwrap().to_string(), "c*h*w");
        assert_eq!(Expr::parse("1 + c*2").unwrap().to_string(), "2*c + 1");
        assert_eq!(BoolExpr::parse("a >= 2").unwrap().to_string(), "a >= 2");
        assert_eq!(BoolExpr::parse("a != 1").unwrap().to_string(), "a != 1");
        assert_eq!(BoolExpr::parse("Not(a < b)").unwrap().to_string(), "b <= a");
    }

    #[test]
    fn errors_say_where() {
        let e = Expr::parse("a + * b").unwrap_err().to_string();
        assert!(e.contains("position 4"), "{e}");
        let e = Expr::parse("a == b").unwrap_err().to_string();
        assert!(e.contains("boolean"), "{e}");
        let e = Expr::parse("Foo(a)").unwrap_err().to_string();
        assert!(e.contains("unknown function `Foo`"), "{e}");
        assert!(Expr::parse("a / 2").is_err());
        assert!(Expr::parse("(a").is_err());
        assert!(Expr::parse("").is_err());
        assert!(Expr::parse("a $ b").is_err());
        assert!(BoolExpr::parse("a + 1").is_err());
        let deep = "(".repeat(1000) + "a" + &")".repeat(1000);
        assert!(Expr::parse(&deep).is_err());
    }
}
