//! The elementwise entry point used by conformance: the output TensorIterator allocates for
//! `neg(a)`, `add(a, b)`, `addcmul(a, b, c)` on float32 inputs (no `out=`).

use super::config::{TensorIteratorConfig, TensorSpec};
use crate::error::Result;
use crate::int::Int;

/// Element size of float32, the dtype of the golden elementwise cases.
pub const FLOAT32_SIZE: usize = 4;

/// Sizes and strides (in elements, user order) of the output a float32 elementwise op
/// allocates for `inputs` given as `(sizes, strides)`. Fails with [`crate::Error::Broadcast`]
/// when the shapes do not broadcast, or with a validation error for malformed inputs.
pub fn elementwise_output<I: Int>(inputs: &[(Vec<I>, Vec<I>)]) -> Result<(Vec<I>, Vec<I>)> {
    let mut config = TensorIteratorConfig::new().add_undefined_output(FLOAT32_SIZE);
    for (sizes, strides) in inputs {
        config = config.add_input(TensorSpec::new(
            sizes.clone(),
            strides.clone(),
            FLOAT32_SIZE,
        ));
    }
    let mut plan = config.build()?;
    let strides = plan.output_strides.swap_remove(0);
    Ok((plan.broadcast_shape, strides))
}
