//! `symstride.compile` and `Artifact`: programs compiled ahead of time, inspected, checked,
//! saved, loaded and run on numpy arrays.
//!
//! The crate's program layer is reached only through `adapter.rs`; this file converts
//! between Python and the adapter: spec dicts to JSON, `**bindings` and `**arrays` to
//! engine values, layouts and arrays back. `run` releases the GIL while the kernels run.
//! Runs go through the crate's dispatcher (`ProgramDispatcher::run_with`): the admitting
//! specialization's stored kernel plans, and its fused chains unless `fuse=False`.

use crate::adapter::Compiled;
use crate::arrays::{numpy_name, to_array, to_tensor};
use crate::errors::{raise, IntoPyResult};
use crate::symbolic::PyGuard;
use numpy::{PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use symstride::kernel::ExecConfig;
use symstride::program::Value;
use symstride::sym::{Bindings, Expr};
use symstride::Error;

/// A compiled program: its specializations (guards + layouts), ready to check and run.
#[pyclass(name = "Artifact", module = "symstride", frozen)]
pub struct PyArtifact {
    inner: Compiled,
}

/// What `Artifact.check` found for one binding.
#[pyclass(name = "Check", module = "symstride", frozen, get_all)]
pub struct PyCheck {
    /// Whether a specialization's guards admit the binding (its plan is reused).
    pub admitted: bool,
    /// The index of that specialization, or `None`.
    pub specialization: Option<usize>,
    /// When not admitted: the first guard that fails.
    pub failed_guard: Option<PyGuard>,
    /// `{output name: {"sizes", "strides", "dtype", "offset"}}` at the binding (whether
    /// admitted or re-planned), or `None` when the program fails there.
    pub outputs: Option<Py<PyDict>>,
    /// The error category the program gives at the binding (`"shape"`, `"broadcast"`, ...),
    /// or `None`.
    pub error: Option<String>,
    /// The error message, or `None`.
    pub message: Option<String>,
}

#[pymethods]
impl PyCheck {
    fn __bool__(&self) -> bool {
        self.admitted
    }

    fn __repr__(&self) -> String {
        match (&self.specialization, &self.failed_guard, &self.error) {
            (_, _, Some(e)) => format!("Check(admitted={}, error={e:?})", py_bool(self.admitted)),
            (Some(i), _, _) => format!("Check(admitted=True, specialization={i})"),
            (None, Some(g), _) => format!(
                "Check(admitted=False, failed_guard={:?})",
                g.0.cond.to_string()
            ),
            (None, None, _) => "Check(admitted=False)".to_string(),
        }
    }
}

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// A spec given as a dict (or any JSON-serializable object) or as JSON text.
fn spec_json(spec: &Bound<'_, PyAny>) -> PyResult<serde_json::Value> {
    let text: String = if spec.is_instance_of::<PyString>() {
        spec.extract()?
    } else {
        let json = PyModule::import(spec.py(), "json")?;
        json.call_method1("dumps", (spec,))?.extract()?
    };
    serde_json::from_str(&text)
        .map_err(|e| crate::errors::to_py(Error::parse("program spec", e.to_string())))
}

fn layout_dict<'py>(py: Python<'py>, v: &Value<i64>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("sizes", v.sizes.clone())?;
    d.set_item("strides", v.strides.clone())?;
    d.set_item("dtype", numpy_name(v.dtype))?;
    d.set_item("offset", v.offset)?;
    Ok(d)
}

/// Binds the program's symbols from the arrays' shapes and checks every input's rank,
/// sizes and dtype.
fn bind_inputs(c: &Compiled, arrays: &[Bound<'_, PyUntypedArray>]) -> PyResult<Bindings> {
    let p = &c.program;
    let mut b = Bindings::new();
    for (input, a) in p.inputs.iter().zip(arrays) {
        let shape = a.shape();
        if shape.len() != input.sizes.len() {
            return Err(raise(
                "ShapeError",
                format!(
                    "input `{}`: expected {} dimensions, got an array of shape {:?}",
                    input.name,
                    input.sizes.len(),
                    shape
                ),
            ));
        }
        for (d, (e, &got)) in input.sizes.iter().zip(shape).enumerate() {
            let got = got as i64;
            if let [s] = &e.symbols()[..] {
                if *e == Expr::symbol(s.as_str()) {
                    match b.get(s.as_str()) {
                        Some(v) if v != got => {
                            return Err(raise(
                                "ShapeError",
                                format!(
                                    "input `{}` dim {d}: `{s}` is {got} here but {v} in an earlier input",
                                    input.name
                                ),
                            ))
                        }
                        Some(_) => {}
                        None => b.insert(s.as_str(), got),
                    }
                }
            }
        }
    }
    for (input, a) in p.inputs.iter().zip(arrays) {
        for (d, (e, &got)) in input.sizes.iter().zip(a.shape()).enumerate() {
            let want = e.eval(&b).py()?;
            if want != got as i64 {
                return Err(raise(
                    "ShapeError",
                    format!(
                        "input `{}` dim {d}: expected size {e} = {want}, got {got}",
                        input.name
                    ),
                ));
            }
        }
    }
    Ok(b)
}

impl PyArtifact {
    /// The error for a specialization index out of range.
    fn no_specialization(&self, k: i64) -> PyErr {
        raise(
            "DimIndexError",
            format!(
                "specialization {k} out of range ({} specializations)",
                self.inner.num_specializations()
            ),
        )
    }

    /// A specialization index from Python: `0 <= k < num_specializations`, else
    /// `DimIndexError` (an `IndexError`), negative or not.
    fn specialization_index(&self, k: i64) -> PyResult<usize> {
        usize::try_from(k)
            .ok()
            .filter(|&i| i < self.inner.num_specializations())
            .ok_or_else(|| self.no_specialization(k))
    }

    /// The arrays in the program's input order; unknown or missing names are errors.
    fn arrays<'py>(
        &self,
        arrays: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Vec<Bound<'py, PyUntypedArray>>> {
        let p = &self.inner.program;
        if let Some(d) = arrays {
            for k in d.keys() {
                let k: String = k.extract()?;
                if !p.inputs.iter().any(|i| i.name == k) {
                    return Err(raise(
                        "InvalidInputError",
                        format!(
                            "`{k}` is not an input of the program (inputs: {})",
                            names(p.inputs.iter().map(|i| i.name.as_str()))
                        ),
                    ));
                }
            }
        }
        p.inputs
            .iter()
            .map(|i| {
                let a = arrays
                    .and_then(|d| d.get_item(&i.name).ok().flatten())
                    .ok_or_else(|| {
                        raise("InvalidInputError", format!("missing input `{}`", i.name))
                    })?;
                a.downcast_into::<PyUntypedArray>().map_err(|e| {
                    raise(
                        "InvalidInputError",
                        format!(
                            "input `{}` must be a numpy.ndarray, got {}",
                            i.name,
                            e.into_inner().get_type()
                        ),
                    )
                })
            })
            .collect()
    }

    fn run_impl<'py>(
        &self,
        py: Python<'py>,
        arrays: Option<&Bound<'py, PyDict>>,
        retrace: bool,
        fuse: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let p = &self.inner.program;
        let arrays = self.arrays(arrays)?;
        let b = bind_inputs(&self.inner, &arrays)?;
        let mut tensors = Vec::with_capacity(arrays.len());
        let mut writeable = Vec::with_capacity(arrays.len());
        for (input, a) in p.inputs.iter().zip(&arrays) {
            let t = to_tensor(a, &input.name)?;
            if t.dtype() != input.dtype {
                return Err(raise(
                    "DTypeError",
                    format!(
                        "input `{}`: expected dtype {}, got {}",
                        input.name,
                        numpy_name(input.dtype),
                        numpy_name(t.dtype())
                    ),
                ));
            }
            tensors.push(t);
            // SAFETY: reading the flags of a live array.
            writeable.push(
                unsafe { (*a.as_array_ptr()).flags } & numpy::npyffi::NPY_ARRAY_WRITEABLE != 0,
            );
        }
        let inner = &self.inner;
        let ran = py
            .allow_threads(|| inner.run(&b, tensors, retrace, fuse, &ExecConfig::default()))
            .py()?;
        let Some(ran) = ran else {
            let c = self.inner.check(&b).py()?;
            let g = c
                .failed_guard
                .map(|g| format!("`{}` ({})", g.cond, g.reason))
                .unwrap_or_else(|| "the inputs' strides differ from the spec's layouts".into());
            return Err(raise(
                "GuardError",
                format!("no specialization admits these inputs: {g}"),
            ));
        };
        let d = PyDict::new(py);
        for (&i, t) in p.outputs.iter().zip(&ran.outputs) {
            let s = ran.values[i].storage;
            let w = if s < p.inputs.len() {
                writeable[s]
            } else {
                true
            };
            d.set_item(&p.names[i], to_array(py, t, w)?)?;
        }
        Ok(d)
    }
}

fn names<'a>(xs: impl Iterator<Item = &'a str>) -> String {
    xs.collect::<Vec<_>>().join(", ")
}

#[pymethods]
impl PyArtifact {
    /// The program's name.
    #[getter]
    fn name(&self) -> String {
        self.inner.program.name.clone()
    }

    /// Symbol names, in order of first appearance in the input sizes.
    #[getter]
    fn symbols(&self) -> Vec<String> {
        self.inner.program.symbols.clone()
    }

    /// `{symbol: hint}`: where the program was traced.
    #[getter]
    fn hints<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let p = &self.inner.program;
        let d = PyDict::new(py);
        for (s, h) in p.symbols.iter().zip(&p.hints) {
            d.set_item(s, h)?;
        }
        Ok(d)
    }

    /// Input names, in order.
    #[getter]
    fn inputs(&self) -> Vec<String> {
        self.inner
            .program
            .inputs
            .iter()
            .map(|i| i.name.clone())
            .collect()
    }

    /// Output names, in order.
    #[getter]
    fn outputs(&self) -> Vec<String> {
        let p = &self.inner.program;
        p.outputs.iter().map(|&i| p.names[i].clone()).collect()
    }

    /// Number of specializations.
    #[getter]
    fn num_specializations(&self) -> usize {
        self.inner.num_specializations()
    }

    /// The run-time dispatcher's counters: `{"hits", "misses", "retraces",
    /// "specializations"}` (a binding no specialization admits is traced and cached), and
    /// for inputs whose strides are not the spec's layouts `{"layout_hits",
    /// "layout_misses", "layout_plans"}` (runs served by a cached plan for their layouts,
    /// runs planned for the call, plans cached).
    #[getter]
    fn dispatch_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.stats();
        let d = PyDict::new(py);
        d.set_item("hits", s.hits)?;
        d.set_item("misses", s.misses)?;
        d.set_item("retraces", s.retraces)?;
        d.set_item("specializations", s.specializations)?;
        d.set_item("layout_hits", s.layout_hits)?;
        d.set_item("layout_misses", s.layout_misses)?;
        d.set_item("layout_plans", s.layout_plans)?;
        Ok(d)
    }

    /// The guards of a specialization (default: the first), each with the reason naming
    /// the program step that recorded it.
    #[pyo3(signature = (specialization=0))]
    fn guards(&self, specialization: i64) -> PyResult<Vec<PyGuard>> {
        let k = self.specialization_index(specialization)?;
        let s = self
            .inner
            .guards(k)
            .ok_or_else(|| self.no_specialization(specialization))?;
        Ok(s.iter().cloned().map(PyGuard).collect())
    }

    /// Would this binding reuse a compiled plan? `check(b=8, s=128)`: which specialization
    /// admits it (or the first failing guard), and the outputs' layouts at the binding.
    #[pyo3(signature = (**bindings))]
    fn check(&self, py: Python<'_>, bindings: Option<&Bound<'_, PyDict>>) -> PyResult<PyCheck> {
        let b = crate::symbolic::bindings(bindings)?;
        let c = self.inner.check(&b).py()?;
        let p = &self.inner.program;
        let (outputs, error, message) = match &c.values {
            Ok(values) => {
                let d = PyDict::new(py);
                for &i in &p.outputs {
                    d.set_item(&p.names[i], layout_dict(py, &values[i])?)?;
                }
                (Some(d.unbind()), None, None)
            }
            Err(e) => (None, Some(e.category().to_string()), Some(e.to_string())),
        };
        Ok(PyCheck {
            admitted: c.specialization.is_some(),
            specialization: c.specialization,
            failed_guard: c.failed_guard.map(PyGuard),
            outputs,
            error,
            message,
        })
    }

    /// Runs the program on numpy arrays given by input name; returns `{output name:
    /// numpy.ndarray}`. Dispatch: the first specialization whose guards admit the
    /// binding (a miss is traced and cached). Inputs are used in place (any non-negative
    /// strides); outputs are new arrays laid out as the plan says, or views of the input
    /// arrays where the program returns a view. The GIL is released while the kernels run.
    #[pyo3(signature = (**arrays))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        arrays: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.run_impl(py, arrays, true, true)
    }

    /// `run` with options: `retrace=False` raises `GuardError` for inputs no
    /// specialization admits (instead of tracing and caching one), and for inputs whose
    /// strides are not the spec's layouts (instead of planning for them); `fuse=False` runs
    /// every step on its own instead of the specialization's fused chains and row segments
    /// (`fused()`).
    #[pyo3(signature = (arrays, *, retrace=true, fuse=true))]
    fn run_with<'py>(
        &self,
        py: Python<'py>,
        arrays: &Bound<'py, PyDict>,
        retrace: bool,
        fuse: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.run_impl(py, Some(arrays), retrace, fuse)
    }

    /// The steps `run` evaluates in one pass, per fused chain, numbered from 1 as in the
    /// guards' reasons (e.g. `[[5, 6]]`: steps 5 and 6 run as one pass and only step 6's
    /// value is written to memory), then per row segment (steps reducing over the last dim
    /// and broadcasting back, run one row at a time where the rows have 32 to 16384
    /// elements, else as the chains inside them), of specialization `specialization`.
    #[pyo3(signature = (specialization=0))]
    fn fused(&self, specialization: i64) -> PyResult<Vec<Vec<usize>>> {
        let k = self.specialization_index(specialization)?;
        self.inner
            .fusion(k)
            .map(|f| f.step_numbers())
            .ok_or_else(|| self.no_specialization(specialization))
    }

    /// The artifact as JSON text.
    fn to_json(&self) -> String {
        self.inner.to_json()
    }

    /// Reads an artifact from JSON text (re-traced and verified).
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<PyArtifact> {
        Ok(PyArtifact {
            inner: Compiled::from_json(text).py()?,
        })
    }

    /// Writes the artifact to `path`.
    fn save(&self, path: std::path::PathBuf) -> PyResult<()> {
        std::fs::write(&path, self.inner.to_json()).map_err(|e| {
            crate::errors::to_py(Error::Io {
                path: path.display().to_string(),
                message: e.to_string(),
            })
        })
    }

    /// Reads an artifact written by `save` (re-traced and verified).
    #[staticmethod]
    fn load(path: std::path::PathBuf) -> PyResult<PyArtifact> {
        let text = std::fs::read_to_string(&path).map_err(|e| {
            crate::errors::to_py(Error::Io {
                path: path.display().to_string(),
                message: e.to_string(),
            })
        })?;
        Self::from_json(&text)
    }

    fn __repr__(&self) -> String {
        let p = &self.inner.program;
        format!(
            "Artifact(name={:?}, inputs=[{}], outputs=[{}], specializations={})",
            p.name,
            names(p.inputs.iter().map(|i| i.name.as_str())),
            names(p.outputs.iter().map(|&i| p.names[i].as_str())),
            self.inner.num_specializations()
        )
    }
}

/// Compiles a program spec (a dict or JSON text in the golden "Programs" format): parses,
/// validates, and traces it symbolically at its hints. `cover=True` adds specializations
/// until a case split over the guards proves every binding (sizes `>= 0`) admitted.
#[pyfunction]
#[pyo3(signature = (spec, cover=false))]
pub fn compile(spec: &Bound<'_, PyAny>, cover: bool) -> PyResult<PyArtifact> {
    let spec = spec_json(spec)?;
    Ok(PyArtifact {
        inner: Compiled::compile(&spec, cover).py()?,
    })
}

/// For the bench (`python/bench/run_overhead.py`): the same run through the Rust API
/// alone. The arrays are wrapped once (not timed); each repetition then dispatches
/// (binding, guards, layouts, kernel plans) and executes as `Artifact.run` does (fused), in
/// seconds. The difference to `Artifact.run` on the same arrays is the Python layer's cost (argument handling, array
/// wrapping in and out).
#[pyfunction]
#[pyo3(signature = (artifact, repeat, **arrays))]
pub fn _rust_run_seconds(
    py: Python<'_>,
    artifact: &PyArtifact,
    repeat: usize,
    arrays: Option<&Bound<'_, PyDict>>,
) -> PyResult<Vec<f64>> {
    let c = &artifact.inner;
    let arrays = artifact.arrays(arrays)?;
    let b = bind_inputs(c, &arrays)?;
    let inputs = c
        .program
        .inputs
        .iter()
        .zip(&arrays)
        .map(|(i, a)| to_tensor(a, &i.name))
        .collect::<PyResult<Vec<_>>>()?;
    py.allow_threads(|| {
        let mut times = Vec::with_capacity(repeat);
        for _ in 0..repeat {
            let t = std::time::Instant::now();
            let ran = c.run(&b, inputs.clone(), true, true, &ExecConfig::default())?;
            drop(ran);
            times.push(t.elapsed().as_secs_f64());
        }
        Ok(times)
    })
    .py()
}
