//! The crate's one integration test binary.

#![allow(clippy::unwrap_used, missing_docs)]

#[cfg(feature = "bundled")]
mod bundled;
mod cache;
mod ensemble;
mod fixture;
mod forward;
mod reference;
mod st_config;
mod static_model;
mod tokenizer;
