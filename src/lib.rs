//! toolscout
pub use toolscout_spec as spec;
