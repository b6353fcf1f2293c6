//! A double-double reference `erf` for the tests and `examples/vmath_ulp.rs` (std has no
//! `erf`, and the `libm` crate is not in the lock file): good to about 2^-100 relative.
//! * `|x| <= 2.5`: the Taylor series `2/√π · Σ (-1)^n x^(2n+1) / (n! (2n+1))` in
//!   double-double arithmetic (terms grow to at most `2^7` here, 106-bit sums absorb it).
//! * `|x| > 2.5`: `1 - erfc(x)`, `erfc(x) = e^(-x²)/√π · 1/(x + (1/2)/(x + 1/(x + …)))` (the
//!   Laplace continued fraction, 300 levels, f64) with `x²` split exactly: `erfc <= 4.1e-4`
//!   there, so its f64 error is below `2^-62` absolute.

/// `a + b` exactly, as `(sum, error)`.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let v = s - a;
    (s, (a - (s - v)) + (b - v))
}

/// `a·b` exactly, as `(product, error)`.
fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

fn dd_add(x: (f64, f64), y: (f64, f64)) -> (f64, f64) {
    let (s, e) = two_sum(x.0, y.0);
    two_sum(s, e + x.1 + y.1)
}

fn dd_mul(x: (f64, f64), y: (f64, f64)) -> (f64, f64) {
    let (p, e) = two_prod(x.0, y.0);
    two_sum(p, e + x.0 * y.1 + x.1 * y.0)
}

fn dd_div(x: (f64, f64), d: f64) -> (f64, f64) {
    let q = x.0 / d;
    let (p, e) = two_prod(q, d);
    two_sum(q, (((x.0 - p) - e) + x.1) / d)
}

/// `erf(x)` as `hi + lo`.
pub fn erf_dd(x: f64) -> (f64, f64) {
    if x.is_nan() {
        return (x, 0.0);
    }
    let a = x.abs();
    let (hi, lo) = if a <= 2.5 {
        let mx2 = two_prod(-a, a);
        let mut p = (a, 0.0);
        let mut sum = (a, 0.0);
        let mut n = 1.0;
        loop {
            p = dd_div(dd_mul(p, mx2), n);
            let t = dd_div(p, 2.0 * n + 1.0);
            sum = dd_add(sum, t);
            if t.0.abs() <= 1e-34 * sum.0.abs() {
                break;
            }
            n += 1.0;
        }
        dd_mul(
            sum,
            (std::f64::consts::FRAC_2_SQRT_PI, 1.533_545_961_316_588e-17),
        )
    } else if a < 30.0 {
        let mut k = a;
        for i in (1..=300).rev() {
            k = a + (i as f64 * 0.5) / k;
        }
        let (s, e) = two_prod(a, a);
        let erfc = (-s).exp() * (1.0 - e) * (0.5 * std::f64::consts::FRAC_2_SQRT_PI) / k;
        let h = 1.0 - erfc;
        (h, (1.0 - h) - erfc)
    } else {
        (1.0, 0.0)
    };
    if x < 0.0 {
        (-hi, -lo)
    } else {
        (hi, lo)
    }
}
