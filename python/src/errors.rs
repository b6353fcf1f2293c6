//! Engine errors as Python exceptions.
//!
//! The hierarchy lives in Python (`symstride/_errors.py`), where it is readable and
//! documented; this file only picks the class for each [`Error`] variant. The message is
//! the engine's `Display` text, unchanged, and the instance carries the golden category
//! (`err.category`) and the variant name (`err.kind`), so Python code can branch on the same
//! categories the conformance files use.

use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::PyModule;
use symstride::Error;

static ERRORS: GILOnceCell<Py<PyModule>> = GILOnceCell::new();

/// The Python class name for an engine error, and the variant name.
fn class_of(e: &Error) -> (&'static str, &'static str) {
    match e {
        Error::Parse { .. } => ("ParseError", "Parse"),
        Error::DataDependent { .. } => ("DataDependentError", "DataDependent"),
        Error::Broadcast { .. } => ("BroadcastError", "Broadcast"),
        Error::InvalidLayout { .. } => ("InvalidInputError", "InvalidLayout"),
        Error::Overflow { .. } => ("SymOverflowError", "Overflow"),
        Error::MemoryOverlap { .. } => ("MemoryOverlapError", "MemoryOverlap"),
        Error::Symbol { .. } => ("SymbolError", "Symbol"),
        Error::DivisionByZero { .. } => ("SymZeroDivisionError", "DivisionByZero"),
        Error::Limit { .. } => ("LimitError", "Limit"),
        Error::Artifact { .. } => ("ArtifactError", "Artifact"),
        Error::Index { .. } => ("DimIndexError", "Index"),
        Error::Shape { .. } => ("ShapeError", "Shape"),
        Error::View { .. } => ("ViewError", "View"),
        Error::Expand { .. } => ("ExpandError", "Expand"),
        Error::DType { .. } => ("DTypeError", "DType"),
        Error::Io { .. } => ("SymstrideIOError", "Io"),
        Error::Argument { .. } => ("InvalidInputError", "Argument"),
        _ => ("InvalidInputError", "Invalid"),
    }
}

/// An exception class of `symstride._errors` by name.
pub fn class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let m = ERRORS.get_or_try_init(py, || {
        PyModule::import(py, "symstride._errors").map(Bound::unbind)
    })?;
    m.bind(py).getattr(name)
}

/// Builds the Python exception for `e`.
pub fn to_py(e: Error) -> PyErr {
    Python::with_gil(|py| {
        let (name, kind) = class_of(&e);
        let built = class(py, name).and_then(|cls| {
            let inst = cls.call1((e.to_string(),))?;
            inst.setattr("category", e.category())?;
            inst.setattr("kind", kind)?;
            Ok(PyErr::from_value(inst))
        });
        built.unwrap_or_else(|err| err)
    })
}

/// A Python exception of class `name` (from `symstride._errors`) with `message`.
pub fn raise(name: &str, message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::with_gil(
        |py| match class(py, name).and_then(|c| c.call1((message,))) {
            Ok(inst) => PyErr::from_value(inst),
            Err(err) => err,
        },
    )
}

/// `Result<T, Error>` to `PyResult<T>`.
pub trait IntoPyResult<T> {
    /// Converts the engine's error to its Python exception.
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for Result<T, Error> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
