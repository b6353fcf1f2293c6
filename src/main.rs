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
    /// The main job: compile the seed spec, show its guards, run shapes through the plan.
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

fn main() -> ExitCode {
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
        Err(e) => {
            eprintln!("symstride: error: {e}");
            ExitCode::FAILURE
        }
    }
}
