//! Hand-written AVX2 folds for the cases where the compiler's own vectorization of the
//! generic reducers falls short (measured; see the `kernel::reduce` module docs).
//!
//! The float32 `sum` accumulates in f64 ([`super::ReduceElement::SumAcc`]). Compiled for
//! AVX2, LLVM's SLP vectorizer keeps the generic 16-lane leaf at two f64 per register
//! (`vcvtps2pd xmm`); [`sum_f32_avx2`] converts four f32 per instruction into eight
//! independent 256-bit accumulators, and prefetches 4 KiB ahead (measured gains are in the
//! `kernel::reduce` docs).

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// The sum of `xs` in f64: eight accumulators of four lanes each (32 values per step),
/// combined as a tree, then the scalar tail.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn sum_f32_avx2(xs: &[f32]) -> f64 {
    let n = xs.len();
    let p = xs.as_ptr();
    let mut acc = [_mm256_setzero_pd(); 8];
    let mut i = 0;
    while i + 32 <= n {
        // The two lines 4 KiB ahead (past the run: the next rows of a last-dim sum). A hint:
        // it never faults, and the address is only formed with wrapping arithmetic.
        _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(i + 1024) as *const i8);
        _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(i + 1040) as *const i8);
        for (l, a) in acc.iter_mut().enumerate() {
            // SAFETY: i + 4l + 4 <= i + 32 <= n: four readable f32 (unaligned load).
            let v = unsafe { _mm_loadu_ps(p.add(i + 4 * l)) };
            *a = _mm256_add_pd(*a, _mm256_cvtps_pd(v));
        }
        i += 32;
    }
    while i + 4 <= n {
        // SAFETY: i + 4 <= n.
        let v = unsafe { _mm_loadu_ps(p.add(i)) };
        acc[0] = _mm256_add_pd(acc[0], _mm256_cvtps_pd(v));
        i += 4;
    }
    let mut w = 8;
    while w > 1 {
        w /= 2;
        for l in 0..w {
            acc[l] = _mm256_add_pd(acc[l], acc[l + w]);
        }
    }
    let mut lanes = [0f64; 4];
    // SAFETY: `lanes` holds four f64 (unaligned store).
    unsafe { _mm256_storeu_pd(lanes.as_mut_ptr(), acc[0]) };
    let mut s = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    for &v in &xs[i..] {
        s += v as f64;
    }
    s
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn avx2_sum_equals_the_exact_sum_on_every_tail_length() {
        if !(std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma"))
        {
            return;
        }
        // Small integers: every f64 partial is exact, so any order gives the same sum.
        let xs: Vec<f32> = (0..200).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
        for n in 0..xs.len() {
            let want: f64 = xs[..n].iter().map(|&v| v as f64).sum();
            // SAFETY: AVX2 and FMA checked above.
            assert_eq!(unsafe { sum_f32_avx2(&xs[..n]) }, want, "n = {n}");
        }
        // SAFETY: as above.
        assert!(unsafe { sum_f32_avx2(&[1.0, f32::NAN, 2.0]) }.is_nan());
    }
}
