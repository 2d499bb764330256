//! The Boxoffice HTTP server.
//!
//! # Layout
//!
//! - [`config`]: settings from flags and environment variables, secrets redacted.
//! - [`app`]: the router (routes, OpenAPI, body limit, request timeout, metrics, tracing)
//!   and [`app::Application`], which tests and `boxoffice serve` both run.
//! - [`serve`]: the accept loop: header and idle timeouts, a cap on connections, shutdown
//!   with a grace period.
//! - [`state`]: what every handler shares.
//! - [`routes`]: one module per resource; handlers extract, call a service (or, for plain
//!   reads and admin writes, the store), and map the result to HTTP.
//! - [`service`]: the flows between routes and stores (holds, orders, bookings,
//!   availability), with no HTTP type in them.
//! - [`live`]: live updates: changes published onto a Postgres `NOTIFY` bus by the
//!   services, fanned out to each instance's stream subscribers, one channel per event.
//! - [`seat_map`]: per-server cache of rendered seat maps, invalidated by allocation version.
//! - [`auth`]: the admin token, user JWTs and the extractors that check them.
//! - [`error`]: [`error::ApiError`], rendered as problem+json with API.md's stable codes.
//! - [`extract`]: a JSON extractor whose rejections are problem documents.
//! - [`limits`]: abuse limits (sessions per client address, holds per user), in Redis
//!   when it is configured.
//! - [`metrics`]: Prometheus request counts and latencies.
//! - [`pass`]: the waiting room's pass, signed and checked without a store lookup.
//! - [`relay`]: the outbox relay, delivering committed changes to webhooks.
//! - [`demo`]: the demo venue and event of `boxoffice serve --demo`.

pub mod admission;
pub mod app;
pub mod auth;
pub mod config;
pub mod demo;
pub mod error;
pub mod extract;
pub mod limits;
pub mod live;
pub mod metrics;
pub mod pass;
pub mod relay;
pub mod replica;
pub mod routes;
pub mod seat_map;
pub mod serve;
pub mod service;
pub mod state;

pub use app::Application;
pub use config::Settings;
