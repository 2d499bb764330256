//! Rate limits kept in Redis, so that every server instance counts against one limit
//! (`scripts/rate_limit.lua`, the generic cell rate algorithm).

use std::time::Duration;

use redis::Script;

use crate::redis::link::{redis_error, RedisConfig, RedisLink};
use crate::StoreError;

/// Per-minute limits over one Redis connection (made on first use, re-made by itself).
pub struct RedisRateLimit {
    redis: RedisLink,
    script: Script,
}

impl std::fmt::Debug for RedisRateLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RedisRateLimit")
    }
}

impl RedisRateLimit {
    /// Limits on the Redis `config` names; nothing is connected yet.
    pub fn new(config: &RedisConfig) -> Result<Self, StoreError> {
        Ok(Self {
            redis: RedisLink::new(config)?,
            script: crate::redis::holds::with_prelude(include_str!("../../scripts/rate_limit.lua")),
        })
    }

    /// Counts one request of `client` against the limit `name` of `per_minute` requests
    /// (all of which may come at once): `None` if it is allowed, else how long until the
    /// next one would be.
    pub async fn check(
        &self,
        name: &str,
        client: &str,
        per_minute: u32,
    ) -> Result<Option<Duration>, StoreError> {
        let mut conn = self.redis.connection().await?;
        let interval_ms = 60_000.0 / f64::from(per_minute.max(1));
        let wait_ms: u64 = self
            .script
            .key(format!("ratelimit:{name}:{client}"))
            .arg(interval_ms)
            .arg(per_minute)
            .invoke_async(&mut conn)
            .await
            .map_err(redis_error)?;
        Ok((wait_ms > 0).then(|| Duration::from_millis(wait_ms)))
    }
}
