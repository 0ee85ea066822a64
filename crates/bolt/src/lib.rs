//! Arbor's Bolt server (being built).

pub mod packstream;
pub mod values;
