//! Configuration: every setting is an environment variable and a flag of `boxoffice serve`,
//! in five groups (server, stores, limits, live updates, operations); [`table`] reads them
//! back as one table for the docs and `doctor`. (A long file: each setting's flag, help and
//! default beside the typed group it resolves into, so one cannot change without the other.)

use std::net::SocketAddr;
use std::time::Duration;

use boxoffice_store::pg::db::DbConfig;
use boxoffice_store::pg::sweep::Retention;
use boxoffice_store::redis::link::RedisConfig;

pub mod table;

/// The defaults of the settings whose values no other part of the system owns (the stores'
/// own settings take theirs from `DbConfig`, `RedisConfig` and `Retention`, the limits'
/// from the service). The table below names each default once; `boxoffice serve`'s flags,
/// [`Settings::new`], the docs and `doctor` read it from there.
pub mod defaults {
    /// `DATABASE_URL`, also of `boxoffice migrate` and `boxoffice relay`.
    pub const DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/boxoffice";
    /// `REDIS_URL`.
    pub const REDIS_URL: &str = "redis://127.0.0.1:6379";
    /// `BOXOFFICE_BIND`.
    pub const BIND: &str = "127.0.0.1:3000";
    /// `BOXOFFICE_REPLICA_MAX_LAG_MS`.
    pub const REPLICA_MAX_LAG_MS: u64 = 1_000;
    /// `BOXOFFICE_REQUEST_TIMEOUT_MS`.
    pub const REQUEST_TIMEOUT_MS: u64 = 30_000;
    /// `BOXOFFICE_MAX_BODY_BYTES`: a hold, a checkout, a booking or a setting is a few
    /// hundred bytes; a basket of the most seats anyone may hold is a few KB.
    pub const MAX_BODY_BYTES: usize = 64 * 1024;
    /// `BOXOFFICE_MAX_IMPORT_BYTES`: a pretix plan of 200,000 seats (some 25 MB) with room
    /// to spare.
    pub const MAX_IMPORT_BYTES: usize = 64 * 1024 * 1024;
    /// `BOXOFFICE_HEADER_TIMEOUT_MS`.
    pub const HEADER_TIMEOUT_MS: u64 = 10_000;
    /// `BOXOFFICE_IDLE_TIMEOUT_MS`.
    pub const IDLE_TIMEOUT_MS: u64 = 60_000;
    /// `BOXOFFICE_MAX_CONNECTIONS`.
    pub const MAX_CONNECTIONS: usize = 10_000;
    /// `BOXOFFICE_SHUTDOWN_GRACE_MS`.
    pub const SHUTDOWN_GRACE_MS: u64 = 10_000;
    /// `BOXOFFICE_SWEEP_INTERVAL_SECS`.
    pub const SWEEP_INTERVAL_SECS: u64 = 300;
    /// `BOXOFFICE_EXPIRY_INTERVAL_SECS`: `order.expired` follows a deadline within this.
    pub const EXPIRY_INTERVAL_SECS: u64 = 5;
    /// `BOXOFFICE_SESSIONS_PER_ADDRESS`: the buyers one client address may be with anonymous
    /// sessions, so at most this many times an event's `max_seats_per_user` held from it.
    pub const SESSIONS_PER_ADDRESS: u32 = 4;
    /// `BOXOFFICE_STREAMS_PER_ADDRESS`: a household or an office behind one address has a
    /// few pages open, not dozens.
    pub const STREAMS_PER_ADDRESS: u32 = 32;
    /// `BOXOFFICE_OVERLOAD_TARGET_MS`: the adaptive limit is on, aiming to answer holds,
    /// bookings and checkouts within 100 ms. Without it, a flash sale of 5,000 buyers at
    /// once queues them behind the pool, and granted holds take seconds (BENCHMARKS.md,
    /// "Overload"); 0 turns it off.
    pub const OVERLOAD_TARGET_MS: u64 = 100;
}

/// Which hold store keeps live holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum HoldStoreKind {
    /// Rows in Postgres (docs/design/holds-in-postgres.md): only Postgres is needed.
    Postgres,
    /// Keys with a TTL in Redis (docs/design/holds-in-redis.md).
    Redis,
}

pub use boxoffice_service::Secret;

/// `boxoffice serve` flags, in the groups `--help`, docs/configuration.md and `doctor` show
/// them in; each falls back to its environment variable, then its default.
#[derive(Clone, Debug, clap::Args)]
pub struct ServeArgs {
    /// Where it listens, who may call it.
    #[command(flatten)]
    pub server: ServerArgs,
    /// Postgres, Redis, the hold store.
    #[command(flatten)]
    pub stores: StoreArgs,
    /// What a request, a client, a buyer may ask for.
    #[command(flatten)]
    pub limits: LimitArgs,
    /// The live-update streams.
    #[command(flatten)]
    pub live: LiveArgs,
    /// Stopping, housekeeping, webhooks.
    #[command(flatten)]
    pub operations: OperationArgs,
    /// Create (once) a demo venue and event, and print where to find them; also turns on
    /// anonymous sessions and the test payment page, and keeps the secrets it makes up in
    /// its database so its tokens outlive a restart.
    #[arg(long, help_heading = "Server")]
    pub demo: bool,
}

/// Where the server listens, who may call it, and how buyers are known.
#[derive(Clone, Debug, clap::Args)]
#[command(next_help_heading = "Server")]
pub struct ServerArgs {
    /// Address to listen on (port 0 picks a free port; the chosen address is printed).
    #[arg(long, env = "BOXOFFICE_BIND", default_value = defaults::BIND)]
    pub bind: SocketAddr,
    /// Bearer token for admin calls; random and printed at start when unset (with `--demo`,
    /// the one its first start made).
    #[arg(long, env = "BOXOFFICE_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,
    /// HS256 secret for buyers' tokens; random per process (with a warning) when unset (with
    /// `--demo`, the one its first start made, kept in the database).
    #[arg(long, env = "BOXOFFICE_JWT_SECRET", hide_env_values = true)]
    pub jwt_secret: Option<String>,
    /// Whether `POST /v1/sessions` mints anonymous buyers' tokens; unset, only with
    /// `--demo`. One address is at most `--sessions-per-address` buyers with them (see
    /// "Limits" in docs/api.md).
    #[arg(long, env = "BOXOFFICE_ANONYMOUS_SESSIONS", action = clap::ArgAction::Set)]
    pub anonymous_sessions: Option<bool>,
    /// Origins (`https://shop.example`, comma-separated; checked at start) whose pages may
    /// call the API and the event stream from a browser: CORS answers and preflights for
    /// them (methods GET, POST, PUT, PATCH, DELETE; headers `Authorization`,
    /// `Content-Type`, `Boxoffice-Pass`, `Idempotency-Key`, `Last-Event-ID`;
    /// `Retry-After`, `Location`, `ETag` readable), no CORS header for any other origin.
    #[arg(long, env = "BOXOFFICE_ALLOWED_ORIGINS", value_delimiter = ',')]
    pub allowed_origins: Vec<String>,
    /// Proxies (addresses or CIDR blocks, comma-separated) whose `X-Forwarded-For` names
    /// the client; from anyone else the header is ignored.
    #[arg(long, env = "BOXOFFICE_TRUSTED_PROXIES", value_delimiter = ',')]
    pub trusted_proxies: Vec<String>,
}

/// Postgres, its replica, Redis, and which of them keeps live holds.
#[derive(Clone, Debug, clap::Args)]
#[command(next_help_heading = "Stores")]
pub struct StoreArgs {
    /// Postgres URL; the database is created and migrated at start if missing.
    #[arg(long, env = "DATABASE_URL", default_value = defaults::DATABASE_URL)]
    pub database_url: String,
    /// Most Postgres connections this server opens.
    #[arg(long, env = "BOXOFFICE_DB_POOL_SIZE", default_value_t = DbConfig::DEFAULT_POOL_SIZE)]
    pub db_pool_size: u32,
    /// Milliseconds a request waits for a free Postgres connection before answering 503.
    #[arg(long, env = "BOXOFFICE_DB_ACQUIRE_TIMEOUT_MS", default_value_t = DbConfig::DEFAULT_ACQUIRE_TIMEOUT_MS)]
    pub db_acquire_timeout_ms: u64,
    /// Postgres `statement_timeout` in milliseconds (bulk admin writes get 60 s).
    #[arg(long, env = "BOXOFFICE_DB_STATEMENT_TIMEOUT_MS", default_value_t = DbConfig::DEFAULT_STATEMENT_TIMEOUT_MS)]
    pub db_statement_timeout_ms: u64,
    /// Postgres `lock_timeout` in milliseconds.
    #[arg(long, env = "BOXOFFICE_DB_LOCK_TIMEOUT_MS", default_value_t = DbConfig::DEFAULT_LOCK_TIMEOUT_MS)]
    pub db_lock_timeout_ms: u64,
    /// A streaming replica the seat map, availability and the stream's snapshots read from
    /// while it answers and lags less than `--replica-max-lag-ms`; everything that decides
    /// a sale always reads the primary (`boxoffice_replica_in_use` in `/metrics`).
    #[arg(long, env = "BOXOFFICE_DATABASE_REPLICA_URL")]
    pub database_replica_url: Option<String>,
    /// Past this lag (milliseconds), or while it is down, the replica's reads go to the
    /// primary.
    #[arg(long, env = "BOXOFFICE_REPLICA_MAX_LAG_MS", default_value_t = defaults::REPLICA_MAX_LAG_MS)]
    pub replica_max_lag_ms: u64,
    /// Where live holds are kept: `postgres` (rows, only Postgres is needed) or `redis`
    /// (keys with a TTL; "The redis hold store" in docs/design.md).
    #[arg(
        long,
        env = "BOXOFFICE_HOLD_STORE",
        value_enum,
        default_value = "postgres"
    )]
    pub hold_store: HoldStoreKind,
    /// Redis URL, used only when something needs Redis. With `--redis-cluster`, one or
    /// more cluster nodes separated by commas.
    #[arg(long, env = "REDIS_URL", default_value = defaults::REDIS_URL)]
    pub redis_url: String,
    /// Whether `REDIS_URL` names Redis Cluster nodes rather than one server.
    #[arg(long, env = "BOXOFFICE_REDIS_CLUSTER", default_value_t = false, action = clap::ArgAction::Set)]
    pub redis_cluster: bool,
    /// Milliseconds any Redis command (or connecting) may take before Redis counts as
    /// unavailable (the waiting room's commands: at least two seconds); "Redis slow or
    /// frozen" in docs/design.md.
    #[arg(long, env = "BOXOFFICE_REDIS_TIMEOUT_MS", default_value_t = RedisConfig::DEFAULT_TIMEOUT_MS)]
    pub redis_timeout_ms: u64,
    /// Turn on the sale-day gate: a Redis counter per general-admission area that refuses
    /// bookings once the area is sold out, before they reach Postgres.
    #[arg(long, env = "BOXOFFICE_GA_GATE", default_value_t = false, action = clap::ArgAction::Set)]
    pub ga_gate: bool,
}

/// How much one request, one client, one buyer and the whole server may ask for.
#[derive(Clone, Debug, clap::Args)]
#[command(next_help_heading = "Limits")]
pub struct LimitArgs {
    /// Milliseconds after which a request is abandoned: 408 `request_timeout` if its body
    /// had not arrived in full, 503 if the server was too slow.
    #[arg(long, env = "BOXOFFICE_REQUEST_TIMEOUT_MS", default_value_t = defaults::REQUEST_TIMEOUT_MS)]
    pub request_timeout_ms: u64,
    /// Largest request body accepted, in bytes (larger answers 413), on every route but
    /// the catalog writes.
    #[arg(long, env = "BOXOFFICE_MAX_BODY_BYTES", default_value_t = defaults::MAX_BODY_BYTES)]
    pub max_body_bytes: usize,
    /// Largest body of a catalog write (creating and importing venues, creating events,
    /// changing allocations; admin only), in bytes; a 200,000-seat pretix plan is some
    /// 20–25 MB.
    #[arg(long, env = "BOXOFFICE_MAX_IMPORT_BYTES", default_value_t = defaults::MAX_IMPORT_BYTES)]
    pub max_import_bytes: usize,
    /// Milliseconds a client has to send a whole request head after its first byte (or
    /// after connecting); then it is disconnected. A connection's watchdog looks every
    /// quarter of the shorter of this and the idle timeout.
    #[arg(long, env = "BOXOFFICE_HEADER_TIMEOUT_MS", default_value_t = defaults::HEADER_TIMEOUT_MS)]
    pub header_timeout_ms: u64,
    /// Milliseconds a keep-alive connection may sit idle between requests.
    #[arg(long, env = "BOXOFFICE_IDLE_TIMEOUT_MS", default_value_t = defaults::IDLE_TIMEOUT_MS)]
    pub idle_timeout_ms: u64,
    /// Most connections open at once, kept under the open-file limit (which the server
    /// raises to its hard limit at start); past it the server stops accepting and keeps
    /// serving the ones it has.
    #[arg(long, env = "BOXOFFICE_MAX_CONNECTIONS", default_value_t = defaults::MAX_CONNECTIONS)]
    pub max_connections: usize,
    /// Holds one buyer may ask for a minute in one event (all at once, at most); a season
    /// hold counts in every event it covers; 0 turns the limit off.
    #[arg(long, env = "BOXOFFICE_HOLDS_PER_MINUTE", default_value_t = boxoffice_service::limits::DEFAULT_HOLDS_PER_MINUTE)]
    pub holds_per_minute: u32,
    /// Anonymous sessions one client address may create a minute (all at once, then
    /// evenly); 0 turns the limit off.
    #[arg(long, env = "BOXOFFICE_SESSIONS_PER_MINUTE", default_value_t = boxoffice_service::limits::DEFAULT_SESSIONS_PER_MINUTE)]
    pub sessions_per_minute: u32,
    /// Buyers one client address (an IPv6 one by its /64) may be with anonymous sessions:
    /// its sessions take turns among that many user ids, so it holds at most that many
    /// times an event's `max_seats_per_user`; 0 makes every session a buyer of its own.
    #[arg(long, env = "BOXOFFICE_SESSIONS_PER_ADDRESS", default_value_t = defaults::SESSIONS_PER_ADDRESS)]
    pub sessions_per_address: u32,
    /// Event streams one client address may have open at once (more answer 429
    /// `rate_limited`); 0 turns the cap off.
    #[arg(long, env = "BOXOFFICE_STREAMS_PER_ADDRESS", default_value_t = defaults::STREAMS_PER_ADDRESS)]
    pub streams_per_address: u32,
    /// Milliseconds within which holds, bookings and checkouts should be answered: the
    /// adaptive concurrency limits in front of their store calls grow while nine in ten
    /// are, shrink when they are not, and past them a hold is refused at once (503 with
    /// `Retry-After`) unless a place is due within 5 ms, which it then waits for, and a
    /// checkout waits up to 2 s for a place. 0 turns the limits off ("Limits" in
    /// docs/api.md).
    #[arg(long, env = "BOXOFFICE_OVERLOAD_TARGET_MS", default_value_t = defaults::OVERLOAD_TARGET_MS)]
    pub overload_target_ms: u64,
    /// Fewest holds (or checkouts) in flight the adaptive limits allow.
    #[arg(long, env = "BOXOFFICE_OVERLOAD_FLOOR", default_value_t = boxoffice_service::overload::OverloadSettings::DEFAULT_FLOOR)]
    pub overload_floor: usize,
}

/// The live-update streams and what an instance believes of them.
#[derive(Clone, Debug, clap::Args)]
#[command(next_help_heading = "Live updates")]
pub struct LiveArgs {
    /// Milliseconds between the comment lines a quiet live-update stream sends, so proxies
    /// in between keep it open; keep it under the shortest idle timeout on the way.
    #[arg(long, env = "BOXOFFICE_STREAM_HEARTBEAT_MS", default_value_t = boxoffice_service::live::DEFAULT_HEARTBEAT_MS)]
    pub stream_heartbeat_ms: u64,
    /// Milliseconds after the hold store said a seat is taken (refusing or holding it on
    /// this instance) during which this instance refuses the seat itself, while the change
    /// feed says it is still taken; also the longest a lost change can keep a free seat
    /// refused. 0 asks the store every time.
    #[arg(long, env = "BOXOFFICE_KNOWN_TAKEN_MS", default_value_t = boxoffice_service::live::DEFAULT_KNOWN_TAKEN_MS)]
    pub known_taken_ms: u64,
}

/// Stopping, housekeeping and webhooks.
#[derive(Clone, Debug, clap::Args)]
#[command(next_help_heading = "Operations")]
pub struct OperationArgs {
    /// Milliseconds SIGTERM waits for requests in flight (the server has stopped
    /// accepting) before the process exits whatever is still open.
    #[arg(long, env = "BOXOFFICE_SHUTDOWN_GRACE_MS", default_value_t = defaults::SHUTDOWN_GRACE_MS)]
    pub shutdown_grace_ms: u64,
    /// Seconds between records of unpaid orders past their `pay_by` as `expired` (and
    /// `order.expired`); their seats are back on sale at the deadline itself, or, while
    /// anyone waits in the event's waiting list, offered to it within one interval; also
    /// how often lapsed waiting-list offers pass on.
    #[arg(long, env = "BOXOFFICE_EXPIRY_INTERVAL_SECS", default_value_t = defaults::EXPIRY_INTERVAL_SECS)]
    pub expiry_interval_secs: u64,
    /// Seconds between sweeps of what is past its retention ("Housekeeping" in docs/configuration.md).
    #[arg(long, env = "BOXOFFICE_SWEEP_INTERVAL_SECS", default_value_t = defaults::SWEEP_INTERVAL_SECS)]
    pub sweep_interval_secs: u64,
    /// Hours an `Idempotency-Key`'s answer is remembered; older ones are swept.
    #[arg(long, env = "BOXOFFICE_IDEMPOTENCY_RETENTION_HOURS", default_value_t = Retention::DEFAULT_IDEMPOTENCY_HOURS)]
    pub idempotency_retention_hours: u64,
    /// Hours a delivered outbox row is kept; older ones are swept.
    #[arg(long, env = "BOXOFFICE_OUTBOX_RETENTION_HOURS", default_value_t = Retention::DEFAULT_OUTBOX_HOURS)]
    pub outbox_retention_hours: u64,
    /// Webhook URLs the `default` organization's outbox rows are delivered to
    /// (comma-separated), besides its own webhook; every organization's webhook is served
    /// whether or not they are set.
    #[arg(
        long = "webhook-url",
        env = "BOXOFFICE_WEBHOOK_URLS",
        value_delimiter = ','
    )]
    pub webhook_urls: Vec<String>,
    /// HMAC-SHA256 key that signs webhook deliveries (`Boxoffice-Signature`); needed when
    /// webhook URLs are set.
    #[arg(long, env = "BOXOFFICE_WEBHOOK_SECRET", hide_env_values = true)]
    pub webhook_secret: Option<String>,
}

/// Everything the server needs to start, with secrets resolved, in the groups of
/// [`ServeArgs`].
#[derive(Clone, Debug)]
pub struct Settings {
    /// Where the server listens, who may call it, how buyers are known.
    pub server: Server,
    /// Postgres, its replica, Redis, and where live holds are kept.
    pub stores: Stores,
    /// What one request, client or buyer, and the whole server, may ask for.
    pub limits: Limits,
    /// The live-update streams.
    pub live: Live,
    /// Housekeeping and webhooks.
    pub operations: Operations,
}

/// [`Settings::server`].
#[derive(Clone, Debug)]
pub struct Server {
    /// Listen address.
    pub bind: SocketAddr,
    /// Admin bearer token.
    pub admin_token: Secret,
    /// HS256 secret for user tokens.
    pub jwt_secret: Secret,
    /// Whether anonymous sessions are minted (off unless asked for or `--demo`).
    pub anonymous_sessions: bool,
    /// Whether the test payment page (`/pay/{order}`) is served: only with `--demo`.
    pub demo_payments: bool,
    /// Origins whose pages may call the API from a browser (CORS); none: no CORS headers.
    pub allowed_origins: Vec<axum::http::HeaderValue>,
    /// Proxies whose `X-Forwarded-For` is believed.
    pub trusted_proxies: Vec<ipnet::IpNet>,
}

/// [`Settings::stores`].
#[derive(Clone, Debug)]
pub struct Stores {
    /// Postgres connection and timeouts.
    pub database: DbConfig,
    /// A streaming replica to read seat maps from, and the lag past which it is not used.
    pub replica: Option<(DbConfig, Duration)>,
    /// Hold store.
    pub hold_store: HoldStoreKind,
    /// Where Redis is (a server or a cluster).
    pub redis: RedisConfig,
    /// Whether the sale-day gate (Redis) is on.
    pub ga_gate: bool,
}

/// [`Settings::limits`].
#[derive(Clone, Debug)]
pub struct Limits {
    /// Per-request time limit.
    pub request_timeout: Duration,
    /// Request body size limit, but for the catalog writes.
    pub max_body_bytes: usize,
    /// Body size limit of the catalog writes.
    pub max_import_bytes: usize,
    /// Header, idle and shutdown timeouts, and the cap on connections.
    pub connections: crate::serve::ConnectionLimits,
    /// Holds per user a minute (0: no limit).
    pub holds_per_minute: u32,
    /// Anonymous sessions per client address a minute (0: no limit).
    pub sessions_per_minute: u32,
    /// Buyers one client address may be with anonymous sessions (0: no limit).
    pub sessions_per_address: u32,
    /// Event streams open per client address (0: no cap).
    pub streams_per_address: u32,
    /// The adaptive concurrency limit in front of the store calls of holds, bookings and
    /// checkouts (none: every request is served, however many wait).
    pub overload: Option<boxoffice_service::overload::OverloadSettings>,
}

/// [`Settings::live`].
#[derive(Clone, Debug)]
pub struct Live {
    /// How often a quiet live-update stream sends a comment line.
    pub stream_heartbeat: Duration,
    /// How long the hold store's word that a seat is taken lets this instance refuse it
    /// itself (zero: never).
    pub known_taken: Duration,
}

/// [`Settings::operations`].
#[derive(Clone, Debug)]
pub struct Operations {
    /// How often unpaid orders past their deadline are recorded expired.
    pub expiry_interval: Duration,
    /// How often old idempotency answers and delivered outbox rows are swept.
    pub sweep_interval: Duration,
    /// How long they are kept.
    pub retention: Retention,
    /// The outbox relay the server runs: organizations' webhooks, and the `default`
    /// organization's URLs if configured.
    pub relay: crate::relay::RelayConfig,
}

impl Settings {
    /// Settings with every default (the table's, whatever the environment holds), for the
    /// given database, with random secrets.
    pub fn new(database_url: impl Into<String>) -> Self {
        let mut args = ServeArgs::defaults();
        args.stores.database_url = database_url.into();
        args.settings().expect("the defaults are valid settings").0
    }
}

impl ServeArgs {
    /// The flags with every default, read from no command line and no environment.
    pub fn defaults() -> Self {
        use clap::{Args, FromArgMatches};
        let matches = Self::augment_args(clap::Command::new("serve"))
            .mut_args(|arg| arg.env(None))
            .try_get_matches_from(["serve"])
            .expect("every setting has a default or is optional");
        Self::from_arg_matches(&matches).expect("the defaults parse")
    }

    /// Resolves the flags into settings; generated secrets are flagged so the caller can
    /// print or warn about them.
    pub fn settings(&self) -> anyhow::Result<(Settings, GeneratedSecrets)> {
        let (server, stores, limits, live, operations) = (
            &self.server,
            &self.stores,
            &self.limits,
            &self.live,
            &self.operations,
        );
        if server.jwt_secret.as_deref() == Some("") {
            anyhow::bail!(
                "BOXOFFICE_JWT_SECRET must not be empty: leave it unset for a random one"
            );
        }
        let generated = GeneratedSecrets {
            admin_token: server.admin_token.is_none(),
            jwt_secret: server.jwt_secret.is_none(),
        };
        let database = |url: &String| DbConfig {
            url: url.clone(),
            pool_size: stores.db_pool_size,
            acquire_timeout: Duration::from_millis(stores.db_acquire_timeout_ms),
            statement_timeout: Duration::from_millis(stores.db_statement_timeout_ms),
            lock_timeout: Duration::from_millis(stores.db_lock_timeout_ms),
        };
        let settings = Settings {
            server: Server {
                bind: server.bind,
                admin_token: server
                    .admin_token
                    .clone()
                    .map_or_else(Secret::random, Secret::new),
                jwt_secret: server
                    .jwt_secret
                    .clone()
                    .map_or_else(Secret::random, Secret::new),
                anonymous_sessions: server.anonymous_sessions.unwrap_or(self.demo),
                demo_payments: self.demo,
                allowed_origins: parse_origins(&server.allowed_origins)?,
                trusted_proxies: crate::client::parse_trusted_proxies(&server.trusted_proxies)?,
            },
            stores: Stores {
                database: database(&stores.database_url),
                replica: stores.database_replica_url.as_ref().map(|url| {
                    (
                        database(url),
                        Duration::from_millis(stores.replica_max_lag_ms),
                    )
                }),
                hold_store: stores.hold_store,
                redis: RedisConfig {
                    url: stores.redis_url.clone(),
                    cluster: stores.redis_cluster,
                    timeout: Duration::from_millis(stores.redis_timeout_ms),
                },
                ga_gate: stores.ga_gate,
            },
            limits: Limits {
                request_timeout: Duration::from_millis(limits.request_timeout_ms),
                max_body_bytes: limits.max_body_bytes,
                max_import_bytes: limits.max_import_bytes,
                connections: crate::serve::ConnectionLimits {
                    header_timeout: Duration::from_millis(limits.header_timeout_ms),
                    idle_timeout: Duration::from_millis(limits.idle_timeout_ms),
                    max_connections: limits.max_connections,
                    shutdown_grace: Duration::from_millis(operations.shutdown_grace_ms),
                },
                holds_per_minute: limits.holds_per_minute,
                sessions_per_minute: limits.sessions_per_minute,
                sessions_per_address: limits.sessions_per_address,
                streams_per_address: limits.streams_per_address,
                overload: (limits.overload_target_ms > 0).then(|| {
                    boxoffice_service::overload::OverloadSettings {
                        floor: limits.overload_floor,
                        ..boxoffice_service::overload::OverloadSettings::with_target(
                            Duration::from_millis(limits.overload_target_ms),
                        )
                    }
                }),
            },
            live: Live {
                stream_heartbeat: Duration::from_millis(live.stream_heartbeat_ms.max(1)),
                known_taken: Duration::from_millis(live.known_taken_ms),
            },
            operations: Operations {
                expiry_interval: Duration::from_secs(operations.expiry_interval_secs.max(1)),
                sweep_interval: Duration::from_secs(operations.sweep_interval_secs.max(1)),
                retention: Retention {
                    idempotency: Duration::from_secs(operations.idempotency_retention_hours * 3600),
                    delivered_outbox: Duration::from_secs(operations.outbox_retention_hours * 3600),
                },
                relay: relay_config(
                    &operations.webhook_urls,
                    operations.webhook_secret.as_deref(),
                )?,
            },
        };
        Ok((settings, generated))
    }
}

/// Which secrets were generated because they were not configured.
#[derive(Clone, Copy, Debug)]
pub struct GeneratedSecrets {
    /// The admin token is random.
    pub admin_token: bool,
    /// The JWT secret is random.
    pub jwt_secret: bool,
}

/// The relay's configuration from webhook flags: organizations' webhooks only without
/// URLs; an error for URLs without a secret to sign with.
pub fn relay_config(
    urls: &[String],
    secret: Option<&str>,
) -> anyhow::Result<crate::relay::RelayConfig> {
    let urls: Vec<String> = urls
        .iter()
        .map(|u| u.trim().to_owned())
        .filter(|u| !u.is_empty())
        .collect();
    if urls.is_empty() {
        return Ok(crate::relay::RelayConfig::webhooks_only());
    }
    let secret = secret.filter(|s| !s.is_empty()).ok_or_else(|| {
        anyhow::anyhow!("BOXOFFICE_WEBHOOK_SECRET is needed to sign webhook deliveries")
    })?;
    Ok(crate::relay::RelayConfig::new(urls, Secret::new(secret)))
}

/// Origins as `BOXOFFICE_ALLOWED_ORIGINS` gives them: each `http` or `https`, a host, and a
/// port if not the scheme's, with nothing after (a browser's `Origin` header is exactly
/// this); blanks are skipped.
pub fn parse_origins(origins: &[String]) -> anyhow::Result<Vec<axum::http::HeaderValue>> {
    origins
        .iter()
        .map(|o| o.trim())
        .filter(|o| !o.is_empty())
        .map(|origin| {
            let uri: axum::http::Uri = origin
                .parse()
                .map_err(|e| anyhow::anyhow!("BOXOFFICE_ALLOWED_ORIGINS: {origin:?}: {e}"))?;
            let bare = matches!(uri.scheme_str(), Some("http" | "https"))
                && uri.host().is_some()
                && uri.path_and_query().is_none_or(|p| p.as_str() == "/")
                && !origin.ends_with('/');
            anyhow::ensure!(
                bare,
                "BOXOFFICE_ALLOWED_ORIGINS: {origin:?} is not an origin such as https://shop.example"
            );
            Ok(axum::http::HeaderValue::from_str(origin)?)
        })
        .collect()
}
