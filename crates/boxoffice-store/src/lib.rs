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
//! - `claim_word`: the words every claim answers with (`sql/claim.sql`, the hold
//!   scripts), read in one place by both stores' decoders.
//! - [`error`]: [`StoreError`], which sorts failures into "not found", "lost a race on a
//!   named constraint" and "the store is unavailable" so the server can answer 404, 409
//!   and 503 instead of 500.
//! - [`hold_store`]: the [`hold_store::HoldStore`] interface every hold store implements:
//!   holds only (acquire, grow, shrink, extend, release, read, the allocation fences).
//! - [`season_holds`]: one basket held in every event of a season at once
//!   ([`season_holds::SeasonHolds`]; the postgres store's claim is
//!   `boxoffice_claim_season`, `sql/claim.sql`).
//! - `lanes`: work of one kind sent to Postgres together (claims, checkouts), a batch a
//!   lane.
//! - [`sales`]: checkout, payment, cancellation and the waiting list's offers, written in
//!   Postgres whichever store holds; each flow calls its hold store's part
//!   ([`sales::SaleSeats`]) at the same steps. Neither backend imports the other: both
//!   import this.
//! - [`journal`]: what a change leaves behind in its transaction, whichever store holds:
//!   [`journal::audit`], the append-only log of changes made with a key (typed
//!   [`journal::Action`]s), and [`journal::outbox`], the rows each organization's webhook
//!   is sent (typed [`journal::Topic`]s), written with the change and leased by relays.
//! - [`pg`]: Postgres, a module per job:
//!   - [`pg::db`]: connecting (pool size, timeouts), creating the database if it is
//!     missing, running the migrations.
//!   - [`pg::venues`]: venues and their seat maps.
//!   - [`pg::events`]: events, ticket types, general-admission areas, seat allocations
//!     and the sold seats that availability composes.
//!   - [`pg::seasons`]: seasons, their events, ticket types, allocations and partial
//!     seasons.
//!   - [`pg::holds`]: the postgres hold store (docs/design/holds-in-postgres.md): claims
//!     one by one or sent together, the transaction recipe every path that makes or
//!     extends holds uses, and its part in a sale (its rows change in the sale's
//!     transaction).
//!   - [`pg::bookings`]: general-admission bookings by quantity under the area row's
//!     lock, with idempotent answers.
//!   - [`pg::organizations`]: organizations, their keys and buyer-token signing keys,
//!     and who owns a thing; [`pg::webhooks`]: each organization's webhook.
//!   - [`pg::tickets`]: tickets, check-ins at the door, entry keys and the revocation list.
//!   - [`pg::admin`]: what the console reads (orders a page at a time, sales, reports).
//!   - [`pg::sweep`]: deleting old idempotency answers, delivered outbox rows and events
//!     that waited too long for a webhook.
//! - [`redis`]: Redis, a module per job:
//!   - [`redis::link`]: one lazily made connection to a Redis server or a Redis Cluster.
//!   - [`redis::holds`]: the redis hold store (docs/design/holds-in-redis.md;
//!     `scripts/hold_*.lua`, `scripts/event_*.lua`): key schema, script registry, value
//!     codec, the event's state loaded from Postgres, its part in a sale (protecting the
//!     seats while Postgres commits), undoing a timed-out acquire, and the store itself, a
//!     module each.
//!   - [`redis::gate`]: the sale-day gate, a counter per general-admission area.
//!   - [`redis::rate_limit`]: per-minute limits shared by every server instance.
//!   - [`redis::queue`]: the waiting room's line per event (`scripts/queue_*.lua`).
//!
//! # What each store decides
//!
//! | rule | postgres store | redis store |
//! | --- | --- | --- |
//! | a seat can be held (on sale to the buyer's channel, not taken, the buyer's limit, the event not started, the pass not ended) | `boxoffice_claim`, `sql/claim.sql` | `scripts/hold_acquire.lua` and `hold_grow.lua` (`prelude.lua` for the limit and the pass) |
//! | a season's basket is held in every event it covers at once, or nowhere | `boxoffice_claim_season`, `sql/claim.sql` | `hold_acquire.lua` in each event, twice: the seats marked in every event in event-id order, then held (`redis::holds::season`) |
//! | a hold lapses | Postgres' clock, in every statement that reads a hold | Redis' clock: the keys' TTL |
//! | a release or a taken-out seat frees only the hold's own seats | a compare-and-delete statement under the buyer's lock | `hold_release.lua`, `hold_shrink.lua` |
//! | a seat is sold once | the `order_seat_sold` unique index, in the order's transaction (`sales::checkout`, `sales::orders`) | the same index: Redis protects the seats while Postgres commits the order |
//! | a waiting-list offer's deadline | Postgres, in the order's transaction (`sales::orders::write_orders`) | the same |
//! | a pending order's seats stay held until its deadline | its reservation rows | `order_pending.lua` |
//! | a checkout, payment, cancellation or offer takes the seats | its rows change in the sale's transaction (`pg/holds/sale.rs`) | protected by a script before Postgres commits, marked sold or given back after (`redis/holds/sale.rs`) |

mod claim_word;
pub mod error;
pub mod hold_store;
pub mod journal;
mod lanes;
pub mod pg;
pub mod redis;
pub mod sales;
pub mod season_holds;

pub use error::StoreError;
