//! PostgreSQL, the source of truth: connecting and migrating, the catalog (venues,
//! events, allocations), what is sold (orders, bookings), the outbox, the sweeps, and the
//! postgres hold store.

pub mod bookings;
pub mod console;
pub mod db;
pub mod events;
pub mod holds;
pub mod lapsing;
pub mod orders;
pub mod outbox;
pub mod sweep;
pub mod venues;
pub mod waitlist;
