//! Run-time choice of the instruction set the reduction kernels are compiled for.
//!
//! The crate is built for the baseline target (SSE2 on x86-64), so the generic kernels
//! vectorize 128 bits at a time. Each hot kernel body is therefore compiled twice: once for
//! the baseline and once inside a `#[target_feature(enable = "avx2,fma")]` function (the
//! generic body is `#[inline(always)]`, so the compiler re-vectorizes it with 256-bit
//! registers for every reducer and element type). [`Isa::select`] picks the variant once per
//! call from [`Simd`] and the CPU's run-time feature report; the dispatchers in the parent
//! module call the AVX2 variant only when it returned [`Isa::Avx2`].

use crate::kernel::Simd;

/// The instruction set a kernel call runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Isa {
    /// The compile-time target (SSE2 on x86-64, the target's default elsewhere).
    Base,
    /// AVX2 and FMA, reported present by the CPU (`is_x86_feature_detected!`).
    #[cfg(target_arch = "x86_64")]
    Avx2,
}

impl Isa {
    /// The instruction set to use under `simd` on this CPU. Invariant relied on by the
    /// dispatchers' `unsafe` calls: `Isa::Avx2` is returned only when the CPU reports both
    /// AVX2 and FMA.
    pub(crate) fn select(simd: Simd) -> Isa {
        match simd {
            Simd::Baseline => Isa::Base,
            Simd::Auto => Self::detect(),
        }
    }

    #[cfg(target_arch = "x86_64")]
    fn detect() -> Isa {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            Isa::Avx2
        } else {
            Isa::Base
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn detect() -> Isa {
        Isa::Base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baseline_is_always_honoured() {
        assert_eq!(Isa::select(Simd::Baseline), Isa::Base);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            Isa::select(Simd::Auto) == Isa::Avx2,
            std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
        );
    }
}
