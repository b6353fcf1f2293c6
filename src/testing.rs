//! Helpers shared by the integration tests, benches and notebooks; not part of the API.
//!
//! The repository carries its own copies of the golden PyTorch cases (`tests/golden/`) and
//! of the public specs (`tests/specs/`), so a bare clone tests itself with nothing beside it.

use std::path::PathBuf;

/// Path of a golden file carried by the repository (`tests/golden/<file>`).
pub fn golden_path(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("golden")
        .join(file)
}

/// Path of a spec file carried by the repository (`tests/specs/<file>`).
pub fn spec_path(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("specs")
        .join(file)
}

/// A seeded linear congruential generator (Knuth's MMIX constants) for deterministic random
/// test cases: the same cases on every run and machine, no dependency.
#[derive(Clone, Debug)]
pub struct Lcg(u64);

impl Lcg {
    /// A generator started at `seed`.
    pub fn new(seed: u64) -> Lcg {
        Lcg(seed)
    }

    /// The next value in `0..n` (`n >= 1`; the high bits of the state, which an LCG keeps
    /// most random).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }

    /// An index below `n`.
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }
}
