//! Abuse limits: anonymous sessions per client address, holds per user.
//!
//! Each limit is a rate with a burst of the same size (20 a minute: 20 at once, then one
//! every 3 s), by the generic cell rate algorithm. With Redis configured the counts live
//! there, so every server instance counts against one limit; without it (or while Redis is
//! unreachable) each instance counts on its own with `governor`, so a limit never fails
//! open entirely and never fails a request because Redis is away.

use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use boxoffice_store::redis::rate_limit::RedisRateLimit;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};

/// One named limit of so many requests a minute per key.
pub struct Limit {
    name: &'static str,
    per_minute: Option<NonZeroU32>,
    local: Option<DefaultKeyedRateLimiter<String>>,
    /// Requests refused so far (`<name>_rate_limited_total` in `/metrics`).
    refused: AtomicU64,
}

impl Limit {
    /// A limit of `per_minute` requests a minute per key; 0 turns it off.
    pub fn new(name: &'static str, per_minute: u32) -> Self {
        let per_minute = NonZeroU32::new(per_minute);
        Self {
            name,
            per_minute,
            local: per_minute.map(|n| DefaultKeyedRateLimiter::keyed(Quota::per_minute(n))),
            refused: AtomicU64::new(0),
        }
    }

    /// Requests a minute (0: no limit).
    pub fn per_minute(&self) -> u32 {
        self.per_minute.map_or(0, NonZeroU32::get)
    }

    /// Counts a request refused by this limit elsewhere (a hold store that applies it).
    pub fn refused(&self) {
        self.refused.fetch_add(1, Ordering::Relaxed);
    }

    fn check_locally(&self, key: &str) -> Result<(), Duration> {
        let Some(local) = &self.local else {
            return Ok(());
        };
        local
            .check_key(&key.to_owned())
            .map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
    }
}

/// Every limit, and where their counts are kept.
pub struct RateLimits {
    /// `POST /v1/sessions` per client address.
    pub sessions: Limit,
    /// `POST /v1/events/{id}/holds` per user and event.
    pub holds: Limit,
    redis: Option<RedisRateLimit>,
}

/// Anonymous sessions one client address may create a minute, unless told otherwise.
pub const DEFAULT_SESSIONS_PER_MINUTE: u32 = 20;
/// Holds one user may ask for a minute, unless told otherwise: well above what a buyer
/// clicking seats asks for, far below what a script churning holds needs.
pub const DEFAULT_HOLDS_PER_MINUTE: u32 = 30;

impl RateLimits {
    /// The limits, counted in Redis when `redis` is given.
    pub fn new(
        sessions_per_minute: u32,
        holds_per_minute: u32,
        redis: Option<RedisRateLimit>,
    ) -> Self {
        Self {
            sessions: Limit::new("sessions", sessions_per_minute),
            holds: Limit::new("holds", holds_per_minute),
            redis,
        }
    }

    /// Counts one request of `key` against `limit`; once the key is over it, how long to
    /// wait before the next request is allowed.
    pub async fn check(&self, limit: &Limit, key: &str) -> Result<(), Duration> {
        let Some(per_minute) = limit.per_minute else {
            return Ok(());
        };
        let mut counted = None;
        if let Some(redis) = &self.redis {
            match redis.check(limit.name, key, per_minute.get()).await {
                Ok(wait) => counted = Some(wait),
                Err(error) => {
                    tracing::debug!(%error, "rate limits counted locally while redis is away");
                }
            }
        }
        let wait = match counted {
            Some(wait) => wait,
            None => limit.check_locally(key).err(),
        };
        match wait {
            None => Ok(()),
            Some(wait) => {
                limit.refused();
                Err(wait)
            }
        }
    }

    /// Counts one request of `key` against `limit` on this instance only (whatever else
    /// counts it elsewhere); once the key is over it, how long to wait.
    pub fn check_here(&self, limit: &Limit, key: &str) -> Result<(), Duration> {
        limit.check_locally(key).inspect_err(|_| limit.refused())
    }

    /// Requests each limit refused, by Prometheus name, for `/metrics`.
    pub fn counters(&self) -> [(&'static str, u64); 2] {
        [
            (
                "sessions_rate_limited_total",
                self.sessions.refused.load(Ordering::Relaxed),
            ),
            (
                "holds_rate_limited_total",
                self.holds.refused.load(Ordering::Relaxed),
            ),
        ]
    }

    /// Forgets local counts of keys that are back to a full burst, so the limiter's memory
    /// follows the clients seen lately, not every client ever.
    pub fn forget_idle(&self) {
        for limit in [&self.sessions, &self.holds] {
            if let Some(local) = &limit.local {
                local.retain_recent();
                local.shrink_to_fit();
            }
        }
    }
}

/// Event streams open per client address, up to a cap: a client that opens streams and
/// never reads them holds at most that many.
pub struct StreamSlots {
    most: u32,
    open: Arc<Mutex<HashMap<IpAddr, u32>>>,
}

/// One open stream's place under [`StreamSlots`]; dropping it gives the place back.
pub struct StreamSlot {
    open: Arc<Mutex<HashMap<IpAddr, u32>>>,
    client: IpAddr,
}

impl StreamSlots {
    /// At most `most` streams per address (0: no cap).
    pub fn new(most: u32) -> Self {
        Self {
            most,
            open: Arc::default(),
        }
    }

    /// A place for one more stream from `client`, unless it has `most` open.
    pub fn take(&self, client: IpAddr) -> Option<StreamSlot> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let count = open.entry(client).or_default();
        if self.most > 0 && *count >= self.most {
            return None;
        }
        *count += 1;
        Some(StreamSlot {
            open: self.open.clone(),
            client,
        })
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = open.get_mut(&self.client) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.client);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> RateLimits {
        RateLimits::new(3, 3, None)
    }

    #[tokio::test]
    async fn a_local_limit_allows_its_burst_then_says_how_long_to_wait() {
        let l = limits();
        for _ in 0..3 {
            l.check(&l.sessions, "a").await.unwrap();
        }
        match l.check(&l.sessions, "a").await {
            Err(wait) => {
                assert!(
                    wait > Duration::ZERO && wait <= Duration::from_secs(20),
                    "{wait:?}"
                )
            }
            other => panic!("expected 429, got {other:?}"),
        }
        l.check(&l.sessions, "b")
            .await
            .expect("another key has its own budget");
        l.check(&l.holds, "a")
            .await
            .expect("another limit has its own budget");
    }
}
