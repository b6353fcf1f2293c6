//! `symstride conformance` (not implemented yet).

use std::process::ExitCode;
use symstride::{Error, Result};

/// Arguments of `symstride conformance`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Golden JSONL files.
    #[arg(required = true)]
    pub files: Vec<std::path::PathBuf>,
    /// Compute every answer through the symbolic path.
    #[arg(long)]
    pub symbolic: bool,
    /// Compare with `expect`, list mismatches, print `N passed, M failed`.
    #[arg(long)]
    pub check: bool,
}

/// Runs the subcommand.
pub fn run(_args: Args) -> Result<ExitCode> {
    Err(Error::invalid(
        "`symstride conformance` is not implemented yet",
    ))
}
