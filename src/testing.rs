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
