//! The load generator (`boxoffice bench`) and the race demos (`boxoffice race`), against a
//! running Boxoffice server over HTTP: buyers driven through the typed client, answers
//! tallied, and the invariants checked through the API afterwards.
//!
//! # Layout
//!
//! - [`bench`]: the scenarios of `boxoffice bench`, latency histograms and reports.
//! - [`client`]: the server the demos race against (through `boxoffice-client`) and how
//!   they get buyers.
//! - [`race`]: `boxoffice race ga` (general admission) and `boxoffice race seat` (one hot
//!   seat), through the typed client.
//! - [`unsafe_demo`]: `boxoffice race ga --unsafe`, the naive booking overselling on a
//!   scratch table of its own (plain SQL; never the server).

pub mod bench;
pub mod client;
pub mod race;
pub mod unsafe_demo;
