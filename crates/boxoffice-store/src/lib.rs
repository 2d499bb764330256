//! Boxoffice persistence: PostgreSQL, the source of truth, and the hold-store interface.
//!
//! # Layout
//!
//! - `scripts/` (beside `src/`): Lua scripts run in Redis, each headed by its KEYS, ARGV and
//!   return value.
//! - `migrations/` (beside `src/`): the schema, applied in order at start and never edited
//!   once landed. Each constraint that protects an invariant says so where it is declared.
//! - [`bookings`]: general-admission bookings by quantity under the area row's lock, with
//!   idempotent answers.
//! - [`db`]: connecting (pool size, timeouts), creating the database if it is missing,
//!   running the migrations.
//! - [`error`]: [`StoreError`], which sorts database failures into "not found", "lost a
//!   race on a named constraint" and "the store is unavailable" so the server can answer
//!   404, 409 and 503 instead of 500.
//! - [`venues`]: venues and their seat maps.
//! - [`events`]: events, ticket types, general-admission areas, seat allocations and the
//!   sold seats that availability composes.
//! - [`gate`]: the sale-day gate, a Redis counter per general-admission area
//!   (`scripts/*.lua`).
//! - [`hold_store`]: the [`hold_store::HoldStore`] interface every hold store implements.
//! - [`pg_holds`]: its Postgres implementation (seed 000).
//! - [`queue`]: the waiting room's line per event, in Redis (`scripts/queue.lua`).
//! - [`redis_holds`]: its Redis implementation (seed 003; `scripts/hold_*.lua`,
//!   `scripts/event_*.lua`): key schema, script registry, value codec, the event's state
//!   loaded from Postgres, checkout, undoing a timed-out acquire, and the store itself, a
//!   module each.
//! - [`rate_limit`]: per-minute limits shared by every server instance
//!   (`scripts/rate_limit.lua`).
//! - [`redis_link`]: one lazily made connection to a Redis server or a Redis Cluster.
//! - [`outbox`]: leasing and marking outbox rows for delivery.
//! - [`sweep`]: deleting old idempotency answers and delivered outbox rows, in batches.
//! - [`orders`]: writing, reading and cancelling orders inside a hold store's transaction,
//!   each with its outbox row.

pub mod bookings;
pub mod db;
pub mod error;
pub mod events;
pub mod gate;
pub mod hold_store;
pub mod orders;
pub mod outbox;
pub mod pg_holds;
pub mod queue;
pub mod rate_limit;
pub mod redis_holds;
pub mod redis_link;
pub mod sweep;
pub mod venues;

pub use error::StoreError;
