//! Hand-written AVX2 folds for the cases where the compiler's own vectorization of the
//! generic reducers falls short (measured; see `docs/perf/2026-11-kernels.md`, *Reductions*).
//!
//! The float32 `sum` accumulates in f64 ([`super::ReduceElement::SumAcc`]). Compiled for
//! AVX2, LLVM's SLP vectorizer keeps the generic 16-lane leaf at two f64 per register
//! (`vcvtps2pd xmm`); [`sum_f32_avx2`] converts four f32 per instruction into eight
//! independent 256-bit accumulators, and prefetches 4 KiB ahead (measured gains are in
//! `docs/perf/2026-11-kernels.md`).

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
/// (measurements in `docs/perf/2026-11-kernels.md`). The order differs from [`sum_f32_avx2`]'s,
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
/// of its range together, one accumulator load and store per four values (measured in
/// `docs/perf/2026-11-kernels.md`).
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

macro_rules! extreme_avx2 {
    ($name:ident, $t:ty, $lanes:expr, $load:ident, $set1:ident, $max:ident, $min:ident,
     $cmp:ident, $or:ident, $zero:ident, $mask:ident, $store:ident) => {
        /// The maximum (`max`) or minimum of `xs` when it is neither NaN nor zero: four
        /// accumulators of one register each (`vmaxp`/`vminp`), NaNs tracked in a separate
        /// mask. `None` when `xs` holds a NaN or the extreme is ±0: the caller then folds the
        /// run with the generic lanes, which decide which NaN or which zero is returned. So
        /// a `Some` is the one value (bit for bit) the generic fold would return too: a
        /// non-zero, non-NaN extreme equals no other value. The generic `amax` fold of a
        /// short row compiled to two-lane loads, inserts and blends at ~3.5 cycles per value
        /// (`perf` of the softmax's `amax`).
        ///
        /// # Safety
        /// The CPU must support AVX2 and FMA.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        pub(crate) unsafe fn $name(xs: &[$t], max: bool) -> Option<$t> {
            const L: usize = $lanes;
            let n = xs.len();
            let p = xs.as_ptr();
            let init = if max { <$t>::NEG_INFINITY } else { <$t>::INFINITY };
            let mut acc = [$set1(init); 4];
            let mut nan = $zero();
            let mut i = 0;
            while i + 4 * L <= n {
                for (l, a) in acc.iter_mut().enumerate() {
                    // SAFETY: i + L·(l + 1) <= n: L readable values (unaligned load).
                    let v = unsafe { $load(p.add(i + L * l)) };
                    nan = $or(nan, $cmp::<_CMP_UNORD_Q>(v, v));
                    *a = if max { $max(*a, v) } else { $min(*a, v) };
                }
                i += 4 * L;
            }
            while i + L <= n {
                // SAFETY: i + L <= n.
                let v = unsafe { $load(p.add(i)) };
                nan = $or(nan, $cmp::<_CMP_UNORD_Q>(v, v));
                acc[0] = if max { $max(acc[0], v) } else { $min(acc[0], v) };
                i += L;
            }
            if $mask(nan) != 0 {
                return None;
            }
            let pick = |a, b| if max { $max(a, b) } else { $min(a, b) };
            let v = pick(pick(acc[0], acc[1]), pick(acc[2], acc[3]));
            let mut lanes = [init; L];
            // SAFETY: `lanes` holds L values (unaligned store).
            unsafe { $store(lanes.as_mut_ptr(), v) };
            let mut m = init;
            for &x in lanes.iter().chain(&xs[i..]) {
                if x.is_nan() {
                    return None;
                }
                if (max && x > m) || (!max && x < m) {
                    m = x;
                }
            }
            (m != 0.0).then_some(m)
        }
    };
}
extreme_avx2!(
    extreme_f32_avx2,
    f32,
    8,
    _mm256_loadu_ps,
    _mm256_set1_ps,
    _mm256_max_ps,
    _mm256_min_ps,
    _mm256_cmp_ps,
    _mm256_or_ps,
    _mm256_setzero_ps,
    _mm256_movemask_ps,
    _mm256_storeu_ps
);
extreme_avx2!(
    extreme_f64_avx2,
    f64,
    4,
    _mm256_loadu_pd,
    _mm256_set1_pd,
    _mm256_max_pd,
    _mm256_min_pd,
    _mm256_cmp_pd,
    _mm256_or_pd,
    _mm256_setzero_pd,
    _mm256_movemask_pd,
    _mm256_storeu_pd
);

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

    /// The extreme folds against a sequential fold on every length and position of the
    /// extreme, and `None` exactly when there is a NaN or the extreme is a zero.
    #[test]
    fn avx2_extremes_equal_a_sequential_fold_or_decline() {
        if !avx2_and_fma() {
            return;
        }
        for n in 0..80usize {
            for at in 0..n.max(1) {
                let xs: Vec<f32> = (0..n).map(|i| ((i * 7) % 11) as f32 - 20.0).collect();
                let mut hi = xs.clone();
                let mut lo = xs.clone();
                if n > 0 {
                    hi[at] = 3.5;
                    lo[at] = -30.5;
                }
                let seq = |v: &[f32], max: bool| {
                    v.iter().fold(if max { f32::NEG_INFINITY } else { f32::INFINITY }, |m, &x| {
                        if (max && x > m) || (!max && x < m) {
                            x
                        } else {
                            m
                        }
                    })
                };
                // SAFETY: AVX2 and FMA checked above.
                unsafe {
                    assert_eq!(extreme_f32_avx2(&hi, true), Some(seq(&hi, true)), "n {n} at {at}");
                    assert_eq!(extreme_f32_avx2(&lo, false), Some(seq(&lo, false)), "n {n} at {at}");
                    let wide: Vec<f64> = hi.iter().map(|&v| v as f64).collect();
                    assert_eq!(extreme_f64_avx2(&wide, true), Some(seq(&hi, true) as f64));
                    if n > 0 {
                        let mut nan = hi.clone();
                        nan[at] = f32::NAN;
                        assert_eq!(extreme_f32_avx2(&nan, true), None, "NaN at {at} of {n}");
                        let mut zero = vec![-1.0f32; n];
                        zero[at] = -0.0;
                        assert_eq!(extreme_f32_avx2(&zero, true), None, "zero at {at} of {n}");
                    }
                }
            }
        }
    }
}
