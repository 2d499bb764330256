//! Race demos: many buyers released at the same moment against a running Boxoffice server,
//! their answers tallied, and the totals checked against what the server says afterwards.
//!
//! # Layout
//!
//! - [`client`]: the server the demos race against (through `boxoffice-client`) and how
//!   they get buyers.
//! - [`race`]: `boxoffice race ga` (general admission, and its deliberately naive
//!   `--unsafe` twin on a scratch table) and `boxoffice race seat` (one hot seat).

pub mod client;
pub mod race;
