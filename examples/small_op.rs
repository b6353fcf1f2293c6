//! Profiling driver for the small-op dispatch path (`kernel::add` on a [2,3,4,5] + [3,4,5]
//! broadcast): run it under `valgrind --tool=callgrind` or `perf stat` to count instructions
//! per call, which is robust to machine load where wall-clock time is not.
//!
//! `cargo run --release --example small_op -- [calls]`

use std::hint::black_box;
use symstride::kernel;
use symstride::tensor::Tensor;

fn main() -> symstride::Result<()> {
    let calls: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let x = Tensor::from_vec((0..120).map(|i| i as f32).collect(), &[2, 3, 4, 5])?;
    let y = Tensor::from_vec((0..60).map(|i| i as f32).collect(), &[3, 4, 5])?;
    for _ in 0..calls {
        black_box(kernel::add(black_box(&x), black_box(&y))?);
    }
    Ok(())
}
