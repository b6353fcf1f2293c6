//! The `symstride` command-line tool. Each subcommand lives in its own module under `cli/`.

mod cli;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Symbolic dynamic-shape stride engine.
#[derive(Parser, Debug)]
#[command(name = "symstride", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// A tour: compile a built-in program (attention heads with bias and softmax), show its
    /// guards, dispatch and run shapes through it (hits and re-traces), checked against the
    /// step-by-step reference; `--single-op` does the same with the seed spec's `add`.
    Demo(cli::demo::Args),
    /// Check golden JSONL cases (layout, broadcast, elementwise) against the engine.
    Conformance(cli::conformance::Args),
    /// Run the benchmark scenarios and print their median times.
    Bench(cli::bench::Args),
    /// Compile a symbolic spec into a plan artifact.
    Compile(cli::compile::Args),
    /// Print the guards of every specialization of a plan artifact.
    Guards(cli::guards::Args),
    /// Evaluate a plan's guards against bindings of its symbols.
    Check(cli::check::Args),
    /// Execute concrete tensors through a plan and verify against a reference.
    Run(cli::run::Args),
}

/// `symstride ... | head`: a reader that stops early closes stdout. `println!` then panics
/// (Rust ignores SIGPIPE); like other Unix tools, exit quietly with status 141 (128 +
/// SIGPIPE) instead of printing a panic.
fn exit_quietly_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info)
    }));
}

fn main() -> ExitCode {
    exit_quietly_on_broken_pipe();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(a) => cli::demo::run(a),
        Command::Conformance(a) => cli::conformance::run(a),
        Command::Bench(a) => cli::bench::run(a),
        Command::Compile(a) => cli::compile::run(a),
        Command::Guards(a) => cli::guards::run(a),
        Command::Check(a) => cli::check::run(a),
        Command::Run(a) => cli::run::run(a),
    };
    match result {
        Ok(code) => code,
        // A reader that stopped early (`| head`): quiet, like the panic hook above.
        Err(symstride::Error::Io { path, message })
            if path == "<stdout>" && message.contains("Broken pipe") =>
        {
            ExitCode::from(141)
        }
        Err(e) => {
            eprintln!("symstride: error: {e}");
            ExitCode::FAILURE
        }
    }
}
