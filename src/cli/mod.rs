//! Command-line front end: one module per subcommand, each with its clap `Args` and a `run`.

pub mod bench;
pub mod check;
pub mod compile;
pub mod conformance;
pub mod demo;
pub mod guards;
pub mod program;
pub mod run;
