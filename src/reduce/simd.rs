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

/// The sums of four runs of equal length in f64, folded together: per run two
/// accumulators of four lanes (eight values per step), combined as a tree, then the scalar
/// tail. The kernels give it rows from four distant parts of a task's range (four memory
/// streams), which a 2-thread read of 64 MiB takes ~20% faster than one stream
/// (measurements in the `kernel::reduce` docs). The order differs from [`sum_f32_avx2`]'s,
/// so a kernel folds every row of a reduction with the same one of the two.
///
/// # Safety
/// The CPU must support AVX2 and FMA; the four runs must have the same length.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn sum4_f32_avx2(rows: [&[f32]; 4]) -> [f64; 4] {
    let n = rows[0].len();
    debug_assert!(rows.iter().all(|r| r.len() == n));
    let p = rows.map(|r| r.as_ptr());
    let mut acc = [[_mm256_setzero_pd(); 2]; 4];
    let mut i = 0;
    while i + 8 <= n {
        for r in 0..4 {
            // SAFETY: i + 8 <= n = every run's length (caller's contract): eight readable
            // f32 (unaligned loads).
            let (a, b) = unsafe { (_mm_loadu_ps(p[r].add(i)), _mm_loadu_ps(p[r].add(i + 4))) };
            acc[r][0] = _mm256_add_pd(acc[r][0], _mm256_cvtps_pd(a));
            acc[r][1] = _mm256_add_pd(acc[r][1], _mm256_cvtps_pd(b));
        }
        i += 8;
    }
    let mut out = [0f64; 4];
    for r in 0..4 {
        if i + 4 <= n {
            // SAFETY: i + 4 <= n.
            let v = unsafe { _mm_loadu_ps(p[r].add(i)) };
            acc[r][0] = _mm256_add_pd(acc[r][0], _mm256_cvtps_pd(v));
        }
        let mut lanes = [0f64; 4];
        // SAFETY: `lanes` holds four f64 (unaligned store).
        unsafe { _mm256_storeu_pd(lanes.as_mut_ptr(), _mm256_add_pd(acc[r][0], acc[r][1])) };
        let mut s = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
        for &v in &rows[r][n - n % 4..] {
            s += v as f64;
        }
        out[r] = s;
    }
    out
}

/// `acc[j] += (a[j] + b[j]) + (c[j] + d[j])` in f64 for the four rows `[a, b, c, d]` (each
/// at least `acc.len()` long): the outer float32 sum folding rows from four distant parts
/// of its range together, one accumulator load and store per four values (measured in the
/// `kernel::reduce` docs).
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn sum_rows4_into_f32_avx2(acc: &mut [f64], rows: [&[f32]; 4]) {
    let w = acc.len();
    let [a, b, c, d] = rows.map(|r| &r[..w]);
    let mut j = 0;
    while j + 4 <= w {
        // SAFETY: j + 4 <= w = the length of `acc` and of every row slice (unaligned loads
        // and store).
        unsafe {
            let v = |r: &[f32]| _mm256_cvtps_pd(_mm_loadu_ps(r.as_ptr().add(j)));
            let s = _mm256_add_pd(_mm256_add_pd(v(a), v(b)), _mm256_add_pd(v(c), v(d)));
            let p = acc.as_mut_ptr().add(j);
            _mm256_storeu_pd(p, _mm256_add_pd(_mm256_loadu_pd(p), s));
        }
        j += 4;
    }
    for j in j..w {
        acc[j] += (a[j] as f64 + b[j] as f64) + (c[j] as f64 + d[j] as f64);
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    /// Whether the folds under test can run here (the tests pass vacuously otherwise).
    fn avx2_and_fma() -> bool {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }

    #[test]
    fn avx2_sum_equals_the_exact_sum_on_every_tail_length() {
        if !avx2_and_fma() {
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

    #[test]
    fn four_rows_into_accumulators_equal_the_exact_sums_on_every_width() {
        if !avx2_and_fma() {
            return;
        }
        let xs: Vec<f32> = (0..900).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
        for w in 0..40 {
            let rows = [0, 200, 433, 800].map(|o| &xs[o..o + w + 3]);
            let mut acc: Vec<f64> = (0..w).map(|j| j as f64).collect();
            // SAFETY: AVX2 and FMA checked above; rows are longer than `acc`.
            unsafe { sum_rows4_into_f32_avx2(&mut acc, rows) };
            for (j, &v) in acc.iter().enumerate() {
                let want = j as f64 + rows.iter().map(|r| r[j] as f64).sum::<f64>();
                assert_eq!(v, want, "w = {w}, column {j}");
            }
        }
    }

    #[test]
    fn four_row_sums_equal_the_exact_sums_on_every_length() {
        if !avx2_and_fma() {
            return;
        }
        let xs: Vec<f32> = (0..800).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
        for n in 0..200 {
            let rows = [0, 150, 333, 600].map(|o| &xs[o..o + n]);
            let want = rows.map(|r| r.iter().map(|&v| v as f64).sum::<f64>());
            // SAFETY: AVX2 and FMA checked above; the rows have the same length.
            assert_eq!(unsafe { sum4_f32_avx2(rows) }, want, "n = {n}");
        }
        let nan = [1.0, f32::NAN, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
        let one = [1.0f32; 9];
        // SAFETY: as above.
        let got = unsafe { sum4_f32_avx2([&one, &nan, &one, &one]) };
        assert!(got[1].is_nan() && got[0] == 9.0 && got[3] == 9.0);
    }
}
