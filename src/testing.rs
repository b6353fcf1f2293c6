//! Helpers shared by the integration tests, benches and notebooks (and the seeded data of
//! `symstride run`'s random inputs); not part of the API.
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

/// A seeded xorshift generator of `f32`s in `[0, 1)` (24 random bits each): the data of
/// `symstride run`'s random inputs and of the benches, the same on every run and machine.
#[derive(Clone, Debug)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator started from `seed` (any value: it is mixed and made odd, never 0).
    pub fn new(seed: u64) -> XorShift {
        XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next value in `[0, 1)`.
    pub fn unit(&mut self) -> f32 {
        let x = &mut self.0;
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        (*x >> 40) as f32 / (1u64 << 24) as f32
    }
}
