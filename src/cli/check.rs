//! `symstride check` (not implemented yet).

use std::process::ExitCode;
use symstride::{Error, Result};

/// Arguments of `symstride check`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The plan artifact.
    pub plan: std::path::PathBuf,
    /// One binding, `k=v,k=v`.
    #[arg(long, conflicts_with = "bindings")]
    pub bind: Option<String>,
    /// A JSONL file of bindings (objects symbol -> value).
    #[arg(long)]
    pub bindings: Option<std::path::PathBuf>,
}

/// Runs the subcommand.
pub fn run(_args: Args) -> Result<ExitCode> {
    Err(Error::invalid("`symstride check` is not implemented yet"))
}
