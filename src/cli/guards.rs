//! `symstride guards` (not implemented yet).

use std::process::ExitCode;
use symstride::{Error, Result};

/// Arguments of `symstride guards`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The plan artifact.
    pub plan: std::path::PathBuf,
}

/// Runs the subcommand.
pub fn run(_args: Args) -> Result<ExitCode> {
    Err(Error::invalid("`symstride guards` is not implemented yet"))
}
