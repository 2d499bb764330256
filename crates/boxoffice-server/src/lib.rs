//! The Boxoffice HTTP server: the API of docs/api.md over the service layer
//! ([`boxoffice_service`]), which knows no HTTP.
//!
//! # Layout
//!
//! - [`config`]: settings from flags and environment variables, secrets redacted.
//! - [`app`]: [`app::Application`], which tests and `boxoffice serve` both run: the
//!   services over the stores, the router on a socket, the workers, a clean stop.
//! - [`router`]: every route, the OpenAPI document, and the layers in their order.
//! - [`middleware`]: compression, request ids, CORS, the head-size check and the request
//!   timeout (the adaptive limit is the service's, around its store calls).
//! - [`workers`]: upkeep, the keys, sweeps and expiries, each on its interval.
//! - [`serve`]: the accept loop: header and idle timeouts, a cap on connections, shutdown
//!   with a grace period.
//! - [`state`]: what every handler shares: the services, auth, compressed answers.
//! - [`routes`]: one module per resource; handlers extract, call a service, and map the
//!   result to HTTP. (Only `/metrics` reads the pool's and the hold store's own gauges.)
//! - [`tokens`]: the admin token and user JWTs, verified and minted.
//! - [`auth`]: the extractors that tell who a request comes from, by its token or key.
//! - [`access`]: which right each staff route needs, in one table.
//! - [`client`]: the client's address, behind trusted proxies as `X-Forwarded-For` says.
//! - [`anonymous`]: who an anonymous session is: one of a few buyers per client address.
//! - [`error`]: [`error::ApiError`], rendered as problem+json with docs/api.md's stable codes,
//!   and the mapping of every service error to it.
//! - [`extract`]: a JSON extractor whose rejections are problem documents.
//! - [`unread`]: a body an answer left unread (a 413, a 401) is read out before the
//!   answer goes, so the client reads the answer rather than a reset connection.
//! - [`encoded`]: seat maps and layouts compressed once per `Accept-Encoding`.
//! - [`sse`] and [`gzip`]: the seat stream's events, a shared snapshot's framed and
//!   compressed once for every stream that sends it.
//! - [`metrics`]: Prometheus request counts and latencies.
//! - [`relay`]: the outbox relay, delivering committed changes to webhooks. It leases the
//!   outbox's rows from the store itself: delivering them is HTTP, which the service
//!   layer has none of.
//! - [`demo`]: the demo venue and event of `boxoffice serve --demo`.

pub mod access;
pub mod anonymous;
pub mod app;
pub mod auth;
pub mod client;
pub mod config;
pub mod demo;
pub mod encoded;
pub mod error;
pub mod extract;
pub mod gzip;
pub mod metrics;
pub mod middleware;
pub mod relay;
pub mod router;
pub mod routes;
pub mod serve;
pub mod sse;
pub mod state;
pub mod tokens;
pub mod unread;
pub mod workers;

pub use app::Application;
pub use config::Settings;
