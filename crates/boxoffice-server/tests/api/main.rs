//! Integration tests: a real server on a real socket over a fresh Postgres database per test.

mod helpers;
mod proxy;

mod availability;
mod events;
mod ops;
mod outage;
mod sessions;
mod venues;
