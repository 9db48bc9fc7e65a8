//! Integration tests of `toolscout-search`: ranked results with their tiers, filters,
//! pagination, did-you-mean, persistence, scopes and odd input, over a small catalog.

#![allow(clippy::unwrap_used)]

mod fixture;
mod index;
mod meaning;
mod ranking;
mod scope;
