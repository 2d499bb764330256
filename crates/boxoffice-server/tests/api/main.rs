//! Integration tests: a real server on a real socket over a fresh Postgres database per test.

mod helpers;
mod proxy;
mod stores;

mod allocations;
mod availability;
mod bench;
mod best_available;
mod bookings;
mod browser;
mod claims_together;
mod client;
mod connections;
mod console;
mod console_page;
mod events;
mod hold_refusals;
mod holds;
mod housekeeping;
mod imports;
mod input;
mod limits;
mod live;
mod ops;
mod orders;
mod outage;
mod passes;
mod queue;
mod races;
mod redis_outage;
mod redis_store;
mod relay;
mod replica;
mod schema;
mod sessions;
mod venues;
