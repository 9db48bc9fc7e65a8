//! `toolscout-eval`: converters over small files in each benchmark's own format.

#![allow(clippy::unwrap_used)]

mod convert;
