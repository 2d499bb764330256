//! The Boxoffice domain: what a venue, an event and a seat's status are, with no I/O.
//!
//! # Layout
//!
//! - [`access`]: the roles keys have, the rights calls need, and the table between them.
//! - [`ids`]: typed identifiers (`VenueId`, `EventId`, `UserId`) parsed from text.
//! - [`validation`]: per-field validation errors, collected rather than failing on the first.
//! - [`venue`]: the venue specification clients send and the seat-map generator that turns
//!   it into seats with ids, labels and coordinates.
//! - [`event`]: the event specification, ticket types, general-admission areas and the
//!   allocation rules that decide which seats are on sale at which ticket type.
//! - [`local_time`]: time zones by IANA name, and how an event's times are written in one.
//! - [`season`]: seasons (events of one venue sold together, the same seat for each), their
//!   ticket types, allocations and partial seasons.
//! - [`hold`]: holds, orders and what hold stores answer; the rules a basket must meet.
//! - [`best_available`]: choosing the best free seats together, without stranding one.
//! - [`availability`]: composing each seat's status from the event layout, the sold seats
//!   (Postgres) and the held seats (the hold store), and counting them.
//! - [`statuses`]: every seat's status in a few bytes, for a client that has the layout.
//!
//! Everything here is deterministic and is unit- and property-tested; the store and the
//! server crates bring the I/O.

pub mod access;
pub mod availability;
pub mod best_available;
pub mod event;
pub mod hold;
pub mod ids;
pub mod local_time;
pub mod season;
pub mod statuses;
pub mod validation;
pub mod venue;
