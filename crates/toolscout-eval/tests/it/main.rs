//! `toolscout-eval`: the readers over small files, the metrics on known rankings and a
//! tiny catalog, the agent's figures from hand-built outcomes, and the converters over
//! small files in each benchmark's own format.

#![allow(clippy::unwrap_used)]

mod agent;
mod compare;
mod convert;
mod read;
mod results;
mod retrieve;
mod search;
