//! Holds as Redis keys with a TTL (seed 003), taken and released by Lua scripts.
//!
//! # Keys
//!
//! Every key carries the event id as a hash tag, so one event's keys share a Redis
//! Cluster slot and every script runs on one node (see [`keys`]):
//!
//! | key | what |
//! |---|---|
//! | `hold:{E}:<seat>` | the token holding the seat; expires with the hold |
//! | `holdtok:{E}:<token>` | the hold: user, created, expiry, seats with their quotes; expires with it |
//! | `held:{E}` | sorted set of held seats scored by expiry: availability in one call |
//! | `holduser:{E}:<user>` | sorted set of one user's held seats, for the per-user limit |
//! | `sold:{E}` | the event's sold seats, so holds on them are refused |
//! | `soldnew:{E}` | seats sold since the last load from Postgres began |
//! | `sync:{E}` | layout version and start time, as loaded from Postgres with `sold:{E}` |
//! | `loading:{E}` | which server is loading the event's state |
//! | `fence:{E}` | present while the event's allocations change |
//!
//! `/metrics` counts `redis_event_loads_total` (states loaded from Postgres) and
//! `redis_missed_sales_total` (checkouts Postgres refused because Redis did not know a
//! seat was sold).
//!
//! Every key expires: a hold's keys with the hold, the indexes with their latest entry,
//! the loaded state after [`SYNC_TTL`] (the sold seats a minute later), so nothing is
//! left behind once an event's sale is over.
//!
//! # Postgres decides
//!
//! Redis decides only who may try to buy. Checkout writes the order in Postgres, where the
//! `order_seat_sold` unique index refuses a second sale whatever Redis says. The event's
//! sold seats, layout version and start are loaded from Postgres on the first hold, again
//! within every [`SYNC_TTL`] (a hold in the last minute refreshes them while the others go
//! on), and whenever Redis has lost them (flushed, restarted, failed over): a hold is never
//! taken on a state that was not loaded.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use boxoffice_core::availability::HeldSeat;
use boxoffice_core::hold::{
    AcquireOutcome, CancelOutcome, CheckoutOutcome, ClaimedSeat, ExtendOutcome, Hold,
    ReleaseOutcome,
};
use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use redis::{FromRedisValue, Script, Value};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use uuid::Uuid;

use crate::error::stored_user_id;
use crate::holds::{existing, AllocationFence, HoldRequest, HoldStore};
use crate::orders::{self, CancelStep};
use crate::redis_link::{redis_error, Connection, RedisConfig, RedisLink};
use crate::StoreError;

/// How long an event's state loaded from Postgres is trusted before it is loaded again,
/// so a sold seat Redis missed (a checkout whose last step never reached Redis) is
/// refused again within this time.
pub const SYNC_TTL: Duration = Duration::from_secs(300);
/// A hold taken this close to the end of [`SYNC_TTL`] loads the event's state again.
const REFRESH_AHEAD: Duration = Duration::from_secs(60);
/// How long a checkout protects its seats while Postgres commits: longer than any
/// statement may run.
const CHECKOUT_PROTECTION: Duration = Duration::from_secs(60);
/// How long a server's claim to load an event's state lasts, should it die meanwhile.
const LOAD_CLAIM: Duration = Duration::from_secs(10);
/// How long an allocation change keeps holds out, should it never finish.
const FENCE: Duration = Duration::from_secs(15);
/// How long a hold waits for another server's load or an allocation change to finish
/// before answering unavailable.
const WAIT_FOR_EVENT: Duration = Duration::from_secs(3);
/// Sold seats staged per command while loading.
const STAGE_CHUNK: usize = 1000;

/// Key names. Each takes the event first; its id in braces is the cluster hash tag.
pub mod keys {
    use boxoffice_core::ids::EventId;
    use uuid::Uuid;

    /// The token holding a seat.
    pub fn seat(event: EventId, seat: &str) -> String {
        format!("hold:{{{event}}}:{seat}")
    }
    /// A hold by token.
    pub fn hold(event: EventId, token: Uuid) -> String {
        format!("holdtok:{{{event}}}:{token}")
    }
    /// Live holds by seat, scored by expiry.
    pub fn held(event: EventId) -> String {
        format!("held:{{{event}}}")
    }
    /// One user's held seats, scored by expiry.
    pub fn user(event: EventId, user: &str) -> String {
        format!("holduser:{{{event}}}:{user}")
    }
    /// A user's hold rate in the event (when their next ask would arrive at the rate).
    pub fn hold_rate(event: EventId, user: &str) -> String {
        format!("holdrate:{{{event}}}:{user}")
    }
    /// Sold seats.
    pub fn sold(event: EventId) -> String {
        format!("sold:{{{event}}}")
    }
    /// Seats sold since the last load began.
    pub fn sold_new(event: EventId) -> String {
        format!("soldnew:{{{event}}}")
    }
    /// Sold seats staged by one loader.
    pub fn sold_stage(event: EventId, loader: Uuid) -> String {
        format!("soldstage:{{{event}}}:{loader}")
    }
    /// The loaded state: layout version and start.
    pub fn sync(event: EventId) -> String {
        format!("sync:{{{event}}}")
    }
    /// Who is loading the state.
    pub fn loading(event: EventId) -> String {
        format!("loading:{{{event}}}")
    }
    /// Present while allocations change.
    pub fn fence(event: EventId) -> String {
        format!("fence:{{{event}}}")
    }
}

/// The Lua scripts, each sent by SHA1 (EVALSHA) and loaded again when Redis answers
/// NOSCRIPT (after a restart or a failover).
struct Scripts {
    acquire: Script,
    read: Script,
    release: Script,
    extend: Script,
    checkout: Script,
    sold: Script,
    restore: Script,
    held: Script,
    load_begin: Script,
    load_finish: Script,
    fence: Script,
    compare_and_delete: Script,
    unsell: Script,
}

impl Scripts {
    fn new() -> Self {
        Self {
            acquire: Script::new(include_str!("../scripts/hold_acquire.lua")),
            read: Script::new(include_str!("../scripts/hold_read.lua")),
            release: Script::new(include_str!("../scripts/hold_release.lua")),
            extend: Script::new(include_str!("../scripts/hold_extend.lua")),
            checkout: Script::new(include_str!("../scripts/hold_checkout.lua")),
            sold: Script::new(include_str!("../scripts/hold_sold.lua")),
            restore: Script::new(include_str!("../scripts/hold_restore.lua")),
            held: Script::new(include_str!("../scripts/event_held.lua")),
            load_begin: Script::new(include_str!("../scripts/event_load_begin.lua")),
            load_finish: Script::new(include_str!("../scripts/event_load_finish.lua")),
            fence: Script::new(include_str!("../scripts/event_fence.lua")),
            compare_and_delete: Script::new(include_str!("../scripts/compare_and_delete.lua")),
            unsell: Script::new(include_str!("../scripts/event_unsell.lua")),
        }
    }
}

/// A seat with its quote, as a hold keeps it in Redis.
#[derive(Serialize, Deserialize)]
struct StoredSeat {
    id: String,
    #[serde(rename = "t")]
    ticket_type: String,
    #[serde(rename = "p")]
    price_cents: i64,
}

/// A hold as read back from `holdtok:{E}:<token>`.
struct StoredHold {
    user: String,
    created_ms: i64,
    expires_ms: i64,
    seats: Vec<ClaimedSeat>,
    /// Being checked out: the key outlives `expires_ms` to protect the commit.
    checking_out: bool,
    /// Redis' clock when the hold was read.
    now_ms: i64,
}

fn millis(ms: i64) -> Result<DateTime<Utc>, StoreError> {
    DateTime::from_timestamp_millis(ms)
        .ok_or_else(|| StoreError::Other(format!("timestamp {ms} is out of range").into()))
}

fn decode<T: FromRedisValue>(value: &Value) -> Result<T, StoreError> {
    T::from_redis_value(value).map_err(|e| StoreError::Other(Box::new(e)))
}

fn encode_seats(seats: &[ClaimedSeat]) -> String {
    let stored: Vec<StoredSeat> = seats
        .iter()
        .map(|s| StoredSeat {
            id: s.seat_id.clone(),
            ticket_type: s.ticket_type.clone(),
            price_cents: s.price_cents,
        })
        .collect();
    serde_json::to_string(&stored).expect("seats always serialize")
}

fn decode_seats(json: &str) -> Result<Vec<ClaimedSeat>, StoreError> {
    let stored: Vec<StoredSeat> =
        serde_json::from_str(json).map_err(|e| StoreError::Other(Box::new(e)))?;
    Ok(stored
        .into_iter()
        .map(|s| ClaimedSeat {
            seat_id: s.id,
            ticket_type: s.ticket_type,
            price_cents: s.price_cents,
        })
        .collect())
}

/// `{seat, score, seat, score, ...}` from ZRANGEBYSCORE WITHSCORES.
fn held_pairs(flat: Vec<String>) -> Result<Vec<HeldSeat>, StoreError> {
    flat.chunks_exact(2)
        .map(|pair| {
            let ms: f64 = pair[1]
                .parse()
                .map_err(|e| StoreError::Other(Box::new(e)))?;
            Ok(HeldSeat {
                seat_id: pair[0].clone(),
                held_until: millis(ms as i64)?,
            })
        })
        .collect()
}

/// What loading an event's state came to.
enum Load {
    /// The state is in Redis now.
    Ready,
    /// Another server is loading it, or its allocations are changing: wait.
    Busy,
}

/// Holds in Redis; orders and the truth in Postgres.
pub struct RedisHoldStore {
    redis: Arc<RedisLink>,
    pool: PgPool,
    scripts: Scripts,
    /// Loads of an event's state from Postgres (`redis_event_loads_total`).
    loads: AtomicU64,
    /// Checkouts Postgres refused because Redis did not know a seat was sold
    /// (`redis_missed_sales_total`).
    missed_sales: AtomicU64,
}

impl std::fmt::Debug for RedisHoldStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RedisHoldStore")
    }
}

impl RedisHoldStore {
    /// A store on the Redis `config` names, with orders in `pool`. Connects on first use,
    /// so a server starts (and answers 503 for holds) while Redis is down.
    pub fn new(config: &RedisConfig, pool: PgPool) -> Result<Self, StoreError> {
        Ok(Self {
            redis: Arc::new(RedisLink::new(config)?),
            pool,
            scripts: Scripts::new(),
            loads: AtomicU64::new(0),
            missed_sales: AtomicU64::new(0),
        })
    }

    async fn conn(&self) -> Result<Connection, StoreError> {
        self.redis.connection().await
    }

    /// Loads the event's layout version, start and sold seats from Postgres into Redis,
    /// unless another server is doing so; with `refresh`, even though they are loaded
    /// (holds go on meanwhile with the state loaded before).
    async fn load(&self, event: EventId, refresh: bool) -> Result<Load, StoreError> {
        let mut conn = self.conn().await?;
        let loader = Uuid::new_v4();
        let claim: i64 = self
            .scripts
            .load_begin
            .key(keys::sync(event))
            .key(keys::fence(event))
            .key(keys::loading(event))
            .key(keys::sold_new(event))
            .arg(loader.to_string())
            .arg(LOAD_CLAIM.as_millis() as u64)
            .arg(if refresh { "1" } else { "0" })
            .invoke_async(&mut conn)
            .await
            .map_err(redis_error)?;
        match claim {
            2 => return Ok(Load::Ready),
            0 => return Ok(Load::Busy),
            _ => {}
        }
        let installed = self.install_event_state(&mut conn, event, loader).await;
        if installed.is_err() {
            // Let another server load at once rather than after the claim lapses.
            let _ = self
                .scripts
                .compare_and_delete
                .key(keys::loading(event))
                .arg(loader.to_string())
                .invoke_async::<i64>(&mut conn)
                .await;
        }
        installed
    }

    /// Reads the event's state from Postgres and installs it in Redis under the claim
    /// `loader`.
    async fn install_event_state(
        &self,
        conn: &mut Connection,
        event: EventId,
        loader: Uuid,
    ) -> Result<Load, StoreError> {
        let row = Self::read_event_state(&self.pool, event).await?;
        let Some((version, starts_at, sold)) = row else {
            return Err(StoreError::NotFound);
        };
        let stage = keys::sold_stage(event, loader);
        for chunk in sold.chunks(STAGE_CHUNK) {
            redis::cmd("SADD")
                .arg(&stage)
                .arg(chunk)
                .query_async::<()>(conn)
                .await
                .map_err(redis_error)?;
        }
        if !sold.is_empty() {
            redis::cmd("PEXPIRE")
                .arg(&stage)
                .arg(LOAD_CLAIM.as_millis() as u64)
                .query_async::<()>(conn)
                .await
                .map_err(redis_error)?;
        }
        let installed: i64 = self
            .scripts
            .load_finish
            .key(keys::loading(event))
            .key(&stage)
            .key(keys::sold_new(event))
            .key(keys::sold(event))
            .key(keys::sync(event))
            .arg(loader.to_string())
            .arg(version)
            .arg(starts_at.timestamp_millis())
            .arg(SYNC_TTL.as_millis() as u64)
            .arg(REFRESH_AHEAD.as_millis() as u64)
            .invoke_async(conn)
            .await
            .map_err(redis_error)?;
        if installed == 1 {
            self.loads.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(%event, version, sold = sold.len(), "loaded the event's state into redis");
            Ok(Load::Ready)
        } else {
            Ok(Load::Busy)
        }
    }

    /// The event's layout version, start and sold seats, as Postgres has them once no
    /// allocation change is in flight.
    async fn read_event_state(
        pool: &PgPool,
        event: EventId,
    ) -> Result<Option<(i64, DateTime<Utc>, Vec<String>)>, StoreError> {
        let mut tx = pool.begin().await?;
        // An allocation change holds the event row (`for no key update`) until it commits,
        // so this waits for it and reads the new version, even if the change outlived its
        // fence in Redis.
        let Some((version, starts_at)): Option<(i64, DateTime<Utc>)> = sqlx::query_as(
            "select layout_version, starts_at from event where event_id = $1 for share",
        )
        .bind(event.0)
        .fetch_optional(&mut *tx)
        .await?
        else {
            return Ok(None);
        };
        // Sales that commit after this read are added by their checkouts to `soldnew`,
        // which the load merges in.
        let sold: Vec<String> = sqlx::query_scalar(
            "select seat_id from order_seat where event_id = $1 and not released",
        )
        .bind(event.0)
        .fetch_all(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Some((version, starts_at, sold)))
    }

    /// The hold stored under `token`, if it is live (or being checked out).
    async fn stored(
        &self,
        conn: &mut Connection,
        event: EventId,
        token: Uuid,
    ) -> Result<Option<StoredHold>, StoreError> {
        type Fields = (
            Option<String>,
            Option<i64>,
            Option<i64>,
            Option<String>,
            Option<i64>,
            i64,
        );
        let (user, created, expires, seats, checking_out, now_ms): Fields = self
            .scripts
            .read
            .key(keys::hold(event, token))
            .invoke_async(conn)
            .await
            .map_err(redis_error)?;
        match (user, created, expires, seats) {
            (Some(user), Some(created_ms), Some(expires_ms), Some(seats)) => Ok(Some(StoredHold {
                user,
                created_ms,
                expires_ms,
                seats: decode_seats(&seats)?,
                checking_out: checking_out.is_some(),
                now_ms,
            })),
            _ => Ok(None),
        }
    }

    /// Runs one of the scripts that take a hold's key, its seats' keys and their ids.
    fn hold_invocation<'a>(
        script: &'a Script,
        event: EventId,
        token: Uuid,
        head: &[String],
        args: &[String],
        seats: &[ClaimedSeat],
    ) -> redis::ScriptInvocation<'a> {
        let mut call = script.key(keys::hold(event, token));
        for key in head {
            call.key(key);
        }
        for seat in seats {
            call.key(keys::seat(event, &seat.seat_id));
        }
        call.arg(token.to_string());
        for arg in args {
            call.arg(arg);
        }
        for seat in seats {
            call.arg(&seat.seat_id);
        }
        call
    }

    /// Releases, in the background, a hold whose acquire went unanswered. A command that
    /// timed out may still have reached Redis and run later (a Redis frozen for a while
    /// runs what it was sent once it thaws): the buyer was told 503, so a hold made then
    /// would keep seats from everyone until it lapsed. The release goes down the same
    /// connection after the acquire, so it runs after it; it is compare-and-delete on the
    /// token, so where the acquire never ran it changes nothing. It is retried until Redis
    /// answers or the hold would have lapsed anyway.
    fn undo_later(&self, r: &HoldRequest<'_>, token: Uuid) {
        let redis = self.redis.clone();
        let script = self.scripts.release.clone();
        let (event, user) = (r.event, r.user.as_str().to_owned());
        let seats: Vec<ClaimedSeat> = r
            .seats
            .iter()
            .map(|seat| ClaimedSeat {
                seat_id: seat.clone(),
                ticket_type: String::new(),
                price_cents: 0,
            })
            .collect();
        let give_up = tokio::time::Instant::now() + Duration::from_secs(u64::from(r.ttl_seconds));
        tokio::spawn(async move {
            let mut pause = Duration::from_millis(50);
            let head = [keys::held(event), keys::user(event, &user)];
            while tokio::time::Instant::now() < give_up {
                let released = match redis.connection().await {
                    Ok(mut conn) => {
                        Self::hold_invocation(
                            &script,
                            event,
                            token,
                            &head,
                            std::slice::from_ref(&user),
                            &seats,
                        )
                        .invoke_async::<i64>(&mut conn)
                        .await
                    }
                    Err(_) => Err(redis::RedisError::from((
                        redis::ErrorKind::IoError,
                        "not connected",
                    ))),
                };
                match released {
                    Ok(1) => {
                        tracing::info!(%event, %token, "released a hold whose acquire had timed out");
                        return;
                    }
                    Ok(_) => return,
                    Err(_) => {
                        tokio::time::sleep(pause).await;
                        pause = (pause * 2).min(Duration::from_secs(2));
                    }
                }
            }
        });
    }

    /// Marks the order's seats sold in Redis and ends the hold. The order is committed
    /// either way: if Redis cannot be reached, the seats stay protected until the checkout's
    /// protection lapses, and the event's next load from Postgres (within [`SYNC_TTL`])
    /// refuses them; a hold taken on one meanwhile fails at checkout, where Postgres
    /// decides.
    async fn finish_sold(&self, event: EventId, token: Uuid, user: &UserId, seats: &[ClaimedSeat]) {
        let head = [
            keys::held(event),
            keys::user(event, user.as_str()),
            keys::sold(event),
            keys::sold_new(event),
        ];
        let result = match self.conn().await {
            Ok(mut conn) => {
                let keep = [(2 * SYNC_TTL.as_millis()).to_string()];
                Self::hold_invocation(&self.scripts.sold, event, token, &head, &keep, seats)
                    .invoke_async::<i64>(&mut conn)
                    .await
                    .map_err(redis_error)
            }
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            tracing::warn!(%event, %token, error = %e, "could not mark sold seats in redis; postgres has the order, and the event's next load from postgres will refuse them");
        }
    }

    /// Ends a checkout that did not sell: the hold gets its own expiry back, or is dropped
    /// (and the event's sold seats reloaded) when Postgres refused the order.
    async fn restore(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
        seats: &[ClaimedSeat],
        drop: bool,
    ) {
        let head = [
            keys::held(event),
            keys::user(event, user.as_str()),
            keys::sync(event),
        ];
        let args = [if drop { "1" } else { "0" }.to_owned()];
        let result = match self.conn().await {
            Ok(mut conn) => {
                Self::hold_invocation(&self.scripts.restore, event, token, &head, &args, seats)
                    .invoke_async::<i64>(&mut conn)
                    .await
                    .map_err(redis_error)
            }
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            tracing::warn!(%event, %token, error = %e, "could not end a checkout's protection in redis; it lapses by itself");
        }
    }

    /// The order already made from `token`, as the answer to a checkout.
    async fn existing_order(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
    ) -> Result<Option<CheckoutOutcome>, StoreError> {
        let mut conn = self.pool.acquire().await?;
        Ok(orders::find_by_token(&mut conn, event, token)
            .await?
            .map(|order| existing(order, user)))
    }

    /// Writes the order in Postgres: the unique indexes decide.
    async fn commit_order(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
        seats: &[ClaimedSeat],
    ) -> Result<boxoffice_core::hold::Order, StoreError> {
        // Orders keep synchronous commit: success is answered only once the order is durable.
        let mut tx = self.pool.begin().await?;
        let order = orders::insert_order(&mut tx, event, user, token, seats).await?;
        tx.commit().await?;
        Ok(order)
    }
}

#[async_trait]
impl HoldStore for RedisHoldStore {
    fn kind(&self) -> &'static str {
        "redis"
    }

    fn limits_hold_rate(&self) -> bool {
        true
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            (
                "redis_event_loads_total",
                self.loads.load(Ordering::Relaxed),
            ),
            (
                "redis_missed_sales_total",
                self.missed_sales.load(Ordering::Relaxed),
            ),
        ]
    }

    async fn acquire(&self, r: &HoldRequest<'_>) -> Result<AcquireOutcome, StoreError> {
        let token = Uuid::new_v4();
        let quoted: Vec<ClaimedSeat> = r.quotes.iter().flatten().cloned().collect();
        let seats_json = encode_seats(&quoted);
        let mut conn = self.conn().await?;
        let deadline = tokio::time::Instant::now() + WAIT_FOR_EVENT;
        loop {
            let mut call = self.scripts.acquire.key(keys::sync(r.event));
            call.key(keys::fence(r.event))
                .key(keys::sold(r.event))
                .key(keys::held(r.event))
                .key(keys::user(r.event, r.user.as_str()))
                .key(keys::hold(r.event, token))
                .key(keys::hold_rate(r.event, r.user.as_str()));
            for seat in r.seats {
                call.key(keys::seat(r.event, seat));
            }
            call.arg(token.to_string())
                .arg(r.user.as_str())
                .arg(u64::from(r.ttl_seconds) * 1000)
                .arg(r.max_seats_per_user)
                .arg(r.layout_version)
                .arg(&seats_json)
                .arg(if r.holds_per_minute == 0 {
                    0.0
                } else {
                    60_000.0 / f64::from(r.holds_per_minute)
                })
                .arg(r.holds_per_minute);
            for (seat, quote) in r.seats.iter().zip(r.quotes) {
                call.arg(seat).arg(if quote.is_some() { "1" } else { "0" });
            }
            let reply: Vec<Value> = match call.invoke_async(&mut conn).await {
                Ok(reply) => reply,
                Err(e) => {
                    let e = redis_error(e);
                    if matches!(e, StoreError::Unavailable { .. }) {
                        self.undo_later(r, token);
                    }
                    return Err(e);
                }
            };
            let what: String = decode(reply.first().unwrap_or(&Value::Nil))?;
            let wait = match what.as_str() {
                "held" => {
                    let (created, expires): (i64, i64) = (decode(&reply[1])?, decode(&reply[2])?);
                    let refresh: i64 = decode(&reply[3])?;
                    if refresh == 1 {
                        // Refresh before the state lapses, so no hold ever waits for a load
                        // in an event that is selling.
                        if let Err(e) = self.load(r.event, true).await {
                            tracing::warn!(event = %r.event, error = %e, "could not refresh the event's state in redis");
                        }
                    }
                    return Ok(AcquireOutcome::Held(Hold {
                        token,
                        event_id: r.event,
                        user_id: r.user.clone(),
                        seats: quoted,
                        created_at: millis(created)?,
                        expires_at: millis(expires)?,
                    }));
                }
                "taken" => {
                    return reply[1..]
                        .iter()
                        .map(decode)
                        .collect::<Result<Vec<String>, _>>()
                        .map(AcquireOutcome::Unavailable)
                }
                "limit" => return Ok(AcquireOutcome::LimitExceeded),
                "rate" => {
                    let wait: u64 = decode(&reply[1])?;
                    return Ok(AcquireOutcome::RateLimited(Duration::from_millis(wait)));
                }
                "started" => return Ok(AcquireOutcome::EventStarted),
                "stale" => return Ok(AcquireOutcome::LayoutChanged(decode(&reply[1])?)),
                "load" => matches!(self.load(r.event, false).await?, Load::Busy),
                _ => true,
            };
            if wait {
                if tokio::time::Instant::now() >= deadline {
                    return Err(StoreError::unavailable(
                        "the event's state is being loaded or its allocations are changing",
                    ));
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    }

    async fn get(&self, event: EventId, token: Uuid) -> Result<Option<Hold>, StoreError> {
        let mut conn = self.conn().await?;
        let Some(hold) = self.stored(&mut conn, event, token).await? else {
            return Ok(None);
        };
        // Redis expires a hold by itself, except one being checked out, which outlives its
        // own expiry only to protect the commit; that one is judged here.
        if hold.checking_out && hold.expires_ms <= hold.now_ms {
            return Ok(None);
        }
        Ok(Some(Hold {
            token,
            event_id: event,
            user_id: stored_user_id(&hold.user)?,
            seats: hold.seats,
            created_at: millis(hold.created_ms)?,
            expires_at: millis(hold.expires_ms)?,
        }))
    }

    async fn extend(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
        ttl_seconds: u32,
        max_hold_seconds: u32,
    ) -> Result<ExtendOutcome, StoreError> {
        let mut conn = self.conn().await?;
        let Some(hold) = self.stored(&mut conn, event, token).await? else {
            return Ok(ExtendOutcome::NotLive);
        };
        if hold.user != user.as_str() {
            return Ok(ExtendOutcome::Forbidden);
        }
        let head = [keys::held(event), keys::user(event, user.as_str())];
        let args = [
            user.as_str().to_owned(),
            (u64::from(ttl_seconds) * 1000).to_string(),
            (u64::from(max_hold_seconds) * 1000).to_string(),
        ];
        let expires: i64 = Self::hold_invocation(
            &self.scripts.extend,
            event,
            token,
            &head,
            &args,
            &hold.seats,
        )
        .invoke_async(&mut conn)
        .await
        .map_err(redis_error)?;
        Ok(match expires {
            -1 => ExtendOutcome::Forbidden,
            0 => ExtendOutcome::NotLive,
            ms => ExtendOutcome::Extended(millis(ms)?),
        })
    }

    async fn release(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
    ) -> Result<ReleaseOutcome, StoreError> {
        let mut conn = self.conn().await?;
        let Some(hold) = self.stored(&mut conn, event, token).await? else {
            return Ok(ReleaseOutcome::NotLive);
        };
        if hold.user != user.as_str() {
            return Ok(ReleaseOutcome::Forbidden);
        }
        let head = [keys::held(event), keys::user(event, user.as_str())];
        let released: i64 = Self::hold_invocation(
            &self.scripts.release,
            event,
            token,
            &head,
            &[user.as_str().to_owned()],
            &hold.seats,
        )
        .invoke_async(&mut conn)
        .await
        .map_err(redis_error)?;
        Ok(match released {
            1 => ReleaseOutcome::Released,
            -1 => ReleaseOutcome::Forbidden,
            _ => ReleaseOutcome::NotLive,
        })
    }

    async fn checkout(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
    ) -> Result<CheckoutOutcome, StoreError> {
        // A token already checked out has no hold left in Redis (or, if the last step of
        // its checkout never reached Redis, a protected one whose order Postgres refuses
        // to write twice): either way Postgres has the order, so it is looked up only then.
        let mut conn = self.conn().await?;
        let Some(hold) = self.stored(&mut conn, event, token).await? else {
            return Ok(self
                .existing_order(event, token, user)
                .await?
                .unwrap_or(CheckoutOutcome::NotLive));
        };
        if hold.user != user.as_str() {
            return Ok(CheckoutOutcome::Forbidden);
        }
        // Check the token still owns every seat, and protect them for the commit.
        let protect = [
            user.as_str().to_owned(),
            CHECKOUT_PROTECTION.as_millis().to_string(),
        ];
        let reply: Vec<Value> = Self::hold_invocation(
            &self.scripts.checkout,
            event,
            token,
            &[keys::held(event)],
            &protect,
            &hold.seats,
        )
        .invoke_async(&mut conn)
        .await
        .map_err(redis_error)?;
        match decode::<i64>(reply.first().unwrap_or(&Value::Nil))? {
            1 => {}
            -1 => return Ok(CheckoutOutcome::Forbidden),
            _ => {
                return Ok(self
                    .existing_order(event, token, user)
                    .await?
                    .unwrap_or(CheckoutOutcome::NotLive))
            }
        }
        let seats = decode_seats(&decode::<String>(&reply[2])?)?;
        match self.commit_order(event, token, user, &seats).await {
            Ok(order) => {
                self.finish_sold(event, token, user, &seats).await;
                Ok(CheckoutOutcome::Created(order))
            }
            // A concurrent checkout of the same token committed first: its order stands,
            // and that checkout finishes the hold in Redis.
            Err(StoreError::Conflict { constraint })
                if constraint == "ticket_order_hold_token_key" =>
            {
                Ok(self
                    .existing_order(event, token, user)
                    .await?
                    .unwrap_or(CheckoutOutcome::NotLive))
            }
            // Postgres knows a seat is sold that Redis did not: Postgres decides. The hold
            // goes, and the event's sold seats are loaded again before the next hold.
            Err(StoreError::Conflict { constraint }) if constraint == "order_seat_sold" => {
                self.missed_sales.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(%event, %token, "redis held a seat postgres has sold; reloading the event's sold seats");
                self.restore(event, token, user, &seats, true).await;
                Ok(CheckoutOutcome::NotLive)
            }
            Err(e) => {
                self.restore(event, token, user, &seats, false).await;
                Err(e)
            }
        }
    }

    async fn cancel(
        &self,
        order_id: Uuid,
        by: Option<&UserId>,
    ) -> Result<CancelOutcome, StoreError> {
        let mut tx = self.pool.begin().await?;
        let step = orders::cancel_in_tx(&mut tx, order_id, by).await?;
        tx.commit().await?;
        if let CancelStep::Cancelled(order) = &step {
            // Postgres has put the seats on sale; Redis follows. Should Redis be away, it
            // refuses them until the event's next load from Postgres.
            let unsold = async {
                let mut conn = self.conn().await?;
                let event = order.event_id;
                let mut call = self.scripts.unsell.key(keys::sold(event));
                call.key(keys::sold_new(event))
                    .key(keys::sync(event))
                    .key(keys::loading(event));
                for seat in &order.seats {
                    call.arg(&seat.seat_id);
                }
                call.invoke_async::<i64>(&mut conn)
                    .await
                    .map_err(redis_error)
            };
            if let Err(e) = unsold.await {
                tracing::warn!(order = %order.order_id, error = %e, "could not return cancelled seats to sale in redis");
            }
        }
        Ok(step.into_outcome())
    }

    async fn held_seats(&self, event: EventId) -> Result<Vec<HeldSeat>, StoreError> {
        let mut conn = self.conn().await?;
        let flat: Vec<String> = self
            .scripts
            .held
            .key(keys::held(event))
            .invoke_async(&mut conn)
            .await
            .map_err(redis_error)?;
        held_pairs(flat)
    }

    async fn fence_allocations(&self, event: EventId) -> Result<AllocationFence, StoreError> {
        let mut conn = self.conn().await?;
        let id = Uuid::new_v4();
        let flat: Vec<String> = self
            .scripts
            .fence
            .key(keys::fence(event))
            .key(keys::sync(event))
            .key(keys::loading(event))
            .key(keys::held(event))
            .arg(id.to_string())
            .arg(FENCE.as_millis() as u64)
            .invoke_async(&mut conn)
            .await
            .map_err(redis_error)?;
        Ok(AllocationFence {
            held: held_pairs(flat)?,
            id: Some(id),
        })
    }

    async fn lift_fence(&self, event: EventId, fence: AllocationFence) {
        let Some(id) = fence.id else { return };
        let lifted = async {
            let mut conn = self.conn().await?;
            self.scripts
                .compare_and_delete
                .key(keys::fence(event))
                .arg(id.to_string())
                .invoke_async::<i64>(&mut conn)
                .await
                .map_err(redis_error)
        };
        if let Err(e) = lifted.await {
            tracing::warn!(%event, error = %e, "could not lift an allocation fence; it lapses by itself");
        }
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.redis.ping().await
    }
}
