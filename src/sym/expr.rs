//! Integer expressions in canonical polynomial normal form.
//!
//! An [`Expr`] is a sum of terms `coef * monomial`; a monomial is a sorted product of atoms
//! with positive exponents; an atom is a symbol or a canonicalized `FloorDiv`/`Mod`/`Max`/`Min`
//! node whose arguments are themselves canonical. Every constructor re-establishes the normal
//! form, so two polynomial expressions are equal iff they are structurally equal (which is an
//! O(1) pointer or cached-hash check in the common case). Nodes are shared through `Arc`.

use super::num::Coeff;
use smallvec::SmallVec;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

/// A symbol name (cheap to clone, ordered by name).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Symbol(pub(crate) Arc<str>);

impl Symbol {
    /// A symbol with this name (the name is not validated here; see [`super::ShapeEnv`]).
    pub fn new(name: &str) -> Symbol {
        Symbol(Arc::from(name))
    }
    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for Symbol {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Symbol {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A small deterministic hasher (FxHash-style) used for the cached structural hashes.
#[derive(Default)]
pub(crate) struct FxHasher(u64);

impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Each chunk of up to 8 bytes is one little-endian word, zero-padded. Assembled
        // byte by byte rather than copied into a buffer: the copy of a short name (a
        // `memcpy` call, then an 8-byte load of what was just stored byte-wise) stalled on
        // store forwarding and was a third of `Expr::from_sorted_terms`' time.
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let word = rest
                .iter()
                .rev()
                .fold(0u64, |w, &b| (w << 8) | u64::from(b));
            self.write_u64(word);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64)
    }
    fn write_i64(&mut self, x: i64) {
        self.write_u64(x as u64)
    }
    fn write_u8(&mut self, x: u8) {
        self.write_u64(x as u64)
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64)
    }
}

/// `HashMap` with the deterministic [`FxHasher`] (keys here carry cached hashes).
pub(crate) type FxMap<K, V> =
    std::collections::HashMap<K, V, std::hash::BuildHasherDefault<FxHasher>>;
/// `HashSet` with the deterministic [`FxHasher`].
pub(crate) type FxSet<K> = std::collections::HashSet<K, std::hash::BuildHasherDefault<FxHasher>>;

/// The non-polynomial operators that appear as atoms.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub(crate) enum FuncKind {
    FloorDiv,
    Mod,
    Max,
    Min,
}

impl FuncKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            FuncKind::FloorDiv => "FloorDiv",
            FuncKind::Mod => "Mod",
            FuncKind::Max => "Max",
            FuncKind::Min => "Min",
        }
    }
}

pub(crate) struct Func {
    pub(crate) kind: FuncKind,
    pub(crate) args: SmallVec<[Expr; 2]>,
    hash: u64,
    nodes: u32,
}

/// A factor of a monomial: a symbol or a canonical non-polynomial node.
#[derive(Clone)]
pub(crate) enum Atom {
    Sym(Symbol),
    Func(Arc<Func>),
}

impl Atom {
    fn hash_u64(&self) -> u64 {
        match self {
            Atom::Sym(s) => {
                let mut h = FxHasher::default();
                s.0.hash(&mut h);
                h.finish()
            }
            Atom::Func(f) => f.hash,
        }
    }
    fn nodes(&self) -> u32 {
        match self {
            Atom::Sym(_) => 1,
            Atom::Func(f) => f.nodes,
        }
    }
    pub(crate) fn func(kind: FuncKind, args: SmallVec<[Expr; 2]>) -> Atom {
        let mut h = FxHasher::default();
        h.write_u8(kind as u8 + 1);
        let mut nodes = 1u32;
        for a in &args {
            h.write_u64(a.0.hash);
            nodes = nodes.saturating_add(a.0.nodes);
        }
        Atom::Func(Arc::new(Func {
            kind,
            args,
            hash: h.finish(),
            nodes,
        }))
    }
}

impl PartialEq for Atom {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Atom::Sym(a), Atom::Sym(b)) => a == b,
            (Atom::Func(a), Atom::Func(b)) => {
                Arc::ptr_eq(a, b) || (a.hash == b.hash && a.kind == b.kind && a.args == b.args)
            }
            _ => false,
        }
    }
}
impl Eq for Atom {}

impl Hash for Atom {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash_u64())
    }
}

impl Ord for Atom {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Atom::Sym(a), Atom::Sym(b)) => a.cmp(b),
            (Atom::Sym(_), Atom::Func(_)) => Ordering::Less,
            (Atom::Func(_), Atom::Sym(_)) => Ordering::Greater,
            (Atom::Func(a), Atom::Func(b)) => {
                if Arc::ptr_eq(a, b) {
                    return Ordering::Equal;
                }
                a.kind.cmp(&b.kind).then_with(|| {
                    for (x, y) in a.args.iter().zip(b.args.iter()) {
                        let o = x.canon_cmp(y);
                        if o != Ordering::Equal {
                            return o;
                        }
                    }
                    a.args.len().cmp(&b.args.len())
                })
            }
        }
    }
}
impl PartialOrd for Atom {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A product of atoms with exponents, sorted by atom, no duplicates, exponents >= 1.
pub(crate) type Mono = SmallVec<[(Atom, u32); 2]>;

fn degree(m: &Mono) -> u32 {
    m.iter().map(|(_, e)| *e).sum()
}

/// Canonical monomial order: higher degree first, then lexicographic by atom (and higher
/// exponent first). The constant monomial (empty) therefore comes last.
pub(crate) fn mono_cmp(a: &Mono, b: &Mono) -> Ordering {
    degree(b).cmp(&degree(a)).then_with(|| {
        for ((aa, ae), (ba, be)) in a.iter().zip(b.iter()) {
            let o = aa.cmp(ba).then_with(|| be.cmp(ae));
            if o != Ordering::Equal {
                return o;
            }
        }
        a.len().cmp(&b.len())
    })
}

fn mono_mul(a: &Mono, b: &Mono) -> Mono {
    let mut out = Mono::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            Ordering::Less => {
                out.push(a[i].clone());
                i += 1;
            }
            Ordering::Greater => {
                out.push(b[j].clone());
                j += 1;
            }
            Ordering::Equal => {
                out.push((a[i].0.clone(), a[i].1.saturating_add(b[j].1)));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend(a[i..].iter().cloned());
    out.extend(b[j..].iter().cloned());
    out
}

/// `a / b` for monomials when `b` divides `a`.
fn mono_div(a: &Mono, b: &Mono) -> Option<Mono> {
    let mut out = Mono::new();
    let mut j = 0;
    for (atom, e) in a {
        if j < b.len() && b[j].0 == *atom {
            if b[j].1 > *e {
                return None;
            }
            if *e > b[j].1 {
                out.push((atom.clone(), e - b[j].1));
            }
            j += 1;
        } else {
            out.push((atom.clone(), *e));
        }
    }
    if j == b.len() {
        Some(out)
    } else {
        None
    }
}

/// One term `coef * mono` (`coef != 0`).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Term {
    pub(crate) mono: Mono,
    pub(crate) coef: Coeff,
}

impl fmt::Debug for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Atom::Sym(s) => write!(f, "{s}"),
            Atom::Func(func) => write!(f, "{}{:?}", func.kind.name(), func.args),
        }
    }
}

pub(crate) struct Poly {
    pub(crate) terms: Vec<Term>,
    hash: u64,
    nodes: u32,
}

/// A symbolic integer expression in canonical polynomial normal form.
///
/// Cheap to clone (one `Arc`); equality is exact for polynomials (`a*(b+c) == c*a + a*b`).
/// Build with [`Expr::constant`], [`Expr::symbol`], the `+ - *` operators and
/// [`Expr::floor_div`], [`Expr::modulo`], [`Expr::max`], [`Expr::min`], or [`Expr::parse`].
#[derive(Clone)]
pub struct Expr(pub(crate) Arc<Poly>);

fn small_const(v: i64) -> Option<&'static Expr> {
    static CACHE: OnceLock<Vec<Expr>> = OnceLock::new();
    if !(-1..=8).contains(&v) {
        return None;
    }
    let cache = CACHE.get_or_init(|| {
        (-1..=8)
            .map(|v| Expr::from_sorted_terms(const_terms(Coeff::Small(v))))
            .collect()
    });
    Some(&cache[(v + 1) as usize])
}

fn const_terms(c: Coeff) -> Vec<Term> {
    if c.is_zero() {
        Vec::new()
    } else {
        vec![Term {
            mono: Mono::new(),
            coef: c,
        }]
    }
}

impl Expr {
    /// Builds from terms already sorted by [`mono_cmp`], merged and without zero coefficients.
    pub(crate) fn from_sorted_terms(terms: Vec<Term>) -> Expr {
        let mut h = FxHasher::default();
        let mut nodes = 0u32;
        for t in &terms {
            t.coef.hash(&mut h);
            nodes = nodes.saturating_add(1);
            for (a, e) in &t.mono {
                h.write_u64(a.hash_u64());
                h.write_u32(*e);
                nodes = nodes.saturating_add(a.nodes());
            }
            h.write_u8(0xff);
        }
        Expr(Arc::new(Poly {
            terms,
            hash: h.finish(),
            nodes: nodes.max(1),
        }))
    }

    /// Builds from arbitrary terms: sorts, merges equal monomials, drops zeros.
    pub(crate) fn from_terms(mut terms: Vec<Term>) -> Expr {
        terms.sort_by(|a, b| mono_cmp(&a.mono, &b.mono));
        let mut out: Vec<Term> = Vec::with_capacity(terms.len());
        for t in terms {
            if let Some(last) = out.last_mut() {
                if last.mono == t.mono {
                    last.coef = last.coef.add(&t.coef);
                    if last.coef.is_zero() {
                        out.pop();
                    }
                    continue;
                }
            }
            if !t.coef.is_zero() {
                out.push(t);
            }
        }
        Expr::from_sorted_terms(out)
    }

    pub(crate) fn from_coeff(c: Coeff) -> Expr {
        if let Some(v) = c.as_i64() {
            if let Some(e) = small_const(v) {
                return e.clone();
            }
        }
        Expr::from_sorted_terms(const_terms(c))
    }

    pub(crate) fn from_atom(a: Atom) -> Expr {
        let mut mono = Mono::new();
        mono.push((a, 1));
        Expr::from_sorted_terms(vec![Term {
            mono,
            coef: Coeff::ONE,
        }])
    }

    /// The constant `v`.
    pub fn constant(v: i64) -> Expr {
        Expr::from_coeff(Coeff::Small(v))
    }

    /// The symbol `name`.
    pub fn symbol(name: &str) -> Expr {
        Expr::from_atom(Atom::Sym(Symbol::new(name)))
    }

    pub(crate) fn from_symbol(s: &Symbol) -> Expr {
        Expr::from_atom(Atom::Sym(s.clone()))
    }

    pub(crate) fn terms(&self) -> &[Term] {
        &self.0.terms
    }

    pub(crate) fn hash_u64(&self) -> u64 {
        self.0.hash
    }

    /// Number of nodes (terms, atoms and nested arguments): the size measure limits use.
    pub fn node_count(&self) -> usize {
        self.0.nodes as usize
    }

    /// The exact constant, when the expression has no symbols.
    pub(crate) fn as_coeff(&self) -> Option<Coeff> {
        match self.terms() {
            [] => Some(Coeff::ZERO),
            [t] if t.mono.is_empty() => Some(t.coef.clone()),
            _ => None,
        }
    }

    /// `Some(v)` when the expression is a constant that fits in `i64`.
    pub fn as_const(&self) -> Option<i64> {
        self.as_coeff().and_then(|c| c.as_i64())
    }

    /// True when the expression has no symbols.
    pub fn is_const(&self) -> bool {
        self.as_coeff().is_some()
    }

    /// `Some(symbol)` when the expression is exactly one symbol.
    pub fn as_symbol(&self) -> Option<&Symbol> {
        match self.terms() {
            [t] if t.coef.is_one() && t.mono.len() == 1 && t.mono[0].1 == 1 => match &t.mono[0].0 {
                Atom::Sym(s) => Some(s),
                Atom::Func(_) => None,
            },
            _ => None,
        }
    }

    /// The constant term.
    pub(crate) fn constant_term(&self) -> Coeff {
        match self.terms().last() {
            Some(t) if t.mono.is_empty() => t.coef.clone(),
            _ => Coeff::ZERO,
        }
    }

    /// The expression without its constant term.
    pub(crate) fn without_constant(&self) -> Expr {
        match self.terms().last() {
            Some(t) if t.mono.is_empty() => {
                let n = self.terms().len() - 1;
                Expr::from_sorted_terms(self.terms()[..n].to_vec())
            }
            _ => self.clone(),
        }
    }

    /// All symbols, sorted and deduplicated.
    pub fn symbols(&self) -> Vec<Symbol> {
        let mut out = Vec::new();
        self.collect_symbols(&mut out);
        out.sort();
        out.dedup();
        out
    }

    pub(crate) fn collect_symbols(&self, out: &mut Vec<Symbol>) {
        for t in self.terms() {
            for (a, _) in &t.mono {
                match a {
                    Atom::Sym(s) => out.push(s.clone()),
                    Atom::Func(f) => f.args.iter().for_each(|e| e.collect_symbols(out)),
                }
            }
        }
    }

    /// The first `Max`/`Min` atom (outermost first), if any.
    pub(crate) fn find_extremum(&self) -> Option<Atom> {
        for t in self.terms() {
            for (a, _) in &t.mono {
                if let Atom::Func(f) = a {
                    if matches!(f.kind, FuncKind::Max | FuncKind::Min) {
                        return Some(a.clone());
                    }
                    if let Some(x) = f.args.iter().find_map(|x| x.find_extremum()) {
                        return Some(x);
                    }
                }
            }
        }
        None
    }

    /// True when some atom (at any depth) is a `FloorDiv` or `Mod` node.
    pub(crate) fn has_div_mod(&self) -> bool {
        self.terms().iter().any(|t| {
            t.mono.iter().any(|(a, _)| match a {
                Atom::Sym(_) => false,
                Atom::Func(f) => {
                    matches!(f.kind, FuncKind::FloorDiv | FuncKind::Mod)
                        || f.args.iter().any(|x| x.has_div_mod())
                }
            })
        })
    }

    /// Replaces every occurrence (at any depth) of the atom `target` by `with`.
    pub(crate) fn replace_atom(&self, target: &Atom, with: &Expr) -> Expr {
        if !self.has_non_polynomial() {
            return self.clone();
        }
        self.map_atoms(&|a| {
            if a == target {
                return Some(with.clone());
            }
            match a {
                Atom::Sym(_) => None,
                Atom::Func(f) => {
                    let args: Vec<Expr> = f
                        .args
                        .iter()
                        .map(|x| x.replace_atom(target, with))
                        .collect();
                    if args.iter().zip(f.args.iter()).all(|(x, y)| x == y) {
                        None
                    } else {
                        Some(rebuild_func(f.kind, &args))
                    }
                }
            }
        })
    }

    /// True when some atom is a `FloorDiv`/`Mod`/`Max`/`Min` node.
    pub fn has_non_polynomial(&self) -> bool {
        self.terms()
            .iter()
            .any(|t| t.mono.iter().any(|(a, _)| matches!(a, Atom::Func(_))))
    }

    /// Multiplies every coefficient by `c`.
    pub(crate) fn scale(&self, c: &Coeff) -> Expr {
        if c.is_zero() {
            return Expr::constant(0);
        }
        if c.is_one() {
            return self.clone();
        }
        Expr::from_sorted_terms(
            self.terms()
                .iter()
                .map(|t| Term {
                    mono: t.mono.clone(),
                    coef: t.coef.mul(c),
                })
                .collect(),
        )
    }

    /// `self + other`.
    pub fn add(&self, other: &Expr) -> Expr {
        let (a, b) = (self.terms(), other.terms());
        if a.is_empty() {
            return other.clone();
        }
        if b.is_empty() {
            return self.clone();
        }
        let mut out = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            match mono_cmp(&a[i].mono, &b[j].mono) {
                Ordering::Less => {
                    out.push(a[i].clone());
                    i += 1;
                }
                Ordering::Greater => {
                    out.push(b[j].clone());
                    j += 1;
                }
                Ordering::Equal => {
                    let c = a[i].coef.add(&b[j].coef);
                    if !c.is_zero() {
                        out.push(Term {
                            mono: a[i].mono.clone(),
                            coef: c,
                        });
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
        out.extend(a[i..].iter().cloned());
        out.extend(b[j..].iter().cloned());
        if out.len() == 1 && out[0].mono.is_empty() {
            return Expr::from_coeff(out[0].coef.clone());
        }
        Expr::from_sorted_terms(out)
    }

    /// `-self`.
    pub fn neg(&self) -> Expr {
        self.scale(&Coeff::Small(-1))
    }

    /// `self - other`.
    pub fn sub(&self, other: &Expr) -> Expr {
        self.add(&other.neg())
    }

    /// `self * other` (expanded into the normal form).
    pub fn mul(&self, other: &Expr) -> Expr {
        if let Some(c) = other.as_coeff() {
            return self.scale(&c);
        }
        if let Some(c) = self.as_coeff() {
            return other.scale(&c);
        }
        let mut out = Vec::with_capacity(self.terms().len() * other.terms().len());
        for x in self.terms() {
            for y in other.terms() {
                out.push(Term {
                    mono: mono_mul(&x.mono, &y.mono),
                    coef: x.coef.mul(&y.coef),
                });
            }
        }
        Expr::from_terms(out)
    }

    /// `self ** e`.
    pub fn pow(&self, e: u32) -> Expr {
        if let Some(c) = self.as_coeff() {
            return Expr::from_coeff(c.pow(e));
        }
        let mut acc = Expr::constant(1);
        for _ in 0..e {
            acc = acc.mul(self);
        }
        acc
    }

    /// The gcd of all coefficients (positive; 0 for the zero expression).
    pub(crate) fn content(&self) -> Coeff {
        let mut g = Coeff::ZERO;
        for t in self.terms() {
            g = g.gcd(&t.coef);
            if g.is_one() {
                break;
            }
        }
        g
    }

    /// Divides every coefficient by `c` (the caller guarantees exactness).
    pub(crate) fn div_exact(&self, c: &Coeff) -> Expr {
        if c.is_one() {
            return self.clone();
        }
        Expr::from_sorted_terms(
            self.terms()
                .iter()
                .map(|t| Term {
                    mono: t.mono.clone(),
                    coef: t.coef.div_floor(c).unwrap_or(Coeff::ZERO),
                })
                .collect(),
        )
    }

    /// Splits `self = c*q + r` with the coefficients of `r` in `[0, c)` (`c > 0`).
    fn split_by(&self, c: &Coeff) -> (Expr, Expr) {
        let mut q = Vec::new();
        let mut r = Vec::new();
        for t in self.terms() {
            let qc = t.coef.div_floor(c).unwrap_or(Coeff::ZERO);
            let rc = t.coef.mod_floor(c).unwrap_or(Coeff::ZERO);
            if !qc.is_zero() {
                q.push(Term {
                    mono: t.mono.clone(),
                    coef: qc,
                });
            }
            if !rc.is_zero() {
                r.push(Term {
                    mono: t.mono.clone(),
                    coef: rc,
                });
            }
        }
        (Expr::from_sorted_terms(q), Expr::from_sorted_terms(r))
    }

    /// Splits off the largest monomial `m` (product of symbols, coefficient 1) that divides
    /// every term and whose symbols all satisfy `positive`: returns `(m, self / m)`, or
    /// `None` when there is no such factor (or a coefficient is not an `i64`). Function
    /// atoms (`a*FloorDiv(b, 2)`) are integer-valued factors that stay in the quotient. With
    /// every symbol of `m` positive, `p <= 0`, `p == 0` and `p != 0` are equivalent to the
    /// same relation on `p / m`. Works on the terms
    /// directly: `m` is the first term's kept factors at their smallest exponent (already
    /// in canonical atom order), each quotient term one exponent subtraction.
    pub fn split_positive_monomial(
        &self,
        positive: &dyn Fn(&Symbol) -> bool,
    ) -> Option<(Expr, Expr)> {
        let terms = self.terms();
        // Function atoms (`FloorDiv`, `Mod`, `Max`, `Min`) are integer-valued factors like
        // any other: they stay in the quotient, only symbol factors are cancelled.
        if terms.iter().any(|t| t.coef.as_i64().is_none()) {
            return None;
        }
        let (first, rest) = terms.split_first()?;
        let mut common: Mono = first
            .mono
            .iter()
            .filter(|(a, _)| matches!(a, Atom::Sym(s) if positive(s)))
            .cloned()
            .collect();
        for t in rest {
            common.retain(|(a, e)| match t.mono.iter().find(|(b, _)| b == a) {
                Some((_, f)) => {
                    *e = (*e).min(*f);
                    true
                }
                None => false,
            });
            if common.is_empty() {
                return None;
            }
        }
        if common.is_empty() {
            return None;
        }
        let quotient = terms
            .iter()
            .map(|t| {
                Some(Term {
                    mono: mono_div(&t.mono, &common)?,
                    coef: t.coef.clone(),
                })
            })
            .collect::<Option<Vec<Term>>>()?;
        let m = Expr::from_sorted_terms(vec![Term {
            mono: common,
            coef: Coeff::ONE,
        }]);
        Some((m, Expr::from_terms(quotient)))
    }

    /// If `other` is a single monomial `c*m` and every term of `self` is divisible by it
    /// (coefficient and monomial), returns the exact quotient.
    pub(crate) fn div_by_monomial(&self, other: &Expr) -> Option<Expr> {
        let [d] = other.terms() else { return None };
        let mut out = Vec::with_capacity(self.terms().len());
        for t in self.terms() {
            if t.coef.mod_floor(&d.coef)? != Coeff::ZERO {
                return None;
            }
            let mono = mono_div(&t.mono, &d.mono)?;
            out.push(Term {
                mono,
                coef: t.coef.div_floor(&d.coef)?,
            });
        }
        Some(Expr::from_terms(out))
    }

    /// Floor division (rounds toward negative infinity, like Python's `//`).
    ///
    /// Canonicalization only uses identities valid for every value of the symbols: constant
    /// divisors are pulled through (`(c*q + r) // c == q + r // c`), symbolic divisors stay
    /// as a `FloorDiv` atom (so division by zero is still reported when evaluated).
    pub fn floor_div(&self, other: &Expr) -> Expr {
        if let Some(c) = other.as_coeff() {
            if c.is_zero() {
                return Expr::binary_atom(FuncKind::FloorDiv, self.clone(), other.clone());
            }
            if let Some(a) = self.as_coeff() {
                return Expr::from_coeff(a.div_floor(&c).unwrap_or(Coeff::ZERO));
            }
            if c.signum() < 0 {
                return self.neg().floor_div(&other.neg());
            }
            if c.is_one() {
                return self.clone();
            }
            let (q, r) = self.split_by(&c);
            let rest = if let Some(rc) = r.as_coeff() {
                Expr::from_coeff(rc.div_floor(&c).unwrap_or(Coeff::ZERO))
            } else {
                let g = r.content().gcd(&c);
                let (r, c) = (r.div_exact(&g), c.div_floor(&g).unwrap_or(Coeff::ONE));
                if c.is_one() {
                    r
                } else {
                    Expr::binary_atom(FuncKind::FloorDiv, r, Expr::from_coeff(c))
                }
            };
            return q.add(&rest);
        }
        Expr::binary_atom(FuncKind::FloorDiv, self.clone(), other.clone())
    }

    /// Modulo with the sign of the divisor (Python's `%`, sympy's `Mod`).
    pub fn modulo(&self, other: &Expr) -> Expr {
        if let Some(c) = other.as_coeff() {
            if c.is_zero() {
                return Expr::binary_atom(FuncKind::Mod, self.clone(), other.clone());
            }
            if let Some(a) = self.as_coeff() {
                return Expr::from_coeff(a.mod_floor(&c).unwrap_or(Coeff::ZERO));
            }
            if c.signum() < 0 {
                return self.neg().modulo(&other.neg()).neg();
            }
            if c.is_one() {
                return Expr::constant(0);
            }
            let (_, r) = self.split_by(&c);
            if let Some(rc) = r.as_coeff() {
                return Expr::from_coeff(rc.mod_floor(&c).unwrap_or(Coeff::ZERO));
            }
            let g = r.content().gcd(&c);
            let (r, c2) = (r.div_exact(&g), c.div_floor(&g).unwrap_or(Coeff::ONE));
            if c2.is_one() {
                return Expr::constant(0);
            }
            let m = Expr::binary_atom(FuncKind::Mod, r, Expr::from_coeff(c2));
            return m.scale(&g);
        }
        Expr::binary_atom(FuncKind::Mod, self.clone(), other.clone())
    }

    /// An uninterpreted `FloorDiv`/`Mod` atom of two operands (what canonicalization leaves
    /// when no identity applies).
    fn binary_atom(kind: FuncKind, a: Expr, b: Expr) -> Expr {
        Expr::from_atom(Atom::func(kind, smallvec::smallvec![a, b]))
    }

    fn as_func(&self, kind: FuncKind) -> Option<&[Expr]> {
        match self.terms() {
            [t] if t.coef.is_one() && t.mono.len() == 1 && t.mono[0].1 == 1 => match &t.mono[0].0 {
                Atom::Func(f) if f.kind == kind => Some(&f.args),
                _ => None,
            },
            _ => None,
        }
    }

    /// `Max(self, other)`.
    pub fn max(&self, other: &Expr) -> Expr {
        Expr::extremum(FuncKind::Max, &[self.clone(), other.clone()])
    }

    /// `Min(self, other)`.
    pub fn min(&self, other: &Expr) -> Expr {
        Expr::extremum(FuncKind::Min, &[self.clone(), other.clone()])
    }

    /// `Max(args..)` or `Min(args..)`, canonicalized: nested nodes of the same kind are
    /// flattened, arguments sorted and deduplicated, and an argument dominated by another one
    /// by a constant difference is dropped.
    pub(crate) fn extremum(kind: FuncKind, args: &[Expr]) -> Expr {
        let is_max = kind == FuncKind::Max;
        let mut flat: Vec<Expr> = Vec::with_capacity(args.len());
        for a in args {
            match a.as_func(kind) {
                Some(inner) => flat.extend(inner.iter().cloned()),
                None => flat.push(a.clone()),
            }
        }
        flat.sort_by(Expr::canon_cmp);
        flat.dedup();
        // Drop arguments that another argument dominates by a constant difference.
        let mut keep = vec![true; flat.len()];
        for i in 0..flat.len() {
            if !keep[i] {
                continue;
            }
            for j in 0..flat.len() {
                if i == j || !keep[j] {
                    continue;
                }
                if let Some(d) = flat[i].sub(&flat[j]).as_coeff() {
                    // d = flat[i] - flat[j]; for Max drop the smaller one.
                    let i_wins = if is_max {
                        d.signum() >= 0
                    } else {
                        d.signum() <= 0
                    };
                    if i_wins {
                        keep[j] = false;
                    } else {
                        keep[i] = false;
                        break;
                    }
                }
            }
        }
        let kept: SmallVec<[Expr; 2]> = flat
            .into_iter()
            .zip(keep)
            .filter(|(_, k)| *k)
            .map(|(e, _)| e)
            .collect();
        match kept.len() {
            0 => Expr::constant(0),
            1 => kept.into_iter().next().unwrap_or_else(|| Expr::constant(0)),
            _ => Expr::from_atom(Atom::func(kind, kept)),
        }
    }

    /// True when some symbol (also inside `FloorDiv`/`Mod`/`Max`/`Min`) satisfies `f`.
    pub(crate) fn any_symbol(&self, f: &dyn Fn(&Symbol) -> bool) -> bool {
        self.terms().iter().any(|t| {
            t.mono.iter().any(|(a, _)| match a {
                Atom::Sym(s) => f(s),
                Atom::Func(func) => func.args.iter().any(|x| x.any_symbol(f)),
            })
        })
    }

    /// Replaces symbols by expressions (and re-canonicalizes).
    pub fn substitute(&self, f: &dyn Fn(&Symbol) -> Option<Expr>) -> Expr {
        if !self.any_symbol(&|s| f(s).is_some()) {
            return self.clone();
        }
        self.map_atoms(&|a| match a {
            Atom::Sym(s) => f(s),
            Atom::Func(func) => {
                let args: Vec<Expr> = func.args.iter().map(|x| x.substitute(f)).collect();
                if args.iter().zip(func.args.iter()).all(|(x, y)| x == y) {
                    None
                } else {
                    Some(rebuild_func(func.kind, &args))
                }
            }
        })
    }

    /// Replaces atoms for which `f` returns `Some` (and re-canonicalizes). `f` handles any
    /// recursion into function arguments itself.
    pub(crate) fn map_atoms(&self, f: &dyn Fn(&Atom) -> Option<Expr>) -> Expr {
        let mut changed = false;
        let mut out_terms: Vec<Expr> = Vec::with_capacity(self.terms().len());
        for t in self.terms() {
            let mut term = Expr::from_coeff(t.coef.clone());
            let mut simple = Mono::new();
            for (a, e) in &t.mono {
                match f(a) {
                    Some(r) => {
                        changed = true;
                        term = term.mul(&r.pow(*e));
                    }
                    None => simple.push((a.clone(), *e)),
                }
            }
            if !simple.is_empty() {
                term = term.mul(&Expr::from_sorted_terms(vec![Term {
                    mono: simple,
                    coef: Coeff::ONE,
                }]));
            }
            out_terms.push(term);
        }
        if !changed {
            return self.clone();
        }
        out_terms.iter().fold(Expr::constant(0), |s, t| s.add(t))
    }
}

/// Re-applies the canonicalizing constructor for a function node.
pub(crate) fn rebuild_func(kind: FuncKind, args: &[Expr]) -> Expr {
    match kind {
        FuncKind::FloorDiv => args[0].floor_div(&args[1]),
        FuncKind::Mod => args[0].modulo(&args[1]),
        FuncKind::Max | FuncKind::Min => Expr::extremum(kind, args),
    }
}

impl PartialEq for Expr {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || (self.0.hash == other.0.hash
                && self.0.nodes == other.0.nodes
                && self.0.terms == other.0.terms)
    }
}
impl Eq for Expr {}

impl Hash for Expr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash)
    }
}

impl Expr {
    /// The canonical total order (used to sort arguments; not a numeric order).
    pub(crate) fn canon_cmp(&self, other: &Self) -> Ordering {
        if Arc::ptr_eq(&self.0, &other.0) {
            return Ordering::Equal;
        }
        for (a, b) in self.terms().iter().zip(other.terms().iter()) {
            let o = mono_cmp(&a.mono, &b.mono).then_with(|| a.coef.cmp_num(&b.coef));
            if o != Ordering::Equal {
                return o;
            }
        }
        self.terms().len().cmp(&other.terms().len())
    }
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Expr({self})")
    }
}

macro_rules! bin_ops {
    ($tr:ident, $m:ident, $imp:ident) => {
        impl std::ops::$tr<&Expr> for &Expr {
            type Output = Expr;
            fn $m(self, rhs: &Expr) -> Expr {
                Expr::$imp(self, rhs)
            }
        }
        impl std::ops::$tr<Expr> for Expr {
            type Output = Expr;
            fn $m(self, rhs: Expr) -> Expr {
                Expr::$imp(&self, &rhs)
            }
        }
        impl std::ops::$tr<i64> for Expr {
            type Output = Expr;
            fn $m(self, rhs: i64) -> Expr {
                Expr::$imp(&self, &Expr::constant(rhs))
            }
        }
    };
}
bin_ops!(Add, add, add);
bin_ops!(Sub, sub, sub);
bin_ops!(Mul, mul, mul);

impl std::ops::Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        Expr::neg(&self)
    }
}

impl From<i64> for Expr {
    fn from(v: i64) -> Self {
        Expr::constant(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: &str) -> Expr {
        Expr::symbol(n)
    }

    #[test]
    fn common_monomial_split_matches_its_definition() {
        // Against the definition: `m` the product of the kept symbols at their smallest
        // exponent over all terms (built by multiplication), the quotient by division.
        let syms = ["a", "b", "c", "d"];
        let mut rng = crate::testing::Lcg::new(7);
        let mut split = 0;
        for _ in 0..3000 {
            let mut e = Expr::constant(0);
            for _ in 0..1 + rng.below(3) {
                let mut t = Expr::constant(rng.below(7) as i64 - 3);
                for s in syms {
                    t = t.mul(&Expr::symbol(s).pow(rng.below(3) as u32));
                }
                e = e.add(&t);
            }
            let keep = |s: &Symbol| s.as_str() != "d";
            let naive = (|| {
                let terms = e.polynomial_terms()?;
                let (first, rest) = terms.split_first()?;
                let common: Vec<(Symbol, u32)> = first
                    .1
                    .iter()
                    .filter(|(s, _)| keep(s))
                    .map(|(s, k)| {
                        let min = rest.iter().fold(*k, |m, (_, fs)| {
                            fs.iter().find(|(t, _)| t == s).map_or(0, |(_, f)| m.min(*f))
                        });
                        (s.clone(), min)
                    })
                    .filter(|(_, k)| *k > 0)
                    .collect();
                if common.is_empty() {
                    return None;
                }
                let m = common
                    .iter()
                    .fold(Expr::constant(1), |acc, (s, k)| acc.mul(&Expr::from_symbol(s).pow(*k)));
                let q = e.div_by_monomial(&m)?;
                Some((m, q))
            })();
            let fast = e.split_positive_monomial(&keep);
            assert_eq!(fast, naive, "{e}");
            if let Some((m, q)) = fast {
                assert_eq!(m.mul(&q), e);
                assert_eq!(m.hash_u64(), naive.as_ref().unwrap().0.hash_u64());
                split += 1;
            }
        }
        assert!(split > 300, "only {split} expressions had a common factor");
    }

    #[test]
    fn hasher_words_are_zero_padded_little_endian_chunks() {
        // The definition `write` implements: each chunk of up to 8 bytes, zero-padded to a
        // little-endian word. Every length across two words and a remainder.
        let bytes: Vec<u8> = (1..=23u8).map(|b| b.wrapping_mul(37)).collect();
        for len in 0..=bytes.len() {
            let mut fast = FxHasher::default();
            fast.write(&bytes[..len]);
            let mut slow = FxHasher::default();
            for chunk in bytes[..len].chunks(8) {
                let mut buf = [0u8; 8];
                buf[..chunk.len()].copy_from_slice(chunk);
                slow.write_u64(u64::from_le_bytes(buf));
            }
            assert_eq!(fast.finish(), slow.finish(), "length {len}");
        }
    }

    #[test]
    fn polynomial_identities_are_structural() {
        let (a, b, c) = (s("a"), s("b"), s("c"));
        assert_eq!(a.mul(&b.add(&c)), c.mul(&a).add(&a.mul(&b)));
        assert_eq!(a.mul(&b).mul(&c), c.mul(&b).mul(&a));
        assert_eq!(a.sub(&a), Expr::constant(0));
        assert_eq!(
            (a.clone() + b.clone()).pow(2),
            a.mul(&a) + a.mul(&b) * 2 + b.mul(&b)
        );
    }

    #[test]
    fn floor_div_and_mod_by_constants() {
        let a = s("a");
        assert_eq!(
            (a.clone() * 4 + 6).floor_div(&Expr::constant(2)),
            a.clone() * 2 + 3
        );
        assert_eq!(
            (a.clone() * 4 + 7).floor_div(&Expr::constant(2)),
            a.clone() * 2 + 3
        );
        assert_eq!(
            (a.clone() * 4 + 7).modulo(&Expr::constant(2)),
            Expr::constant(1)
        );
        assert_eq!(
            Expr::constant(-7).floor_div(&Expr::constant(2)),
            Expr::constant(-4)
        );
        assert_eq!(
            (a.clone() * 2 + 2).floor_div(&Expr::constant(4)),
            (a.clone() + 1).floor_div(&Expr::constant(2))
        );
    }

    #[test]
    fn max_min_canonical() {
        let a = s("a");
        assert_eq!(a.max(&(a.clone() + 1)), a.clone() + 1);
        assert_eq!(a.min(&(a.clone() + 1)), a.clone());
        assert_eq!(Expr::constant(3).max(&Expr::constant(5)), Expr::constant(5));
        let b = s("b");
        assert_eq!(a.max(&b).max(&a), b.max(&a));
    }
}
