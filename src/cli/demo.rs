//! `symstride demo` (not implemented yet).

use std::process::ExitCode;
use symstride::{Error, Result};

/// Arguments of `symstride demo`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Number of threads for the kernels (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
}

/// Runs the subcommand.
pub fn run(_args: Args) -> Result<ExitCode> {
    Err(Error::invalid("`symstride demo` is not implemented yet"))
}
