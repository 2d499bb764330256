//! The Boxoffice HTTP server: the API of API.md over the service layer
//! ([`boxoffice_service`]), which knows no HTTP.
//!
//! # Layout
//!
//! - [`config`]: settings from flags and environment variables, secrets redacted.
//! - [`app`]: the router (routes, OpenAPI, body limit, request timeout, metrics, tracing)
//!   and [`app::Application`], which tests and `boxoffice serve` both run.
//! - [`serve`]: the accept loop: header and idle timeouts, a cap on connections, shutdown
//!   with a grace period.
//! - [`state`]: what every handler shares: the services, auth, compressed answers.
//! - [`routes`]: one module per resource; handlers extract, call a service (or, for plain
//!   reads and admin writes, the store), and map the result to HTTP.
//! - [`auth`]: the admin token, user JWTs and the extractors that check them.
//! - [`error`]: [`error::ApiError`], rendered as problem+json with API.md's stable codes,
//!   and the mapping of every service error to it.
//! - [`extract`]: a JSON extractor whose rejections are problem documents.
//! - [`encoded`]: seat maps and layouts compressed once per `Accept-Encoding`.
//! - [`metrics`]: Prometheus request counts and latencies.
//! - [`relay`]: the outbox relay, delivering committed changes to webhooks.
//! - [`demo`]: the demo venue and event of `boxoffice serve --demo`.

pub mod app;
pub mod auth;
pub mod config;
pub mod demo;
pub mod encoded;
pub mod error;
pub mod extract;
pub mod metrics;
pub mod relay;
pub mod routes;
pub mod serve;
pub mod state;

pub use app::Application;
pub use config::Settings;
