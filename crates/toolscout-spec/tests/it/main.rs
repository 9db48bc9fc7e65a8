//! Integration tests of `toolscout-spec`: disclosure snapshots, adapters, names, identity.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod adapters;
mod disclosure;
mod identity;
mod names;
mod openapi;
mod spec;

use toolscout_spec::{ToolSpec, sample};

/// The sample tool called `name`.
fn tool(name: &str) -> ToolSpec {
    sample::catalog()
        .into_iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no sample tool {name}"))
}
