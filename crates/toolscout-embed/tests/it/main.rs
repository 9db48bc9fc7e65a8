//! The crate's one integration test binary.

#![allow(clippy::unwrap_used, missing_docs)]

#[cfg(feature = "bundled")]
mod bundled;
// The tiny BERT the cache tests write needs the transformer too.
#[cfg(feature = "transformer")]
mod cache;
mod ensemble;
#[cfg_attr(not(feature = "transformer"), allow(dead_code))]
mod fixture;
#[cfg(feature = "transformer")]
mod forward;
#[cfg(feature = "transformer")]
mod multilingual;
#[cfg(feature = "transformer")]
mod q4;
#[cfg(feature = "transformer")]
mod reference;
#[cfg(feature = "transformer")]
mod st_config;
mod static_model;
mod tokenizer;
mod unigram;
#[cfg(not(feature = "transformer"))]
mod without_transformer;
