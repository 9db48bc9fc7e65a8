//! `cargo xtask`: the workspace's own checks.
//!
//! * `cargo xtask cycles [ROOT…]`: the import graph between the modules of each crate
//!   root given (by default the catalog's, the server's and the CLI's), its cycles
//!   printed with the lines that make them; exit 1 on any. See [`cycles`].

mod cycles;
mod lex;

use std::path::PathBuf;
use std::process::ExitCode;

/// The crate roots `cargo xtask cycles` checks when given none.
const DEFAULT_ROOTS: &[&str] = &[
    "crates/toolscout-catalog/src/lib.rs",
    "crates/toolscout-server/src/lib.rs",
    "src/main.rs",
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("cycles") => run_cycles(&args[1..]),
        _ => {
            eprintln!("usage: cargo xtask cycles [CRATE_ROOT.rs …]");
            ExitCode::from(2)
        }
    }
}

fn run_cycles(roots: &[String]) -> ExitCode {
    // Paths are the workspace's: `cargo xtask` runs from anywhere inside it. The
    // manifest directory `cargo run` gives at run time, not the one compiled in: a
    // binary built by another clone and reused from a shared target directory (CI's)
    // would read that clone's files.
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    let workspace = manifest.join("../..");
    let roots: Vec<PathBuf> = if roots.is_empty() {
        DEFAULT_ROOTS.iter().map(|r| workspace.join(r)).collect()
    } else {
        roots.iter().map(PathBuf::from).collect()
    };
    let mut failed = false;
    for root in &roots {
        match cycles::check(root) {
            Ok(report) => {
                print!("{}", report.render(&workspace));
                failed |= !report.cycles.is_empty();
            }
            Err(error) => {
                eprintln!("{}: {error}", root.display());
                return ExitCode::from(2);
            }
        }
    }
    if failed {
        println!("import cycles found: make the imports of these modules point one way");
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
