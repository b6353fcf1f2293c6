//! Runs `N` cached dispatches of the seed spec (`dispatch_cached_4d`), for instruction
//! counts, which are stable on a shared machine where wall time is not:
//!
//! ```text
//! cargo build --release --example dispatch_count
//! valgrind --tool=callgrind target/release/examples/dispatch_count 1000
//! valgrind --tool=callgrind target/release/examples/dispatch_count 11000
//! ```
//!
//! (difference of the two totals) / 10000 = instructions per dispatch.
use symstride::aot::SeedDispatch;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    let mut s = SeedDispatch::new().expect("seed dispatch");
    let mut acc = 0usize;
    for _ in 0..n {
        acc += std::hint::black_box(&mut s).run().expect("dispatch");
    }
    println!("{acc}");
}
