//! Configuration: every setting is an environment variable and a flag of `boxoffice serve`.

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use boxoffice_store::db::DbConfig;
use boxoffice_store::redis_link::RedisConfig;
use rand::distributions::{Alphanumeric, DistString};

/// Which hold store keeps live holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum HoldStoreKind {
    /// Rows in Postgres (seed 000): only Postgres is needed.
    Postgres,
    /// Keys with a TTL in Redis (seed 003).
    Redis,
}

/// A secret that never shows up in logs or `Debug` output.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// A random 32-character secret.
    pub fn random() -> Self {
        Self(Alphanumeric.sample_string(&mut rand::thread_rng(), 32))
    }

    /// The secret itself; call only where it is used.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

/// `boxoffice serve` flags; each falls back to its environment variable, then its default.
#[derive(Clone, Debug, clap::Args)]
pub struct ServeArgs {
    /// Postgres URL; the database is created and migrated at start if missing.
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/boxoffice"
    )]
    pub database_url: String,
    /// Redis URL, used only when something needs Redis. With `--redis-cluster`, one or
    /// more cluster nodes separated by commas.
    #[arg(long, env = "REDIS_URL", default_value = "redis://127.0.0.1:6379")]
    pub redis_url: String,
    /// Whether `REDIS_URL` names Redis Cluster nodes rather than one server.
    #[arg(long, env = "BOXOFFICE_REDIS_CLUSTER", default_value_t = false, action = clap::ArgAction::Set)]
    pub redis_cluster: bool,
    /// Address to listen on (port 0 picks a free port; the chosen address is printed).
    #[arg(long, env = "BOXOFFICE_BIND", default_value = "127.0.0.1:3000")]
    pub bind: SocketAddr,
    /// Where live holds are kept.
    #[arg(
        long,
        env = "BOXOFFICE_HOLD_STORE",
        value_enum,
        default_value = "postgres"
    )]
    pub hold_store: HoldStoreKind,
    /// Bearer token for admin calls; random and printed at start when unset.
    #[arg(long, env = "BOXOFFICE_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,
    /// HS256 secret for user tokens; random per process (with a warning) when unset.
    #[arg(long, env = "BOXOFFICE_JWT_SECRET", hide_env_values = true)]
    pub jwt_secret: Option<String>,
    /// Whether `POST /v1/sessions` mints anonymous user tokens.
    #[arg(long, env = "BOXOFFICE_ANONYMOUS_SESSIONS", default_value_t = true, action = clap::ArgAction::Set)]
    pub anonymous_sessions: bool,
    /// Most Postgres connections this server opens.
    #[arg(long, env = "BOXOFFICE_DB_POOL_SIZE", default_value_t = 16)]
    pub db_pool_size: u32,
    /// Milliseconds a request waits for a free Postgres connection before answering 503.
    #[arg(long, env = "BOXOFFICE_DB_ACQUIRE_TIMEOUT_MS", default_value_t = 2000)]
    pub db_acquire_timeout_ms: u64,
    /// Postgres `statement_timeout` in milliseconds.
    #[arg(
        long,
        env = "BOXOFFICE_DB_STATEMENT_TIMEOUT_MS",
        default_value_t = 10_000
    )]
    pub db_statement_timeout_ms: u64,
    /// Postgres `lock_timeout` in milliseconds.
    #[arg(long, env = "BOXOFFICE_DB_LOCK_TIMEOUT_MS", default_value_t = 2000)]
    pub db_lock_timeout_ms: u64,
    /// Milliseconds after which a request is abandoned with 503.
    #[arg(long, env = "BOXOFFICE_REQUEST_TIMEOUT_MS", default_value_t = 30_000)]
    pub request_timeout_ms: u64,
    /// Largest request body accepted, in bytes (larger answers 413).
    #[arg(long, env = "BOXOFFICE_MAX_BODY_BYTES", default_value_t = 16 * 1024 * 1024)]
    pub max_body_bytes: usize,
    /// Turn on the sale-day gate: a Redis counter per general-admission area that refuses
    /// bookings once the area is sold out, before they reach Postgres.
    #[arg(long, env = "BOXOFFICE_GA_GATE", default_value_t = false, action = clap::ArgAction::Set)]
    pub ga_gate: bool,
    /// Webhook URLs the outbox relay delivers to (comma-separated); no relay runs when empty.
    #[arg(
        long = "webhook-url",
        env = "BOXOFFICE_WEBHOOK_URLS",
        value_delimiter = ','
    )]
    pub webhook_urls: Vec<String>,
    /// HMAC-SHA256 key that signs webhook deliveries; needed when webhook URLs are set.
    #[arg(long, env = "BOXOFFICE_WEBHOOK_SECRET", hide_env_values = true)]
    pub webhook_secret: Option<String>,
    /// Create (once) a demo venue and event, and print where to find them.
    #[arg(long)]
    pub demo: bool,
}

/// Everything the server needs to start, with secrets resolved.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Postgres connection and timeouts.
    pub database: DbConfig,
    /// Where Redis is (a server or a cluster).
    pub redis: RedisConfig,
    /// Listen address.
    pub bind: SocketAddr,
    /// Hold store.
    pub hold_store: HoldStoreKind,
    /// Admin bearer token.
    pub admin_token: Secret,
    /// HS256 secret for user tokens.
    pub jwt_secret: Secret,
    /// Whether anonymous sessions are minted.
    pub anonymous_sessions: bool,
    /// Per-request time limit.
    pub request_timeout: Duration,
    /// Request body size limit.
    pub max_body_bytes: usize,
    /// The outbox relay to run inside the server, if webhooks are configured.
    pub relay: Option<crate::relay::RelayConfig>,
    /// Whether the sale-day gate (Redis) is on.
    pub ga_gate: bool,
}

impl Settings {
    /// Settings with every default, for the given database.
    pub fn new(database_url: impl Into<String>) -> Self {
        Self {
            database: DbConfig::new(database_url),
            redis: RedisConfig {
                url: "redis://127.0.0.1:6379".into(),
                cluster: false,
            },
            bind: SocketAddr::from(([127, 0, 0, 1], 3000)),
            hold_store: HoldStoreKind::Postgres,
            admin_token: Secret::random(),
            jwt_secret: Secret::random(),
            anonymous_sessions: true,
            request_timeout: Duration::from_secs(30),
            max_body_bytes: 16 * 1024 * 1024,
            relay: None,
            ga_gate: false,
        }
    }
}

impl ServeArgs {
    /// Resolves the flags into settings; generated secrets are flagged so the caller can
    /// print or warn about them.
    pub fn settings(&self) -> anyhow::Result<(Settings, GeneratedSecrets)> {
        let generated = GeneratedSecrets {
            admin_token: self.admin_token.is_none(),
            jwt_secret: self.jwt_secret.is_none(),
        };
        let settings = Settings {
            database: DbConfig {
                url: self.database_url.clone(),
                pool_size: self.db_pool_size,
                acquire_timeout: Duration::from_millis(self.db_acquire_timeout_ms),
                statement_timeout: Duration::from_millis(self.db_statement_timeout_ms),
                lock_timeout: Duration::from_millis(self.db_lock_timeout_ms),
            },
            redis: RedisConfig {
                url: self.redis_url.clone(),
                cluster: self.redis_cluster,
            },
            bind: self.bind,
            hold_store: self.hold_store,
            admin_token: self
                .admin_token
                .clone()
                .map_or_else(Secret::random, Secret::new),
            jwt_secret: self
                .jwt_secret
                .clone()
                .map_or_else(Secret::random, Secret::new),
            anonymous_sessions: self.anonymous_sessions,
            request_timeout: Duration::from_millis(self.request_timeout_ms),
            max_body_bytes: self.max_body_bytes,
            relay: relay_config(&self.webhook_urls, self.webhook_secret.as_deref())?,
            ga_gate: self.ga_gate,
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

/// The relay's configuration from webhook flags: `None` without URLs; an error for URLs
/// without a secret to sign with.
pub fn relay_config(
    urls: &[String],
    secret: Option<&str>,
) -> anyhow::Result<Option<crate::relay::RelayConfig>> {
    let urls: Vec<String> = urls
        .iter()
        .map(|u| u.trim().to_owned())
        .filter(|u| !u.is_empty())
        .collect();
    if urls.is_empty() {
        return Ok(None);
    }
    let secret = secret.filter(|s| !s.is_empty()).ok_or_else(|| {
        anyhow::anyhow!("BOXOFFICE_WEBHOOK_SECRET is needed to sign webhook deliveries")
    })?;
    Ok(Some(crate::relay::RelayConfig::new(
        urls,
        Secret::new(secret),
    )))
}
