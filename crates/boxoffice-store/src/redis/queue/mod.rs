//! The waiting room's line, in Redis (`scripts/queue.lua`): one ticket per user per
//! event, a random order for everyone who joined before opening, arrival order after, and
//! admission at the event's rate by a token bucket that whichever join or poll comes first,
//! on whichever instance, advances. Every key of an event shares its hash tag, so one
//! event's line lives on one Redis Cluster slot and every script call is atomic.
//!
//! A position only ever moves forward: the line is ordered once and for all when a ticket
//! joins (before opening, by a random draw no one can see or influence; after, by
//! arrival), and leaves only from the front. So the people ahead of a ticket, and the
//! estimated wait that is their number over the rate, never grow while the rate stands.

use std::sync::Arc;
use std::time::Duration;

use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use rand::Rng;
use redis::Script;
use uuid::Uuid;

use crate::redis::link::{redis_error, RedisConfig, RedisLink};
use crate::StoreError;

/// Most tickets one call admits or drops, so no call holds Redis for long.
const STEPS_PER_CALL: u32 = 1_000;
/// How long an event's line is kept after its last join.
const KEEP_FOR: Duration = Duration::from_secs(7 * 24 * 3600);
/// The shortest time a waiting-room call may wait for Redis before Redis counts as
/// unavailable. A line exists for the moment thousands arrive at once, and their joins
/// queue up in front of Redis for a while: the hold store's tight timeout (a slow Redis
/// must not stall a sale that Postgres can carry) would turn that moment into 503s and
/// retries, where a little patience admits everyone.
pub const MIN_TIMEOUT: Duration = Duration::from_secs(2);

/// How an event's waiting room admits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    /// When admission begins; joiners before it are put in a random order.
    pub opens_at: DateTime<Utc>,
    /// Admissions per minute.
    pub admit_per_minute: u32,
    /// A waiting ticket not polled for this long is dropped when its turn comes.
    pub drop_after: Duration,
    /// How long an admission lasts; after it, joining again queues anew.
    pub session: Duration,
    /// Put joiners before opening in a random order; if false, in the order they joined.
    pub shuffle: bool,
}

/// Where a ticket stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// In the line.
    Waiting {
        /// The ticket.
        ticket: Uuid,
        /// People ahead of it; `None` before opening (the order is not drawn yet for the
        /// holder to see).
        ahead: Option<u64>,
    },
    /// Its turn came.
    Admitted {
        /// The ticket.
        ticket: Uuid,
        /// When it was admitted.
        at: DateTime<Utc>,
    },
    /// The user is done ([`WaitingRoom::end`]): their admission ended early, and its slot
    /// went to the next in line.
    Ended {
        /// The ticket that was admitted.
        ticket: Uuid,
        /// When it was admitted.
        at: DateTime<Utc>,
    },
    /// No such ticket of this user: never issued, dropped for not polling, ended, or
    /// replaced by a newer one. The user joins again. (From [`WaitingRoom::end`]: the user
    /// has no admission running.)
    Gone,
}

/// Counts of one event's line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineCounts {
    /// Tickets waiting.
    pub waiting: u64,
    /// Tickets admitted so far.
    pub admitted: u64,
    /// Tickets dropped for not polling.
    pub dropped: u64,
    /// Admissions ended early (the buyer checked out or released every hold).
    pub ended: u64,
}

/// The waiting rooms of every event, over one Redis connection (made on first use).
#[derive(Clone)]
pub struct WaitingRoom {
    redis: Arc<RedisLink>,
    script: Script,
}

impl std::fmt::Debug for WaitingRoom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WaitingRoom")
    }
}

/// The keys of `event`'s line, in the script's order.
fn keys(event: EventId) -> [String; 7] {
    [
        "line", "polls", "owners", "users", "admitted", "since", "bucket",
    ]
    .map(|name| format!("queue:{{{event}}}:{name}"))
}

fn ms(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}

impl WaitingRoom {
    /// Whether Redis answers a PING on the waiting room's link.
    pub async fn ping(&self) -> Result<(), StoreError> {
        self.redis.ping().await
    }

    /// Whether the waiting room's circuit breaker is failing commands at once.
    pub fn failing_fast(&self) -> bool {
        self.redis.is_failing_fast()
    }

    /// Waiting rooms on the Redis `config` names, whose timeout is at least
    /// [`MIN_TIMEOUT`].
    pub fn new(config: &RedisConfig) -> Result<Self, StoreError> {
        let config = RedisConfig {
            timeout: config.timeout.max(MIN_TIMEOUT),
            ..config.clone()
        };
        Ok(Self {
            redis: Arc::new(RedisLink::new(&config)?),
            script: Script::new(include_str!("../../../scripts/queue.lua")),
        })
    }

    /// Joins `user` to `event`'s line, or finds the ticket they already have.
    pub async fn join(
        &self,
        event: EventId,
        user: &UserId,
        rules: &Rules,
    ) -> Result<Place, StoreError> {
        // A uniformly random place among the joiners before opening, from the thread's
        // cryptographically secure generator.
        let draw: i64 = if rules.shuffle {
            rand::rng().random_range(0..(1 << 52))
        } else {
            -1
        };
        self.call(event, user, rules, "join", Uuid::new_v4(), draw)
            .await
    }

    /// Where `user`'s `ticket` stands now (polling is the heartbeat that keeps it).
    pub async fn poll(
        &self,
        event: EventId,
        user: &UserId,
        ticket: Uuid,
        rules: &Rules,
    ) -> Result<Place, StoreError> {
        self.call(event, user, rules, "poll", ticket, 0).await
    }

    /// Ends `user`'s running admission early, handing its slot to the next in line:
    /// [`Place::Ended`], or [`Place::Gone`] if they have none.
    pub async fn end(
        &self,
        event: EventId,
        user: &UserId,
        rules: &Rules,
    ) -> Result<Place, StoreError> {
        self.call(event, user, rules, "end", Uuid::nil(), 0).await
    }

    async fn call(
        &self,
        event: EventId,
        user: &UserId,
        rules: &Rules,
        mode: &str,
        ticket: Uuid,
        draw: i64,
    ) -> Result<Place, StoreError> {
        let mut call = self.script.prepare_invoke();
        for key in keys(event) {
            call.key(key);
        }
        call.arg(mode)
            .arg(rules.opens_at.timestamp_millis())
            .arg(rules.admit_per_minute)
            .arg(ms(rules.drop_after))
            .arg(ms(rules.session))
            .arg(user.as_str())
            .arg(ticket.to_string())
            .arg(draw)
            .arg(STEPS_PER_CALL)
            .arg(ms(KEEP_FOR));
        let reply: Vec<redis::Value> = call
            .invoke_async(&mut self.redis.connection().await?)
            .await
            .map_err(redis_error)?;
        parse(&reply)
    }

    /// Counts of `event`'s line.
    pub async fn counts(&self, event: EventId) -> Result<LineCounts, StoreError> {
        let [line, .., bucket] = keys(event);
        type Counted = (Option<u64>, Option<u64>, Option<u64>);
        let (waiting, (admitted, dropped, ended)): (u64, Counted) = redis::pipe()
            .zcard(&line)
            .cmd("HMGET")
            .arg(&bucket)
            .arg("admitted")
            .arg("dropped")
            .arg("ended")
            .query_async(&mut self.redis.connection().await?)
            .await
            .map_err(redis_error)?;
        Ok(LineCounts {
            waiting,
            admitted: admitted.unwrap_or(0),
            dropped: dropped.unwrap_or(0),
            ended: ended.unwrap_or(0),
        })
    }
}

fn parse(reply: &[redis::Value]) -> Result<Place, StoreError> {
    use redis::FromRedisValue;
    let bad = || StoreError::Other("unexpected reply from the waiting room script".into());
    let text = |i: usize| -> Result<String, StoreError> {
        reply
            .get(i)
            .and_then(|v| String::from_redis_value(v.clone()).ok())
            .ok_or_else(bad)
    };
    let number = |i: usize| -> Result<i64, StoreError> {
        reply
            .get(i)
            .and_then(|v| i64::from_redis_value(v.clone()).ok())
            .ok_or_else(bad)
    };
    let ticket = || -> Result<Uuid, StoreError> { text(1)?.parse().map_err(|_| bad()) };
    Ok(match text(0)?.as_str() {
        "waiting" => Place::Waiting {
            ticket: ticket()?,
            ahead: u64::try_from(number(2)?).ok(),
        },
        "admitted" => Place::Admitted {
            ticket: ticket()?,
            at: DateTime::from_timestamp_millis(number(2)?).ok_or_else(bad)?,
        },
        "ended" => Place::Ended {
            ticket: ticket()?,
            at: DateTime::from_timestamp_millis(number(2)?).ok_or_else(bad)?,
        },
        "gone" => Place::Gone,
        _ => return Err(bad()),
    })
}

/// The estimated wait of someone with `ahead` people ahead at `admit_per_minute`, in whole
/// seconds (rounded up).
pub fn estimated_wait_seconds(ahead: u64, admit_per_minute: u32) -> u64 {
    ahead
        .saturating_mul(60)
        .div_ceil(u64::from(admit_per_minute.max(1)))
}

#[cfg(test)]
mod tests;
