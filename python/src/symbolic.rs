//! The symbolic layer: `ShapeEnv`, `SymInt`, `SymBool`, `Guard`, and the conversion of
//! Python arguments that may be ints or `SymInt`s.
//!
//! The Python objects are thin handles over the crate's types: arithmetic and comparisons
//! call the crate's operators (canonical polynomial forms, hints carried along), and a
//! `SymBool` used where Python needs a `bool` (`if s == 1:`) goes through
//! [`Bool::guard`], which records a guard in the environment exactly as the crate's own
//! algorithms do. Constant results come back as plain Python `int`/`bool`.

use crate::errors::{raise, IntoPyResult};
use pyo3::exceptions::{PyTypeError, PyZeroDivisionError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict};
use pyo3::IntoPyObjectExt;
use symstride::sym::{Bindings, BoolExpr, Guard, ShapeEnv, SymBool, SymInt, SymbolSpec};
use symstride::{Bool, Int};

/// A symbolic size: an expression over the symbols of a `ShapeEnv`, with its value at the
/// hints.
#[pyclass(name = "SymInt", module = "symstride", frozen)]
#[derive(Clone)]
pub struct PySymInt(pub SymInt);

/// A symbolic condition. Using it as a Python `bool` records a guard.
#[pyclass(name = "SymBool", module = "symstride", frozen)]
#[derive(Clone)]
pub struct PySymBool(pub SymBool);

/// A recorded guard: a condition on the symbols and the reason it was recorded.
#[pyclass(name = "Guard", module = "symstride", frozen)]
#[derive(Clone)]
pub struct PyGuard(pub Guard);

/// The symbols of one trace and the guards recorded on them.
#[pyclass(name = "ShapeEnv", module = "symstride", frozen)]
#[derive(Clone)]
pub struct PyShapeEnv(pub ShapeEnv);

/// A Python number argument: an `int` or a `SymInt`.
#[derive(Clone)]
pub enum Num {
    /// A Python int (or anything with `__index__`).
    I(i64),
    /// A `SymInt`.
    S(SymInt),
}

impl<'py> FromPyObject<'py> for Num {
    fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(s) = ob.downcast::<PySymInt>() {
            return Ok(Num::S(s.get().0.clone()));
        }
        if ob.is_instance_of::<PyBool>() {
            return Err(PyTypeError::new_err(
                "expected an int or a SymInt, got a bool",
            ));
        }
        ob.extract::<i64>().map(Num::I)
    }
}

impl Num {
    /// As a `SymInt` (a constant for an int).
    pub fn sym(&self) -> SymInt {
        match self {
            Num::I(v) => SymInt::constant(*v),
            Num::S(s) => s.clone(),
        }
    }
}

/// Lists of numbers, all concrete or all symbolic (ints become constants when any value
/// is symbolic), so one generic call serves both.
pub enum Lists {
    /// Every value is an int.
    I(Vec<Vec<i64>>),
    /// At least one value is a `SymInt`.
    S(Vec<Vec<SymInt>>),
}

impl Lists {
    /// Groups `lists` by kind.
    pub fn new(lists: Vec<Vec<Num>>) -> Lists {
        let symbolic = lists.iter().flatten().any(|n| matches!(n, Num::S(_)));
        if symbolic {
            Lists::S(
                lists
                    .iter()
                    .map(|l| l.iter().map(Num::sym).collect())
                    .collect(),
            )
        } else {
            Lists::I(
                lists
                    .into_iter()
                    .map(|l| {
                        l.into_iter()
                            .map(|n| match n {
                                Num::I(v) => v,
                                Num::S(_) => unreachable!("checked above"),
                            })
                            .collect()
                    })
                    .collect(),
            )
        }
    }
}

/// Runs `$body` with `$xs` bound to the concrete (`Vec<Vec<i64>>`) or the symbolic
/// (`Vec<Vec<SymInt>>`) lists: the crate's generic function is called at the right type.
#[macro_export]
macro_rules! generic {
    ($lists:expr, |$xs:ident| $body:expr) => {
        match $lists {
            $crate::symbolic::Lists::I($xs) => $body,
            $crate::symbolic::Lists::S($xs) => $body,
        }
    };
}

/// An engine integer as a Python object: `int` when constant, else `SymInt`.
pub trait ToPyNum {
    /// Converts.
    fn to_py(&self, py: Python<'_>) -> PyResult<PyObject>;
}

impl ToPyNum for i64 {
    fn to_py(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.into_py_any(py)
    }
}

impl ToPyNum for SymInt {
    fn to_py(&self, py: Python<'_>) -> PyResult<PyObject> {
        match self.as_const() {
            Some(v) => v.into_py_any(py),
            None => PySymInt(self.clone()).into_py_any(py),
        }
    }
}

/// A list of engine integers as a Python list.
pub fn to_py_list<I: ToPyNum>(py: Python<'_>, xs: &[I]) -> PyResult<PyObject> {
    let items = xs
        .iter()
        .map(|x| x.to_py(py))
        .collect::<PyResult<Vec<_>>>()?;
    items.into_py_any(py)
}

/// An engine boolean as a Python object: `bool` when constant, else `SymBool`.
pub trait ToPyBool {
    /// Converts.
    fn to_py(&self, py: Python<'_>) -> PyResult<PyObject>;
}

impl ToPyBool for bool {
    fn to_py(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.into_py_any(py)
    }
}

impl ToPyBool for SymBool {
    fn to_py(&self, py: Python<'_>) -> PyResult<PyObject> {
        match self.expr().as_const() {
            Some(v) => v.into_py_any(py),
            None => PySymBool(self.clone()).into_py_any(py),
        }
    }
}

/// `**bindings` as engine bindings.
pub fn bindings(kw: Option<&Bound<'_, PyDict>>) -> PyResult<Bindings> {
    let mut b = Bindings::new();
    if let Some(kw) = kw {
        for (k, v) in kw.iter() {
            let name: String = k.extract()?;
            let value: i64 = v.extract().map_err(|_| {
                raise(
                    "SymbolError",
                    format!("binding `{name}` must be an int, got {v}"),
                )
            })?;
            b.insert(&name, value);
        }
    }
    Ok(b)
}

fn check_divisor(o: &SymInt) -> PyResult<()> {
    if o.as_const() == Some(0) || o.hint() == Some(0) {
        return Err(PyZeroDivisionError::new_err(format!(
            "division by zero (the divisor `{o}` is 0{})",
            if o.as_const().is_some() {
                ""
            } else {
                " at its hint"
            }
        )));
    }
    Ok(())
}

#[pymethods]
impl PySymInt {
    /// The value at the symbols' hints (`None` for unbacked symbols).
    #[getter]
    fn hint(&self) -> Option<i64> {
        self.0.hint()
    }

    /// The canonical expression, printed (`"2*s0 + 1"`).
    #[getter]
    fn expr(&self) -> String {
        self.0.expr().to_string()
    }

    /// The names of the symbols the expression uses.
    #[getter]
    fn free_symbols(&self) -> Vec<String> {
        self.0
            .expr()
            .symbols()
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    /// Evaluates at concrete symbol values: `s.evaluate(s0=3, s1=4)`.
    #[pyo3(signature = (**bindings))]
    fn evaluate(&self, bindings: Option<&Bound<'_, PyDict>>) -> PyResult<i64> {
        self.0.eval(&crate::symbolic::bindings(bindings)?).py()
    }

    fn __add__(&self, py: Python<'_>, o: Num) -> PyResult<PyObject> {
        (&self.0 + &o.sym()).to_py(py)
    }
    fn __radd__(&self, py: Python<'_>, o: Num) -> PyResult<PyObject> {
        (&o.sym() + &self.0).to_py(py)
    }
    fn __sub__(&self, py: Python<'_>, o: Num) -> PyResult<PyObject> {
        (&self.0 - &o.sym()).to_py(py)
    }
    fn __rsub__(&self, py: Python<'_>, o: Num) -> PyResult<PyObject> {
        (&o.sym() - &self.0).to_py(py)
    }
    fn __mul__(&self, py: Python<'_>, o: Num) -> PyResult<PyObject> {
        (&self.0 * &o.sym()).to_py(py)
    }
    fn __rmul__(&self, py: Python<'_>, o: Num) -> PyResult<PyObject> {
        (&o.sym() * &self.0).to_py(py)
    }
    fn __floordiv__(&self, py: Python<'_>, o: Num) -> PyResult<PyObject> {
        let o = o.sym();
        check_divisor(&o)?;
        self.0.floor_div(&o).to_py(py)
    }
    fn __rfloordiv__(&self, py: Python<'_>, o: Num) -> PyResult<PyObject> {
        check_divisor(&self.0)?;
        o.sym().floor_div(&self.0).to_py(py)
    }
    fn __mod__(&self, py: Python<'_>, o: Num) -> PyResult<PyObject> {
        let o = o.sym();
        check_divisor(&o)?;
        self.0.modulo(&o).to_py(py)
    }
    fn __rmod__(&self, py: Python<'_>, o: Num) -> PyResult<PyObject> {
        check_divisor(&self.0)?;
        o.sym().modulo(&self.0).to_py(py)
    }
    fn __neg__(&self, py: Python<'_>) -> PyResult<PyObject> {
        (-self.0.clone()).to_py(py)
    }
    fn __pos__(&self) -> Self {
        self.clone()
    }

    fn __richcmp__(
        &self,
        py: Python<'_>,
        o: Num,
        op: pyo3::basic::CompareOp,
    ) -> PyResult<PyObject> {
        use pyo3::basic::CompareOp::*;
        let o = o.sym();
        let b = match op {
            Eq => self.0.sym_eq(&o),
            Ne => self.0.sym_ne(&o),
            Lt => self.0.sym_lt(&o),
            Le => self.0.sym_le(&o),
            Gt => self.0.sym_gt(&o),
            Ge => self.0.sym_ge(&o),
        };
        b.to_py(py)
    }

    /// `int(s)` specializes: it records the guard `s == hint` (PyTorch's `guard_int`).
    fn __int__(&self) -> PyResult<i64> {
        let h = self.0.hint().ok_or_else(|| {
            raise(
                "DataDependentError",
                format!("int() of `{}`, which depends on an unbacked symbol", self.0),
            )
        })?;
        let me = self.0.clone();
        me.sym_eq(&SymInt::constant(h))
            .guard(|| format!("int({me}) in Python specialized it to {h}"))
            .py()?;
        Ok(h)
    }

    fn __index__(&self) -> PyResult<i64> {
        self.__int__()
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        match self.0.hint() {
            Some(h) => format!("SymInt({}, hint={h})", self.0),
            None => format!("SymInt({}, unbacked)", self.0),
        }
    }
}

#[pymethods]
impl PySymBool {
    /// The value at the symbols' hints (`None` when it depends on unbacked symbols).
    #[getter]
    fn hint(&self) -> Option<bool> {
        self.0.hint()
    }

    /// The canonical condition, printed (`"s0 >= 2"`).
    #[getter]
    fn expr(&self) -> String {
        self.0.expr().to_string()
    }

    /// `True`/`False` when decided for every binding the environment allows (ranges and
    /// the guards recorded so far), else `None`. Records nothing.
    fn statically_known(&self) -> Option<bool> {
        self.0.statically_known()
    }

    /// Evaluates at concrete symbol values.
    #[pyo3(signature = (**bindings))]
    fn evaluate(&self, bindings: Option<&Bound<'_, PyDict>>) -> PyResult<bool> {
        self.0.eval(&crate::symbolic::bindings(bindings)?).py()
    }

    /// Branching in Python: decides statically when possible, otherwise records the
    /// condition (or its negation, as the hints say) as a guard.
    fn __bool__(&self) -> PyResult<bool> {
        let c = self.0.clone();
        self.0.guard(|| format!("bool({c}) in Python")).py()
    }

    fn __and__(&self, py: Python<'_>, o: BoolArg) -> PyResult<PyObject> {
        self.0.and(&o.0).to_py(py)
    }
    fn __rand__(&self, py: Python<'_>, o: BoolArg) -> PyResult<PyObject> {
        o.0.and(&self.0).to_py(py)
    }
    fn __or__(&self, py: Python<'_>, o: BoolArg) -> PyResult<PyObject> {
        self.0.or(&o.0).to_py(py)
    }
    fn __ror__(&self, py: Python<'_>, o: BoolArg) -> PyResult<PyObject> {
        o.0.or(&self.0).to_py(py)
    }
    fn __invert__(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.0.not().to_py(py)
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        match self.0.hint() {
            Some(h) => format!(
                "SymBool({}, hint={})",
                self.0,
                if h { "True" } else { "False" }
            ),
            None => format!("SymBool({}, unbacked)", self.0),
        }
    }
}

/// A `bool` or a `SymBool` argument.
pub struct BoolArg(pub SymBool);

impl<'py> FromPyObject<'py> for BoolArg {
    fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(s) = ob.downcast::<PySymBool>() {
            return Ok(BoolArg(s.get().0.clone()));
        }
        if ob.is_instance_of::<PyBool>() {
            return Ok(BoolArg(SymBool::constant(ob.extract()?)));
        }
        Err(PyTypeError::new_err("expected a bool or a SymBool"))
    }
}

#[pymethods]
impl PyGuard {
    /// The condition, printed (`"s0 >= 2"`).
    #[getter]
    fn cond(&self) -> String {
        self.0.cond.to_string()
    }

    /// Why it was recorded (which algorithm, which step).
    #[getter]
    fn reason(&self) -> String {
        self.0.reason.clone()
    }

    /// Whether the condition holds at concrete symbol values.
    #[pyo3(signature = (**bindings))]
    fn evaluate(&self, bindings: Option<&Bound<'_, PyDict>>) -> PyResult<bool> {
        self.0.cond.eval(&crate::symbolic::bindings(bindings)?).py()
    }

    fn __str__(&self) -> String {
        self.0.cond.to_string()
    }

    fn __repr__(&self) -> String {
        format!(
            "Guard({:?}, reason={:?})",
            self.0.cond.to_string(),
            self.0.reason
        )
    }

    fn __eq__(&self, o: &Bound<'_, PyAny>) -> bool {
        o.downcast::<PyGuard>().is_ok_and(|g| g.get().0 == self.0)
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.0.cond.to_string().hash(&mut h);
        self.0.reason.hash(&mut h);
        h.finish()
    }
}

#[pymethods]
impl PyShapeEnv {
    #[new]
    fn new() -> Self {
        PyShapeEnv(ShapeEnv::default())
    }

    /// Creates a size symbol with example value `hint`, in `[min, max]` (sizes: `min=0`).
    /// `duck=True` reuses an earlier duck symbol with the same hint and range;
    /// `specialize_zero_one=True` returns the int itself for hints 0 and 1 (PyTorch's
    /// default).
    #[pyo3(signature = (name, hint, *, min=0, max=None, duck=false, specialize_zero_one=false))]
    #[allow(clippy::too_many_arguments)] // Python keyword arguments, collected into a SymbolSpec
    fn create_symbol(
        &self,
        py: Python<'_>,
        name: &str,
        hint: i64,
        min: i64,
        max: Option<i64>,
        duck: bool,
        specialize_zero_one: bool,
    ) -> PyResult<PyObject> {
        let spec = SymbolSpec {
            min,
            max,
            duck,
            specialize_zero_one,
        };
        self.0.create_symbol(name, hint, spec).py()?.to_py(py)
    }

    /// Creates an unbacked symbol (a data-dependent size with no example value), `>= min`.
    #[pyo3(signature = (name, *, min=0))]
    fn create_unbacked(&self, name: &str, min: i64) -> PyResult<PySymInt> {
        self.0.create_unbacked(name, min).py().map(PySymInt)
    }

    /// The recorded guards (implied ones pruned), in recording order.
    #[getter]
    fn guards(&self) -> Vec<PyGuard> {
        self.0.guards().into_iter().map(PyGuard).collect()
    }

    /// `{symbol: hint}` of the backed symbols, in creation order.
    #[getter]
    fn hints<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for name in self.0.symbol_names() {
            if let Some(h) = self.0.symbol_hint(&name) {
                d.set_item(name, h)?;
            }
        }
        Ok(d)
    }

    /// Symbol names, in creation order.
    #[getter]
    fn symbols(&self) -> Vec<String> {
        self.0.symbol_names()
    }

    /// The first recorded guard that fails at these concrete symbol values, or `None` when
    /// every guard holds (the traced decisions are then valid for them).
    #[pyo3(signature = (**bindings))]
    fn failed_guard(&self, bindings: Option<&Bound<'_, PyDict>>) -> PyResult<Option<PyGuard>> {
        let set = self.0.guard_set();
        let b = crate::symbolic::bindings(bindings)?;
        Ok(set
            .eval(&b)
            .py()?
            .failed()
            .map(|i| PyGuard(set.guards[i].clone())))
    }

    /// Whether every recorded guard holds at these concrete symbol values.
    #[pyo3(signature = (**bindings))]
    fn admits(&self, bindings: Option<&Bound<'_, PyDict>>) -> PyResult<bool> {
        Ok(self.failed_guard(bindings)?.is_none())
    }

    /// Simplifies an expression with everything known (ranges, guard facts).
    fn simplify(&self, py: Python<'_>, x: Num) -> PyResult<PyObject> {
        let e = self.0.simplify(x.sym().expr());
        SymInt::from_expr(e, &self.0).to_py(py)
    }

    fn __repr__(&self) -> String {
        format!(
            "ShapeEnv(symbols={:?}, guards={})",
            self.0.symbol_names(),
            self.0.guards().len()
        )
    }
}

/// True only when `x` is statically known to be true: a `bool` that is `True`, or a
/// `SymBool` decided true for every binding (ranges and the guards so far). Never records
/// a guard and never fails, also on unbacked symbols.
#[pyfunction]
pub fn statically_known_true(x: BoolArg) -> bool {
    x.0.statically_known_true()
}

/// PyTorch's `guard_or_false`: the value when it can be decided (recording a guard when the
/// hints decide it), `False` when it depends on unbacked symbols.
#[pyfunction]
pub fn guard_or_false(x: BoolArg) -> bool {
    let c = x.0.clone();
    x.0.guard_or_false(|| format!("guard_or_false({c}) in Python"))
}

/// PyTorch's `guard_or_true`: like `guard_or_false` with the default `True`.
#[pyfunction]
pub fn guard_or_true(x: BoolArg) -> bool {
    let c = x.0.clone();
    x.0.guard_or_true(|| format!("guard_or_true({c}) in Python"))
}

/// `max(a, b)` as a value (no branch, no guard).
#[pyfunction]
pub fn sym_max(py: Python<'_>, a: Num, b: Num) -> PyResult<PyObject> {
    match (a, b) {
        (Num::I(a), Num::I(b)) => a.max(b).to_py(py),
        (a, b) => Int::max(&a.sym(), &b.sym()).to_py(py),
    }
}

/// `min(a, b)` as a value (no branch, no guard).
#[pyfunction]
pub fn sym_min(py: Python<'_>, a: Num, b: Num) -> PyResult<PyObject> {
    match (a, b) {
        (Num::I(a), Num::I(b)) => a.min(b).to_py(py),
        (a, b) => Int::min(&a.sym(), &b.sym()).to_py(py),
    }
}

/// Parses a condition over symbols (`"s0 >= 2"`) into its canonical printed form.
#[pyfunction]
pub fn canonical_condition(text: &str) -> PyResult<String> {
    BoolExpr::parse(text).py().map(|c| c.to_string())
}
