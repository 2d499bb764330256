//! What the benchmarks share: a release server on a scratch database, dropped at the end.
// Each benchmark uses a different part of this module.
#![allow(dead_code)]

use std::time::Duration;

/// The allocator the `boxoffice` binary uses, so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use boxoffice_server::config::{HoldStoreKind, Secret};
use boxoffice_server::{Application, Settings};
use sqlx::PgPool;

/// A running server on its own database.
pub struct Bench {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// The server's pool, for arranging data directly.
    pub pool: PgPool,
    /// The database URL, to drop it afterwards.
    pub url: String,
    /// The JWT secret, to mint user tokens.
    pub jwt_secret: Secret,
}

/// Starts a server on a fresh database on `BOXOFFICE_TEST_DATABASE_URL`'s server (default
/// `postgres://postgres@127.0.0.1:5432`), holding seats in `hold_store` (Redis at
/// `REDIS_URL`, default `redis://127.0.0.1:6379`); the admin token is `bench`.
pub async fn start(pool_size: u32, hold_store: HoldStoreKind) -> anyhow::Result<Bench> {
    let server = std::env::var("BOXOFFICE_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into());
    let url = format!("{server}/boxoffice_bench_{}", uuid::Uuid::new_v4().simple());
    let mut settings = Settings::new(&url);
    settings.bind = "127.0.0.1:0".parse()?;
    settings.admin_token = Secret::new("bench");
    settings.database.pool_size = pool_size;
    settings.database.acquire_timeout = Duration::from_secs(30);
    settings.hold_store = hold_store;
    // The hold-rate limiter runs, so its cost is in the figures, but never refuses: the
    // bench's few users make thousands of holds a second. `BENCH_HOLDS_PER_MINUTE=0` turns
    // it off, to see what it costs.
    settings.holds_per_minute = std::env::var("BENCH_HOLDS_PER_MINUTE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(u32::MAX);
    if let Ok(url) = std::env::var("REDIS_URL") {
        settings.redis.url = url;
    }
    let jwt_secret = settings.jwt_secret.clone();
    let app = Application::build(&settings).await?;
    let base = format!("http://{}", app.local_addr());
    let pool = app.state().pool.clone();
    tokio::spawn(app.run_until(std::future::pending()));
    Ok(Bench {
        base,
        pool,
        url,
        jwt_secret,
    })
}

impl Bench {
    /// Drops the scratch database.
    pub async fn finish(self) -> anyhow::Result<()> {
        self.pool.close().await;
        boxoffice_store::db::drop_database(&self.url).await?;
        Ok(())
    }
}

/// Milliseconds with one decimal.
pub fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// The `p`-quantile of sorted durations.
pub fn quantile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}
