//! The build's inputs: operand descriptions, options and the [`TensorIteratorConfig`] builder.

use super::plan::Plan;
use super::types::{TypeConfig, Types};
use crate::dtype::DType;
use crate::error::Result;
use crate::int::Int;

/// Identity and size of the memory an operand lives in, for overlap and bounds checks.
///
/// Two operands alias exactly when their `id`s are equal; the build never dereferences
/// anything, so the id is an opaque token chosen by the caller (an allocation address, a
/// buffer index, ...).
#[derive(Clone, Debug, PartialEq)]
pub struct Storage<I> {
    /// Opaque identity: equal ids mean the same underlying buffer.
    pub id: u64,
    /// Size of the buffer in bytes; every element an operand can address must lie inside.
    pub nbytes: I,
}

/// A strided view: what PyTorch keeps in a `TensorImpl` for layout purposes.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorSpec<I> {
    /// Sizes, outermost first (user order).
    pub sizes: Vec<I>,
    /// Strides in elements, one per size.
    pub strides: Vec<I>,
    /// Offset of the first element from the start of the storage, in elements.
    pub storage_offset: I,
    /// Size of one element in bytes (must be positive).
    pub element_size: usize,
    /// The buffer the view points into; `None` disables overlap and bounds checks for it.
    pub storage: Option<Storage<I>>,
    /// The element type; required for every operand of a build with a [`TypeConfig`]
    /// (`compute_types`), ignored otherwise.
    pub dtype: Option<DType>,
    /// A Python number wrapped into a 0-dim tensor (PyTorch's `is_wrapped_number`): it takes
    /// part in type promotion only through its category.
    pub wrapped_number: bool,
    /// The identity of the tensor object (PyTorch compares `TensorImpl`s to find in-place
    /// outputs). With ids on both sides, an output is the same tensor as an input exactly when
    /// the ids are equal; two distinct tensors viewing the same memory are not the same (their
    /// overlap is checked instead). Without ids, equal views of one storage count as the same.
    pub tensor_id: Option<u64>,
}

impl<I: Int> TensorSpec<I> {
    /// A view with storage offset 0 and no storage information.
    pub fn new(sizes: Vec<I>, strides: Vec<I>, element_size: usize) -> Self {
        TensorSpec {
            sizes,
            strides,
            storage_offset: I::from_i64(0),
            element_size,
            storage: None,
            dtype: None,
            wrapped_number: false,
            tensor_id: None,
        }
    }

    /// Sets the tensor identity (see [`TensorSpec::tensor_id`]).
    pub fn with_tensor_id(mut self, id: u64) -> Self {
        self.tensor_id = Some(id);
        self
    }

    /// A view of `dtype` elements (sets the element size from it).
    pub fn typed(sizes: Vec<I>, strides: Vec<I>, dtype: DType) -> Self {
        TensorSpec {
            dtype: Some(dtype),
            ..TensorSpec::new(sizes, strides, dtype.element_size())
        }
    }

    /// A Python number of `dtype` (`int64`, `float64` or `bool`) as PyTorch wraps it: a 0-dim
    /// tensor flagged as a wrapped number.
    pub fn wrapped_number(dtype: DType) -> Self {
        TensorSpec {
            wrapped_number: true,
            ..TensorSpec::typed(Vec::new(), Vec::new(), dtype)
        }
    }

    /// Sets the storage offset (in elements).
    pub fn with_offset(mut self, storage_offset: I) -> Self {
        self.storage_offset = storage_offset;
        self
    }

    /// Attaches storage identity and length (bytes), enabling overlap and bounds checks.
    pub fn with_storage(mut self, id: u64, nbytes: I) -> Self {
        self.storage = Some(Storage { id, nbytes });
        self
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.sizes.len()
    }
}

/// Build options, mirroring the flags of PyTorch's `TensorIteratorConfig`.
///
/// Plain data with a [`Default`] matching PyTorch's defaults for elementwise ops, so a caller
/// writes `IterOptions { check_mem_overlap: false, ..Default::default() }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IterOptions {
    /// Given outputs whose sizes differ from the broadcast shape are resized (re-strided from
    /// the permutation) instead of rejected; their sizes do not take part in broadcasting.
    /// Default `true`.
    pub resize_outputs: bool,
    /// Reject outputs that overlap themselves or partially overlap an input. Default `true`.
    pub check_mem_overlap: bool,
    /// Require every operand to have exactly the broadcast shape (no broadcasting). Default
    /// `false`.
    pub check_all_same_shape: bool,
    /// Keep the user's dimension order (row-major iteration), never reorder by strides; only
    /// the all-contiguous fast setup applies. Default `false`.
    pub enforce_linear_iteration: bool,
    /// Run `coalesce_dimensions` (PyTorch skips it only for meta tensors). Default `true`.
    pub coalesce_dimensions: bool,
    /// Allow the fast setup paths. Turning it off forces the general path, which must reach an
    /// equivalent plan; useful for differential tests. Default `true`.
    pub allow_fast_setup: bool,
    /// A reduction (PyTorch's `is_reduction`): output 0 is a view of the result with stride 0
    /// on the reduced dimensions. The fast setup is skipped and `reorder_dimensions` moves
    /// the output's stride-0 dimensions innermost. Default `false`.
    pub is_reduction: bool,
    /// Give a plan whose broadcast shape is *statically* empty (a size known to be 0: always
    /// decidable for `i64`, a constant 0 for `SymInt`) its canonical empty form
    /// ([`Plan::canonicalize_empty`]) and skip `coalesce_dimensions` for it. Nothing is
    /// iterated over an empty output, so its answer is its sizes and strides alone; the
    /// ahead-of-time layer sets this so that its classes of empty bindings are keyed by that
    /// answer and record no guard that only coalescing needed. Ignored for reductions (an
    /// empty reduced dim still has outputs to fill). Default `false` (PyTorch's plan).
    pub canonical_empty: bool,
}

impl Default for IterOptions {
    fn default() -> Self {
        IterOptions {
            resize_outputs: true,
            check_mem_overlap: true,
            check_all_same_shape: false,
            enforce_linear_iteration: false,
            coalesce_dimensions: true,
            allow_fast_setup: true,
            is_reduction: false,
            canonical_empty: false,
        }
    }
}

/// An output operand: given by the caller, or left to the build to allocate.
#[derive(Clone, Debug, PartialEq)]
pub enum OutputSpec<I> {
    /// An existing tensor (`out=`); its strides are respected unless it must be resized.
    Given(TensorSpec<I>),
    /// No tensor yet: the build allocates sizes = broadcast shape, strides from the permutation.
    Undefined {
        /// Element size in bytes of the tensor to allocate.
        element_size: usize,
    },
}

/// Builder of a TensorIterator build, in the spirit of PyTorch's `TensorIteratorConfig`:
/// add all outputs first, then inputs, set options, call [`TensorIteratorConfig::build`].
///
/// ```
/// use symstride::iter::{TensorIteratorConfig, TensorSpec};
/// let plan = TensorIteratorConfig::<i64>::new()
///     .add_undefined_output(4)
///     .add_input(TensorSpec::new(vec![2, 3], vec![1, 2], 4)) // transposed
///     .add_input(TensorSpec::new(vec![3], vec![1], 4))       // broadcast
///     .build()
///     .unwrap();
/// assert_eq!(plan.broadcast_shape, vec![2, 3]);
/// assert_eq!(plan.output_strides[0], vec![1, 2]); // follows the first input's layout
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TensorIteratorConfig<I> {
    pub(super) options: IterOptions,
    pub(super) outputs: Vec<OutputSpec<I>>,
    pub(super) inputs: Vec<TensorSpec<I>>,
    pub(super) outputs_after_inputs: bool,
    pub(super) types: Option<TypeConfig>,
}

impl<I: Int> Default for TensorIteratorConfig<I> {
    fn default() -> Self {
        Self::new()
    }
}

impl<I: Int> TensorIteratorConfig<I> {
    /// An empty configuration with default options.
    pub fn new() -> Self {
        TensorIteratorConfig {
            options: IterOptions::default(),
            outputs: Vec::new(),
            inputs: Vec::new(),
            outputs_after_inputs: false,
            types: None,
        }
    }

    /// Turns on `compute_types` with these flags: every operand must then carry a dtype
    /// (undefined outputs get theirs from the build), see [`TypeConfig`].
    pub fn types(mut self, types: TypeConfig) -> Self {
        self.types = Some(types);
        self
    }

    /// Replaces the options.
    pub fn options(mut self, options: IterOptions) -> Self {
        self.options = options;
        self
    }

    /// The current options.
    pub fn current_options(&self) -> &IterOptions {
        &self.options
    }

    /// Adds an existing output tensor. Outputs must be added before inputs (as in PyTorch);
    /// adding one after an input is reported by [`TensorIteratorConfig::build`].
    pub fn add_output(mut self, output: TensorSpec<I>) -> Self {
        self.outputs.push(OutputSpec::Given(output));
        if !self.inputs.is_empty() {
            self.outputs_after_inputs = true;
        }
        self
    }

    /// Adds an output the build allocates (PyTorch: an undefined tensor, e.g. no `out=`).
    pub fn add_undefined_output(mut self, element_size: usize) -> Self {
        self.outputs.push(OutputSpec::Undefined { element_size });
        if !self.inputs.is_empty() {
            self.outputs_after_inputs = true;
        }
        self
    }

    /// Adds an input tensor.
    pub fn add_input(mut self, input: TensorSpec<I>) -> Self {
        self.inputs.push(input);
        self
    }

    /// Number of outputs added so far.
    pub fn num_outputs(&self) -> usize {
        self.outputs.len()
    }

    /// Number of inputs added so far.
    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    /// Runs the build (see the [module docs](super) for its steps).
    pub fn build(&self) -> Result<Plan<I>> {
        super::build::build(self).map(|(plan, _)| plan)
    }

    /// Runs the build and returns the dtypes `compute_types` decided too (`None` without a
    /// [`TypeConfig`]).
    pub fn build_typed(&self) -> Result<(Plan<I>, Option<Types>)> {
        super::build::build(self)
    }
}

impl<I> TensorSpec<I> {
    /// Applies `f` to every integer (sizes, strides, offset, storage length), e.g. to
    /// specialize a symbolic view at a binding.
    pub fn try_map<J, E>(&self, mut f: impl FnMut(&I) -> Result<J, E>) -> Result<TensorSpec<J>, E> {
        let sizes = self
            .sizes
            .iter()
            .map(&mut f)
            .collect::<Result<Vec<J>, E>>()?;
        let strides = self
            .strides
            .iter()
            .map(&mut f)
            .collect::<Result<Vec<J>, E>>()?;
        let storage_offset = f(&self.storage_offset)?;
        let storage = match &self.storage {
            Some(s) => Some(Storage {
                id: s.id,
                nbytes: f(&s.nbytes)?,
            }),
            None => None,
        };
        Ok(TensorSpec {
            sizes,
            strides,
            storage_offset,
            element_size: self.element_size,
            storage,
            dtype: self.dtype,
            wrapped_number: self.wrapped_number,
            tensor_id: self.tensor_id,
        })
    }
}

impl<I> TensorIteratorConfig<I> {
    /// Applies `f` to every integer of every operand, keeping options and operand order: with
    /// `|s| s.eval(&bindings)` it turns a symbolic configuration into the concrete one a
    /// binding describes.
    pub fn try_map<J, E>(
        &self,
        mut f: impl FnMut(&I) -> Result<J, E>,
    ) -> Result<TensorIteratorConfig<J>, E> {
        let outputs = self
            .outputs
            .iter()
            .map(|o| match o {
                OutputSpec::Given(t) => t.try_map(&mut f).map(OutputSpec::Given),
                OutputSpec::Undefined { element_size } => Ok(OutputSpec::Undefined {
                    element_size: *element_size,
                }),
            })
            .collect::<Result<Vec<_>, E>>()?;
        let inputs = self
            .inputs
            .iter()
            .map(|t| t.try_map(&mut f))
            .collect::<Result<Vec<_>, E>>()?;
        Ok(TensorIteratorConfig {
            options: self.options.clone(),
            outputs,
            inputs,
            outputs_after_inputs: self.outputs_after_inputs,
            types: self.types.clone(),
        })
    }
}
