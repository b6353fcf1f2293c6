//! `symstride bench` (not implemented yet).

use std::process::ExitCode;
use symstride::{Error, Result};

/// Arguments of `symstride bench`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print JSON (`{"median_s": {...}}`).
    #[arg(long)]
    pub json: bool,
    /// Number of threads.
    #[arg(long)]
    pub threads: Option<usize>,
}

/// Runs the subcommand.
pub fn run(_args: Args) -> Result<ExitCode> {
    Err(Error::invalid("`symstride bench` is not implemented yet"))
}
