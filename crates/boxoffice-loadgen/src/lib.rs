//! Race demos: many buyers released at the same moment against a running Boxoffice server,
//! their answers tallied, and the totals checked against what the server says afterwards.
//!
//! # Layout
//!
//! - [`client`]: the server the demos race against (through `boxoffice-client`) and how
//!   they get buyers.
//! - [`race`]: `boxoffice race ga` (general admission) and `boxoffice race seat` (one hot
//!   seat), through the typed client.
//! - [`unsafe_demo`]: `boxoffice race ga --unsafe`, the naive booking overselling on a
//!   scratch table of its own (plain SQL; never the server).

pub mod client;
pub mod race;
pub mod unsafe_demo;
