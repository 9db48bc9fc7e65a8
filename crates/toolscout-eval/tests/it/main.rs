//! `toolscout-eval`: converters over small files in each benchmark's own format.

mod convert;
