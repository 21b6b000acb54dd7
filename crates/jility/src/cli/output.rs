//! How a command prints: `--json` and `--color` (shared by the commands' groups, local and
//! cloud alike).

use clap::{Args, ValueEnum};

/// When to colour the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// How a command prints.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Print JSON instead of text (the data as the API and the MCP tools answer it; times
    /// in full).
    #[arg(long, global = true, display_order = 900)]
    pub json: bool,
    /// Colour the text: auto (on a terminal, unless NO_COLOR is set or TERM is dumb),
    /// always or never.
    #[arg(long, global = true, value_name = "WHEN", display_order = 901)]
    pub color: Option<ColorChoice>,
}
