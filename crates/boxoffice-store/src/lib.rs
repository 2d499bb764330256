//! Boxoffice persistence: PostgreSQL, the source of truth; Redis, the optional fast layer;
//! and the hold-store interface both implement.
//!
//! # Layout
//!
//! - `scripts/` (beside `src/`): Lua scripts run in Redis, each headed by its KEYS, ARGV and
//!   return value.
//! - `migrations/` (beside `src/`): the tables, applied in order at start and never edited
//!   once landed. Each constraint that protects an invariant says so where it is declared.
//! - `sql/claim.sql` (beside `src/`): the claim, every rule that decides whether a seat can
//!   be held, as the SQL functions in force, applied after the migrations at every start.
//! - [`error`]: [`StoreError`], which sorts failures into "not found", "lost a race on a
//!   named constraint" and "the store is unavailable" so the server can answer 404, 409
//!   and 503 instead of 500.
//! - [`hold_store`]: the [`hold_store::HoldStore`] interface every hold store implements.
//! - [`pg`]: Postgres, a module per job:
//!   - [`pg::db`]: connecting (pool size, timeouts), creating the database if it is
//!     missing, running the migrations.
//!   - [`pg::venues`]: venues and their seat maps.
//!   - [`pg::events`]: events, ticket types, general-admission areas, seat allocations
//!     and the sold seats that availability composes.
//!   - [`pg::holds`]: the postgres hold store (docs/design/holds-in-postgres.md): claims
//!     one by one or sent together, and the transaction recipe every path that makes or
//!     extends holds uses.
//!   - [`pg::orders`]: writing, reading and cancelling orders inside a hold store's
//!     transaction, each with its outbox row.
//!   - [`pg::bookings`]: general-admission bookings by quantity under the area row's
//!     lock, with idempotent answers.
//!   - [`pg::outbox`]: leasing and marking outbox rows for delivery.
//!   - [`pg::sweep`]: deleting old idempotency answers and delivered outbox rows.
//! - [`redis`]: Redis, a module per job:
//!   - [`redis::link`]: one lazily made connection to a Redis server or a Redis Cluster.
//!   - [`redis::holds`]: the redis hold store (docs/design/holds-in-redis.md;
//!     `scripts/hold_*.lua`, `scripts/event_*.lua`): key schema, script registry, value
//!     codec, the event's state loaded from Postgres, checkout, undoing a timed-out
//!     acquire, and the store itself, a module each.
//!   - [`redis::gate`]: the sale-day gate, a counter per general-admission area.
//!   - [`redis::rate_limit`]: per-minute limits shared by every server instance.
//!   - [`redis::queue`]: the waiting room's line per event (`scripts/queue.lua`).

pub mod error;
pub mod hold_store;
pub mod pg;
pub mod redis;

pub use error::StoreError;
