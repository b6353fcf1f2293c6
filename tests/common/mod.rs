//! Running the built `symstride` binary from the CLI tests (`cli`, `cli_compile`,
//! `cli_run`): one place that captures its output and checks it never panicked.

use std::process::{Command, Output, Stdio};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_symstride");

/// What one run of the binary did.
pub struct Run {
    /// Exit code (a run killed by a signal fails the test).
    pub code: i32,
    /// Standard output, lossily decoded.
    pub stdout: String,
    /// Standard error, lossily decoded.
    pub stderr: String,
}

/// Runs the binary with `RUST_BACKTRACE=1` and no standard input, and checks it did not
/// panic.
pub fn run(args: &[&str]) -> Run {
    let Output {
        status,
        stdout,
        stderr,
    } = Command::new(BIN)
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run symstride");
    let r = Run {
        code: status.code().expect("terminated by a signal"),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    };
    assert!(
        !r.stderr.contains("panicked") && !r.stderr.contains("stack backtrace"),
        "symstride {args:?} panicked:\n{}",
        r.stderr
    );
    r
}
