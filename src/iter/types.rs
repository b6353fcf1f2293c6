//! `compute_types`: the common dtype of an op, the dtypes of the outputs it allocates, and
//! PyTorch's dtype errors — a step of the build, between `mark_resize_outputs` and the
//! layout steps (an allocated output's element size is only known once its dtype is).
//!
//! # Why a separate result-type function
//! PyTorch promotes in two different places with two different rules: `promote_types` is the
//! pairwise lattice ([`crate::promote_types`]), while an op's *result type* over its operands
//! ([`result_type`]) ranks the operands first — dimensioned tensors over zero-dim tensors
//! over Python numbers — and lets a lower rank only raise the *category* (bool < integer <
//! floating). A Python number additionally counts with the default dtype of its category
//! (`int64`, `float32`, `bool`), not its own. So `int32_tensor + 2.5` is `float32`,
//! `uint8_tensor + int64_zero_dim` stays `uint8`, and `int32_tensor + float64_zero_dim` is
//! `float64` (the zero-dim tensor raised the category and brings its own width).
//!
//! # The flags
//! [`TypeConfig`] mirrors the dtype flags of PyTorch's `TensorIteratorConfig`; the op table
//! (`crate::op`) chooses them per op. Errors are [`Error::DType`] with PyTorch's wording.

use crate::dtype::{can_cast, promote_types, Category, DType};
use crate::error::{Error, Result};

/// The dtype flags of a build (PyTorch's `TensorIteratorConfig` fields of the same names).
/// The [`Default`] is PyTorch's: only `check_all_same_dtype`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeConfig {
    /// Inputs of different dtypes are promoted to their [`result_type`].
    pub promote_inputs_to_common_dtype: bool,
    /// An integral or bool common dtype becomes `float32` (the default dtype).
    pub promote_integer_inputs_to_float: bool,
    /// Outputs of another dtype receive the common dtype's values cast on store.
    pub cast_common_dtype_to_outputs: bool,
    /// A given output must be able to hold the common dtype ([`can_cast`]).
    pub enforce_safe_casting_to_output: bool,
    /// Every operand (outputs included) must have one dtype.
    pub check_all_same_dtype: bool,
    /// The dtype of outputs the build allocates, whatever the inputs (comparisons: `bool`).
    pub static_dtype: Option<DType>,
}

impl Default for TypeConfig {
    fn default() -> Self {
        TypeConfig {
            promote_inputs_to_common_dtype: false,
            promote_integer_inputs_to_float: false,
            cast_common_dtype_to_outputs: false,
            enforce_safe_casting_to_output: false,
            check_all_same_dtype: true,
            static_dtype: None,
        }
    }
}

/// What `compute_types` decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Types {
    /// The computation dtype (`None` when the inputs differ and nothing promoted them).
    pub common_dtype: Option<DType>,
    /// The dtype of every operand, outputs first (allocated outputs included), as the
    /// iteration sees it (promoted inputs in the common dtype).
    pub dtypes: Vec<DType>,
    /// Inputs (0-based among the inputs) that the CPU path replaces by a copy in the common
    /// dtype (`promote_inputs_to_common_dtype` and another dtype): PyTorch's `t.to(dtype)`,
    /// a fresh tensor with `empty_like` strides, which is what the layout steps then see.
    pub promoted_inputs: Vec<usize>,
}

/// One operand as `result_type` sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypeOperand {
    /// Its dtype (a Python number: `int64`, `float64` or `bool` by its value's kind).
    pub dtype: DType,
    /// Rank 0.
    pub zero_dim: bool,
    /// A Python number (PyTorch's wrapped number).
    pub wrapped_number: bool,
}

/// PyTorch's `ResultTypeState`: one promoted dtype per operand rank.
#[derive(Default)]
struct State {
    dim: Option<DType>,
    zero: Option<DType>,
    wrapped: Option<DType>,
}

fn promote_opt(a: Option<DType>, b: DType) -> Option<DType> {
    Some(a.map_or(b, |a| promote_types(a, b)))
}

/// `combine_categories(higher, lower)`: the higher-ranked dtype wins unless the lower one is
/// of a higher category, which then promotes it.
fn combine(higher: Option<DType>, lower: Option<DType>) -> Option<DType> {
    match (higher, lower) {
        (Some(h), _) if h.is_floating() => Some(h),
        (Some(h), Some(l)) if h == DType::Bool || l.is_floating() => Some(promote_types(h, l)),
        (Some(h), _) => Some(h),
        (None, l) => l,
    }
}

/// PyTorch's `at::result_type` over operands (see the module docs). `None` for no operands.
pub fn result_type(operands: &[TypeOperand]) -> Option<DType> {
    let mut s = State::default();
    for op in operands {
        let mut current = op.dtype;
        if op.wrapped_number && current.is_floating() {
            current = DType::F32; // the default dtype
        }
        if !op.zero_dim {
            s.dim = promote_opt(s.dim, current);
        } else if op.wrapped_number {
            s.wrapped = promote_opt(s.wrapped, current);
        } else {
            s.zero = promote_opt(s.zero, current);
        }
    }
    combine(s.dim, combine(s.zero, s.wrapped))
}

/// PyTorch's name of a dtype in messages (`Float`, `Long`, ...).
pub fn torch_name(d: DType) -> &'static str {
    match d {
        DType::Bool => "Bool",
        DType::U8 => "Byte",
        DType::I32 => "Int",
        DType::I64 => "Long",
        DType::F32 => "Float",
        DType::F64 => "Double",
    }
}

/// One operand of the build for `compute_types`: its dtype (`None` for an output the build
/// allocates), whether it is an output, and how `result_type` ranks it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Slot {
    pub(super) dtype: Option<DType>,
    pub(super) is_output: bool,
    pub(super) zero_dim: bool,
    pub(super) wrapped_number: bool,
}

/// `compute_types` over the operands (outputs first). Returns the decision; undefined outputs
/// get `static_dtype` or the common dtype.
pub(super) fn compute_types(slots: &[Slot], tc: &TypeConfig) -> Result<Types> {
    let mut common: Option<DType> = None;
    let mut output_dtype: Option<DType> = None;
    let (mut diff_in, mut diff_out, mut undefined_outputs) = (false, false, false);
    for s in slots {
        let Some(d) = s.dtype else {
            if tc.static_dtype.is_none() {
                undefined_outputs = true;
            }
            continue;
        };
        if !s.is_output && Some(d) != common {
            if common.is_none() {
                common = Some(d);
            } else {
                diff_in = true;
            }
        } else if s.is_output && Some(d) != common {
            if output_dtype.is_none() {
                output_dtype = Some(d);
            } else {
                diff_out = true;
            }
        }
    }
    if tc.check_all_same_dtype
        && (diff_in || diff_out || (output_dtype.is_some() && common != output_dtype))
    {
        for s in slots {
            if let (Some(d), Some(c)) = (s.dtype, common) {
                if d != c {
                    return Err(Error::DType {
                        message: format!(
                            "Found dtype {} but expected {}",
                            torch_name(d),
                            torch_name(c)
                        ),
                    });
                }
            }
        }
    }
    let finish = |common: Option<DType>| -> Result<Types> {
        let dtypes = slots
            .iter()
            .map(|s| {
                s.dtype
                    .or(tc.static_dtype)
                    .or(common)
                    .ok_or_else(|| Error::invalid("compute_types: no dtype for an allocated output: the inputs differ and are not promoted"))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut promoted_inputs = Vec::new();
        let mut dtypes = dtypes;
        if tc.promote_inputs_to_common_dtype {
            if let Some(c) = common {
                let mut j = 0;
                for (s, d) in slots.iter().zip(dtypes.iter_mut()) {
                    if s.is_output {
                        continue;
                    }
                    if *d != c {
                        promoted_inputs.push(j);
                        *d = c;
                    }
                    j += 1;
                }
            }
        }
        Ok(Types {
            common_dtype: common,
            dtypes,
            promoted_inputs,
        })
    };
    if !undefined_outputs
        && !tc.promote_inputs_to_common_dtype
        && !tc.cast_common_dtype_to_outputs
        && !tc.enforce_safe_casting_to_output
    {
        return finish(if diff_in { None } else { common });
    }
    let inputs: Vec<&Slot> = slots.iter().filter(|s| !s.is_output).collect();
    let all_scalars = !inputs.is_empty() && inputs.iter().all(|s| s.zero_dim);
    if (diff_in || all_scalars) && tc.promote_inputs_to_common_dtype {
        let ops: Vec<TypeOperand> = inputs
            .iter()
            .filter_map(|s| {
                s.dtype.map(|dtype| TypeOperand {
                    dtype,
                    zero_dim: s.zero_dim,
                    wrapped_number: s.wrapped_number,
                })
            })
            .collect();
        common = result_type(&ops);
    }
    if tc.promote_integer_inputs_to_float {
        if let Some(c) = common {
            if c.category() != Category::Floating {
                common = Some(DType::F32);
            }
        }
    }
    if tc.enforce_safe_casting_to_output {
        if let Some(c) = common {
            for s in slots.iter().filter(|s| s.is_output) {
                if let Some(d) = s.dtype {
                    if d != c && !can_cast(c, d) {
                        return Err(Error::DType {
                            message: format!(
                                "result type {} can't be cast to the desired output type {}",
                                torch_name(c),
                                torch_name(d)
                            ),
                        });
                    }
                }
            }
        }
    }
    finish(common)
}

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    fn t(dtype: DType) -> TypeOperand {
        TypeOperand {
            dtype,
            zero_dim: false,
            wrapped_number: false,
        }
    }
    fn z(dtype: DType) -> TypeOperand {
        TypeOperand {
            zero_dim: true,
            ..t(dtype)
        }
    }
    fn w(dtype: DType) -> TypeOperand {
        TypeOperand {
            wrapped_number: true,
            ..z(dtype)
        }
    }

    #[test]
    fn result_type_ranks_operands() {
        assert_eq!(result_type(&[t(I32), w(F64)]), Some(F32));
        assert_eq!(result_type(&[t(F64), w(F64)]), Some(F64));
        assert_eq!(result_type(&[t(U8), w(I64)]), Some(U8));
        assert_eq!(result_type(&[t(Bool), w(I64)]), Some(I64));
        assert_eq!(result_type(&[t(Bool), w(Bool)]), Some(Bool));
        assert_eq!(result_type(&[t(U8), z(I64)]), Some(U8));
        assert_eq!(result_type(&[t(I32), z(F64)]), Some(F64));
        assert_eq!(result_type(&[z(I32), w(F64)]), Some(F32));
        assert_eq!(result_type(&[t(U8), t(I32)]), Some(I32));
        assert_eq!(result_type(&[z(U8), z(I32), w(Bool)]), Some(I32));
        assert_eq!(result_type(&[]), None);
    }

    fn slot(dtype: Option<DType>, is_output: bool) -> Slot {
        Slot {
            dtype,
            is_output,
            zero_dim: false,
            wrapped_number: false,
        }
    }

    #[test]
    fn compute_types_errors_like_pytorch() {
        let unary = TypeConfig::default();
        let e = compute_types(&[slot(Some(I32), true), slot(Some(F32), false)], &unary);
        assert!(matches!(e, Err(Error::DType { .. })));
        let float_op = TypeConfig {
            promote_inputs_to_common_dtype: true,
            promote_integer_inputs_to_float: true,
            cast_common_dtype_to_outputs: true,
            enforce_safe_casting_to_output: true,
            check_all_same_dtype: false,
            static_dtype: None,
        };
        let r = compute_types(&[slot(None, true), slot(Some(I64), false)], &float_op).unwrap();
        assert_eq!(
            r.dtypes,
            vec![F32, F32],
            "the int64 input is read as a float32 copy"
        );
        assert_eq!(r.promoted_inputs, vec![0]);
        let e = compute_types(&[slot(Some(I64), true), slot(Some(I64), false)], &float_op);
        assert!(matches!(e, Err(Error::DType { .. })));
        let ok = compute_types(&[slot(Some(F64), true), slot(Some(I64), false)], &float_op);
        assert_eq!(ok.unwrap().common_dtype, Some(F32));
    }
}
