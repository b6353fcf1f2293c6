//! `symstride run` (not implemented yet).

use std::process::ExitCode;
use symstride::{Error, Result};

/// Arguments of `symstride run`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The plan artifact.
    pub plan: std::path::PathBuf,
    /// The binding, `k=v,k=v`.
    #[arg(long)]
    pub bind: String,
    /// Number of threads.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Repetitions for timing.
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
}

/// Runs the subcommand.
pub fn run(_args: Args) -> Result<ExitCode> {
    Err(Error::invalid("`symstride run` is not implemented yet"))
}
