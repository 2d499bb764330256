//! Holds as Redis keys with a TTL (docs/design/holds-in-redis.md), taken and released by
//! Lua scripts. (A long file: the key table below and the `HoldStore` methods, each a
//! script call and its answer; the claim, the store's part in a sale, the event's state,
//! undo and the codec are files of their own.)
//!
//! # Keys
//!
//! Every key carries the event id as a hash tag, so one event's keys share a Redis
//! Cluster slot and every script runs on one node (see [`keys`]):
//!
//! | key | what | |---|---| | `hold:{E}:<seat>` | the token holding the seat; expires with
//! the hold | | `holdtok:{E}:<token>` | the hold: user, created, expiry, seats with their
//! quotes; expires with it | | `held:{E}` | sorted set of held seats scored by expiry:
//! availability in one call | | `holduser:{E}:<user>` | sorted set of one user's held
//! seats, for the per-user limit | | `sold:{E}` | the event's sold seats, so holds on them
//! are refused | | `soldnew:{E}` | seats sold since the last load from Postgres began | |
//! `sync:{E}` | layout version and start time, as loaded from Postgres with `sold:{E}` | |
//! `loading:{E}` | which server is loading the event's state | | `fence:{E}` | present
//! while the event's allocations change |
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
    AcquireOutcome, ClaimedSeat, ExtendOutcome, GrowOutcome, Hold, ReleaseOutcome, ShrinkOutcome,
};
use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use redis::{Script, Value};
use sqlx::PgPool;
use uuid::Uuid;

use crate::error::stored_user_id;
use crate::hold_store::{AllocationFence, HoldRequest, HoldStore};
use crate::redis::link::{redis_error, Connection, RedisConfig, RedisLink};
use crate::StoreError;

mod basket;
mod claim;
mod codec;
mod event_state;
pub mod keys;
mod sale;
mod scripts;
mod season;
mod undo;

use claim::{Claimed, Mode};
use codec::{decode_seats, encode_seats, held_pairs, millis, nth, StoredHold};
pub use event_state::SYNC_TTL;
pub(crate) use scripts::with_prelude;
use scripts::Scripts;

/// How long a checkout protects its seats while Postgres commits: longer than any
/// statement may run.
const CHECKOUT_PROTECTION: Duration = Duration::from_secs(60);
/// How long an allocation change keeps holds out, should it never finish.
const FENCE: Duration = Duration::from_secs(15);
/// How often a script acting on a hold's seats reads the hold again when its seats changed
/// in between (the buyer adding or taking out seats meanwhile) before answering 503.
const CHANGED_ATTEMPTS: usize = 8;
/// How long a hold waits for another server's load or an allocation change to finish
/// before answering unavailable.
pub(super) const WAIT_FOR_EVENT: Duration = Duration::from_secs(3);

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
    /// The lanes that write checkouts' orders together.
    checkouts: crate::sales::together::TakenCheckouts,
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
            checkouts: Default::default(),
        })
    }

    async fn conn(&self) -> Result<Connection, StoreError> {
        self.redis.connection().await
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
            Option<String>,
            Option<usize>,
        );
        let (user, created, expires, seats, checking_out, now_ms, pass, season_events): Fields =
            self.scripts
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
                seats_json: seats,
                checking_out: checking_out.is_some(),
                now_ms,
                pass: pass.and_then(|p| p.parse().ok()),
                season_events,
            })),
            _ => Ok(None),
        }
    }

    /// Connects and runs one of the scripts that take a hold's key, its seats' keys and
    /// their ids (see [`RedisHoldStore::hold_invocation`]); answers its number.
    async fn run_hold_script(
        &self,
        script: &Script,
        event: EventId,
        token: Uuid,
        head: &[String],
        args: &[String],
        seats: &[ClaimedSeat],
    ) -> Result<i64, StoreError> {
        let mut conn = self.conn().await?;
        Self::hold_invocation(script, event, token, head, args, seats)
            .invoke_async(&mut conn)
            .await
            .map_err(redis_error)
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
}

/// The answer when a hold's seats kept changing under a script that acts on them.
fn still_changing() -> StoreError {
    StoreError::unavailable("the hold's seats keep changing")
}

impl RedisHoldStore {
    /// Records in Postgres that a pass ended in Redis, where general-admission bookings
    /// look for ended passes.
    async fn record_pass_ended(&self, event: EventId, ticket: Uuid) {
        let recorded = async {
            let mut conn = self.pool.acquire().await?;
            crate::sales::passes::end_pass(&mut conn, event, ticket).await
        };
        if let Err(error) = recorded.await {
            tracing::warn!(%event, %error, "an ended pass was not recorded in postgres");
        }
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

    fn season_holds(&self) -> &dyn crate::season_holds::SeasonHolds {
        self
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
        Ok(match self.claim(r, Uuid::new_v4(), Mode::Hold).await? {
            Claimed::Held(hold) => AcquireOutcome::Held(hold),
            Claimed::Refused(refusal) => refusal,
            Claimed::Prepared => {
                return Err(StoreError::Other(
                    "a hold's claim answered as a season's".into(),
                ))
            }
        })
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

    async fn grow(
        &self,
        token: Uuid,
        request: &HoldRequest<'_>,
    ) -> Result<GrowOutcome, StoreError> {
        self.grow_hold(token, request).await
    }

    async fn shrink(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
        seat: &str,
    ) -> Result<ShrinkOutcome, StoreError> {
        self.shrink_hold(event, token, user, seat).await
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
        for _ in 0..CHANGED_ATTEMPTS {
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
                hold.seats_json,
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
            return Ok(match expires {
                -2 => continue,
                -1 => ExtendOutcome::Forbidden,
                0 => ExtendOutcome::NotLive,
                ms => ExtendOutcome::Extended {
                    expires_at: millis(ms)?,
                    seats: hold.seats.into_iter().map(|s| s.seat_id).collect(),
                },
            });
        }
        Err(still_changing())
    }

    async fn release(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
    ) -> Result<ReleaseOutcome, StoreError> {
        let mut conn = self.conn().await?;
        for _ in 0..CHANGED_ATTEMPTS {
            let Some(hold) = self.stored(&mut conn, event, token).await? else {
                return Ok(ReleaseOutcome::NotLive);
            };
            if hold.user != user.as_str() {
                return Ok(ReleaseOutcome::Forbidden);
            }
            let head = [
                keys::held(event),
                keys::user(event, user.as_str()),
                keys::pass_ended(event, hold.pass),
            ];
            let args = [user.as_str().to_owned(), "1".to_owned(), hold.seats_json];
            let released: i64 = Self::hold_invocation(
                &self.scripts.release,
                event,
                token,
                &head,
                &args,
                &hold.seats,
            )
            .invoke_async(&mut conn)
            .await
            .map_err(redis_error)?;
            if let (2, Some(ticket)) = (released, hold.pass) {
                self.record_pass_ended(event, ticket).await;
            }
            return Ok(match released {
                -2 => continue,
                1 | 2 => ReleaseOutcome::Released {
                    seats: hold.seats.into_iter().map(|s| s.seat_id).collect(),
                    pass_ended: released == 2,
                },
                -1 => ReleaseOutcome::Forbidden,
                _ => ReleaseOutcome::NotLive,
            });
        }
        Err(still_changing())
    }

    async fn end_pass(
        &self,
        event: EventId,
        ticket: Uuid,
        until: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        // Where holds look (the acquire scripts' `passend` key), until the pass would have
        // expired; and in Postgres, where general-admission bookings look.
        let mut conn = self.conn().await?;
        redis::cmd("SET")
            .arg(keys::pass_ended(event, Some(ticket)))
            .arg(1)
            .arg("PXAT")
            .arg(until.timestamp_millis().max(1))
            .query_async::<()>(&mut conn)
            .await
            .map_err(redis_error)?;
        let mut pg = self.pool.acquire().await?;
        crate::sales::passes::end_pass(&mut pg, event, ticket).await
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

    async fn seats_held_by(&self, event: EventId, user: &UserId) -> Result<u32, StoreError> {
        let mut conn = self.conn().await?;
        // The user's seats are kept like the event's: seat id -> expiry.
        let flat: Vec<String> = self
            .scripts
            .held
            .key(keys::user(event, user.as_str()))
            .invoke_async(&mut conn)
            .await
            .map_err(redis_error)?;
        Ok(u32::try_from(flat.len() / 2).unwrap_or(u32::MAX))
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

    fn failing_fast(&self) -> bool {
        self.redis.is_failing_fast()
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.redis.ping().await
    }
}
