//! Built-in tools (stub).
