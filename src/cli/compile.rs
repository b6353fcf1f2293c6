//! `symstride compile` (not implemented yet).

use std::process::ExitCode;
use symstride::{Error, Result};

/// Arguments of `symstride compile`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The spec file (one spec object).
    pub spec: std::path::PathBuf,
    /// Output artifact path.
    #[arg(short, long)]
    pub output: std::path::PathBuf,
    /// Compile enough specializations to admit every binding.
    #[arg(long)]
    pub cover: bool,
}

/// Runs the subcommand.
pub fn run(_args: Args) -> Result<ExitCode> {
    Err(Error::invalid("`symstride compile` is not implemented yet"))
}
