//! PostgreSQL, the source of truth: connecting and migrating, organizations and their keys,
//! the catalog (venues, events, allocations, seasons), general-admission bookings, the sweeps, and the
//! postgres hold store. Sales of held seats are [`crate::sales`], whichever store holds.

pub mod admin;
pub mod bookings;
pub mod db;
pub mod events;
pub mod holds;
pub mod organizations;
pub mod seasons;
pub mod sweep;
pub mod tickets;
pub mod venues;
pub mod webhooks;
