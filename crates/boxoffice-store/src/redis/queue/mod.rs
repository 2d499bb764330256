//! The waiting room's line, in Redis, kept small enough for millions in line: one record
//! per user (their ticket's id, join number and join time), one counter of joins, and one
//! public counter, "admitted up to", which an instance holding the line's lease advances
//! about once a second (`scripts/queue_tick.lua`). Nothing is kept per waiting place: a
//! ticket's place follows from its join number (arrival order after the opening; for those
//! who joined before it, a keyed permutation of their join numbers whose seed is drawn at
//! the opening, see [`place`]), so an instance answers a waiting ticket's poll from the
//! counter it last read, without asking Redis.
//!
//! Only an admitted ticket touches Redis again, once, to be exchanged for its pass
//! (`queue_exchange.lua`): that write is how the line tells a used admission from one that
//! lapsed. Each second's admissions are kept until their session is over; then those not
//! exchanged are counted as lapsed and the counter moves on by as many, so a line of
//! closed tabs never stalls and no ticket needs a heartbeat. A place given up while
//! waiting is stepped over when the counter reaches it, and its ticket is listed for every
//! instance to refuse (`queue_leave.lua`).
//!
//! Every key of an event shares its hash tag, so one event's line lives on one Redis
//! Cluster slot and every script call is atomic. The counter only grows, so a waiting
//! ticket's position (its place less the counter) never does.
//!
//! A long file: the line's types, its keys, and one method per script with the decoding
//! of its reply, which read best together (each method mirrors its script's header). The
//! arithmetic of places is apart, in `place.rs`, and the tests in `tests.rs`.

use std::sync::Arc;
use std::time::Duration;

use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use redis::{FromRedisValue, Script, Value};
use uuid::Uuid;

use crate::redis::link::{redis_error, RedisConfig, RedisLink};
use crate::StoreError;

mod place;

use place::new_seed;
pub use place::{estimated_wait_seconds, place};

/// How long an event's line is kept after its last join.
const KEEP_FOR: Duration = Duration::from_secs(7 * 24 * 3600);
/// The shortest time a waiting-room call may wait for Redis before Redis counts as
/// unavailable. A line exists for the moment thousands arrive at once, and their joins
/// queue up in front of Redis for a while: the hold store's tight timeout (a slow Redis
/// must not stall a sale that Postgres can carry) would turn that moment into 503s and
/// retries, where a little patience admits everyone.
pub const MIN_TIMEOUT: Duration = Duration::from_secs(2);
/// How long after the counter advances the advance is shown: every instance reads the
/// line once a second, so by then each has it, and each shows it from the same moment. A
/// buyer polling one instance and then another never sees their place move back.
pub const SHOW_AFTER: Duration = Duration::from_secs(2);

/// What every call about one event's line needs to know of its settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    /// When admission begins; joiners before it are put in a random order.
    pub opens_at: DateTime<Utc>,
    /// Admissions per minute (the event's setting).
    pub admit_per_minute: u32,
    /// How long an admission lasts: a ticket not exchanged within it lapses, and a pass
    /// expires at its end.
    pub session: Duration,
}

/// A user's ticket, as the line keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Joined {
    /// The ticket's id (what a pass names, and what the line forgets when it is given up).
    pub id: Uuid,
    /// Its join number, 1 for the first to join.
    pub join: u64,
    /// When it joined.
    pub joined_at: DateTime<Utc>,
    /// The line's order when it was answered.
    pub order: Order,
    /// The counter when it was answered.
    pub admitted_up_to: u64,
    /// When it was exchanged for a pass, if it was.
    pub admitted_at: Option<DateTime<Utc>>,
}

/// How the line orders its places: known once it opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Not open yet: nobody has a place.
    BeforeOpening,
    /// Open: the first `early` joins are permuted with `seed`; the rest keep their number.
    Open {
        /// Joins before the opening.
        early: u64,
        /// The permutation's seed, drawn at the opening.
        seed: u64,
    },
}

/// What one instance's second in a line ([`WaitingRoom::tick`]) sends.
#[derive(Clone, Copy, Debug)]
pub struct Report<'a> {
    /// This instance.
    pub instance: &'a str,
    /// The factor (0..=1) its hold path asks the rate to be multiplied by.
    pub factor: f64,
    /// Why the factor is below 1 (empty when it is not).
    pub why: &'a str,
    /// How many ticket ids given up it has read so far.
    pub left_read: u64,
}

/// The line as a tick found it.
#[derive(Clone, Debug, PartialEq)]
pub struct LineState {
    /// Joins so far.
    pub joined: u64,
    /// The order of places.
    pub order: Order,
    /// The public counter as shown now: every place up to it is admitted.
    pub admitted_up_to: u64,
    /// The counter's latest values and when each is (or was) shown, newest first.
    pub shown: Vec<(DateTime<Utc>, u64)>,
    /// Admissions a minute in force.
    pub admitting_per_minute: u32,
    /// Why that is below the setting (empty when it is not).
    pub why: String,
    /// When a public figure other than the counter last changed.
    pub updated_at: DateTime<Utc>,
    /// Places given up while waiting that the counter has not reached.
    pub given_up: u64,
    /// Admitted places that lapsed so far.
    pub lapsed: u64,
    /// Places given up so far.
    pub left: u64,
    /// Passes ended early so far.
    pub ended: u64,
    /// Redis' clock.
    pub now: DateTime<Utc>,
    /// Ticket ids given up since the [`Report::left_read`]th.
    pub left_ids: Vec<Uuid>,
}

impl LineState {
    /// The counter as shown at `now`: the newest value shown by then.
    pub fn admitted_up_to_at(&self, now: DateTime<Utc>) -> u64 {
        self.shown
            .iter()
            .find(|(from, _)| *from <= now)
            .map_or(0, |&(_, up)| up)
    }

    /// When the counter's value at `now` began to be shown.
    pub fn shown_since(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.shown
            .iter()
            .find(|(from, _)| *from <= now)
            .map(|&(from, _)| from)
    }

    /// Places waiting with the counter at `up`: joined, neither reached nor given up.
    pub fn waiting_at(&self, up: u64) -> u64 {
        self.joined.saturating_sub(up).saturating_sub(self.given_up)
    }
}

/// The answer to exchanging an admitted ticket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exchange {
    /// Admitted at this time (the first exchange recorded it).
    Pass(DateTime<Utc>),
    /// Its place is not reached yet.
    Waiting,
    /// Given up, lapsed, ended or replaced: the user joins again.
    Gone,
}

/// The answer to giving up a ticket or ending a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Left {
    /// The place was given up.
    Left,
    /// The admission (a pass) ended, its place freed.
    Ended,
    /// No such ticket of this user (for an end: no pass).
    Gone,
}

/// Counts of one event's line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineCounts {
    /// Places waiting.
    pub waiting: u64,
    /// Places admitted so far (the public counter).
    pub admitted: u64,
    /// Admitted places not exchanged in time.
    pub dropped: u64,
    /// Admissions ended early (the buyer checked out or released every hold).
    pub ended: u64,
}

/// The waiting rooms of every event, over one Redis connection (made on first use).
#[derive(Clone)]
pub struct WaitingRoom {
    redis: Arc<RedisLink>,
    scripts: Arc<Scripts>,
    show_after: Duration,
}

struct Scripts {
    join: Script,
    tick: Script,
    exchange: Script,
    leave: Script,
}

impl std::fmt::Debug for WaitingRoom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WaitingRoom")
    }
}

/// The keys of `event`'s line.
#[derive(Debug)]
struct Keys {
    state: String,
    users: String,
    passes: String,
    ticks: String,
    used: String,
    gaveup: String,
    health: String,
    lease: String,
    left: String,
    shown: String,
}

impl Keys {
    fn of(event: EventId) -> Self {
        let key = |name: &str| format!("queue:{{{event}}}:{name}");
        Self {
            state: key("state"),
            users: key("users"),
            passes: key("passes"),
            ticks: key("ticks"),
            used: key("used"),
            gaveup: key("gaveup"),
            health: key("health"),
            lease: key("lease"),
            left: key("left"),
            shown: key("shown"),
        }
    }
}

/// One of the line's scripts, after the helpers they share (`scripts/queue_prelude.lua`).
fn script(body: &str) -> Script {
    Script::new(&format!(
        "{}\n{body}",
        include_str!("../../../scripts/queue_prelude.lua")
    ))
}

fn ms(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}

fn bad() -> StoreError {
    StoreError::Other("unexpected reply from a waiting room script".into())
}

fn at(ms: i64) -> Result<DateTime<Utc>, StoreError> {
    DateTime::from_timestamp_millis(ms).ok_or_else(bad)
}

/// Reads the reply's values one after another.
struct Reply(std::vec::IntoIter<Value>);

impl Reply {
    fn next<T: FromRedisValue>(&mut self) -> Result<T, StoreError> {
        T::from_redis_value(self.0.next().ok_or_else(bad)?).map_err(|_| bad())
    }

    fn order(early: i64, seed: String) -> Result<Order, StoreError> {
        Ok(match u64::try_from(early) {
            Ok(early) => Order::Open {
                early,
                seed: seed.parse().map_err(|_| bad())?,
            },
            Err(_) => Order::BeforeOpening,
        })
    }
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
            scripts: Arc::new(Scripts {
                join: script(include_str!("../../../scripts/queue_join.lua")),
                tick: script(include_str!("../../../scripts/queue_tick.lua")),
                exchange: script(include_str!("../../../scripts/queue_exchange.lua")),
                leave: script(include_str!("../../../scripts/queue_leave.lua")),
            }),
            show_after: SHOW_AFTER,
        })
    }

    /// These waiting rooms, showing each advance of a counter `show_after` after it
    /// (instead of [`SHOW_AFTER`]): for one instance alone, which needs no delay.
    pub fn showing_after(self, show_after: Duration) -> Self {
        Self { show_after, ..self }
    }

    async fn run(&self, call: redis::ScriptInvocation<'_>) -> Result<Value, StoreError> {
        call.invoke_async(&mut self.redis.connection().await?)
            .await
            .map_err(redis_error)
    }

    /// Joins `user` to `event`'s line, or finds the ticket they already have. `replace`
    /// names a ticket of theirs found lapsed: if it is still theirs, a new one is given.
    pub async fn join(
        &self,
        event: EventId,
        user: &UserId,
        rules: &Rules,
        replace: Option<Uuid>,
    ) -> Result<Joined, StoreError> {
        let keys = Keys::of(event);
        let mut call = self.scripts.join.prepare_invoke();
        call.key(&keys.state)
            .key(&keys.users)
            .key(&keys.passes)
            .key(&keys.shown)
            .arg(rules.opens_at.timestamp_millis())
            .arg(user.as_str())
            .arg(Uuid::new_v4().to_string())
            .arg(new_seed().to_string())
            .arg(ms(rules.session))
            .arg(ms(KEEP_FOR))
            .arg(replace.map(|id| id.to_string()).unwrap_or_default());
        let Value::Array(reply) = self.run(call).await? else {
            return Err(bad());
        };
        let mut reply = Reply(reply.into_iter());
        let id: String = reply.next()?;
        let join: u64 = reply.next()?;
        let joined_at = at(reply.next()?)?;
        let early: i64 = reply.next()?;
        let order = Reply::order(early, reply.next()?)?;
        let admitted_up_to: u64 = reply.next()?;
        let admitted_at: i64 = reply.next()?;
        Ok(Joined {
            id: id.parse().map_err(|_| bad())?,
            join,
            joined_at,
            order,
            admitted_up_to,
            admitted_at: if admitted_at < 0 {
                None
            } else {
                Some(at(admitted_at)?)
            },
        })
    }

    /// One instance's second in `event`'s line: reports its hold path's factor and, if it
    /// holds the line's lease, advances the counter. Answers the line as it stands.
    pub async fn tick(
        &self,
        event: EventId,
        rules: &Rules,
        report: &Report<'_>,
    ) -> Result<LineState, StoreError> {
        let keys = Keys::of(event);
        let mut call = self.scripts.tick.prepare_invoke();
        for key in [
            &keys.state,
            &keys.ticks,
            &keys.used,
            &keys.gaveup,
            &keys.health,
            &keys.lease,
            &keys.left,
            &keys.shown,
        ] {
            call.key(key);
        }
        call.arg(rules.opens_at.timestamp_millis())
            .arg(rules.admit_per_minute)
            .arg(ms(rules.session))
            .arg(report.instance)
            .arg(format!("{:.3}", report.factor.clamp(0.0, 1.0)))
            .arg(report.why)
            .arg(new_seed().to_string())
            .arg(report.left_read)
            .arg(ms(KEEP_FOR))
            .arg(ms(self.show_after));
        let Value::Array(reply) = self.run(call).await? else {
            return Err(bad());
        };
        let mut reply = Reply(reply.into_iter());
        let joined: u64 = reply.next()?;
        let early: i64 = reply.next()?;
        let order = Reply::order(early, reply.next()?)?;
        let mut state = LineState {
            joined,
            order,
            admitted_up_to: reply.next()?,
            shown: Vec::new(),
            admitting_per_minute: reply.next()?,
            why: reply.next()?,
            updated_at: at(reply.next()?)?,
            given_up: reply.next()?,
            lapsed: reply.next()?,
            left: reply.next()?,
            ended: reply.next()?,
            now: at(reply.next()?)?,
            left_ids: Vec::new(),
        };
        let history: String = reply.next()?;
        for entry in history.split(',').filter(|e| !e.is_empty()) {
            let (from, value) = entry.split_once(':').ok_or_else(bad)?;
            state.shown.push((
                at(from.parse().map_err(|_| bad())?)?,
                value.parse().map_err(|_| bad())?,
            ));
        }
        for id in reply.0 {
            let id: String = String::from_redis_value(id).map_err(|_| bad())?;
            state.left_ids.push(id.parse().map_err(|_| bad())?);
        }
        Ok(state)
    }

    /// Exchanges `user`'s admitted ticket `id` (at `place`) for the time of its admission.
    pub async fn exchange(
        &self,
        event: EventId,
        user: &UserId,
        id: Uuid,
        place: u64,
        rules: &Rules,
    ) -> Result<Exchange, StoreError> {
        let keys = Keys::of(event);
        let mut call = self.scripts.exchange.prepare_invoke();
        call.key(&keys.state)
            .key(&keys.users)
            .key(&keys.passes)
            .key(&keys.ticks)
            .key(&keys.used)
            .arg(user.as_str())
            .arg(id.to_string())
            .arg(place)
            .arg(ms(rules.session));
        let Value::Array(reply) = self.run(call).await? else {
            return Err(bad());
        };
        let mut reply = Reply(reply.into_iter());
        let answer: String = reply.next()?;
        Ok(match answer.as_str() {
            "pass" => Exchange::Pass(at(reply.next()?)?),
            "waiting" => Exchange::Waiting,
            "gone" => Exchange::Gone,
            _ => return Err(bad()),
        })
    }

    /// `user` gives up their ticket `id` (at `place`, if it has one yet).
    pub async fn leave(
        &self,
        event: EventId,
        user: &UserId,
        id: Uuid,
        place: Option<u64>,
    ) -> Result<Left, StoreError> {
        self.leave_or_end(event, user, "leave", Some(id), place)
            .await
    }

    /// Ends `user`'s running admission early, freeing its place for the next in line:
    /// [`Left::Ended`], or [`Left::Gone`] if they have none.
    pub async fn end(&self, event: EventId, user: &UserId) -> Result<Left, StoreError> {
        self.leave_or_end(event, user, "end", None, None).await
    }

    async fn leave_or_end(
        &self,
        event: EventId,
        user: &UserId,
        mode: &str,
        id: Option<Uuid>,
        place: Option<u64>,
    ) -> Result<Left, StoreError> {
        let keys = Keys::of(event);
        let mut call = self.scripts.leave.prepare_invoke();
        for key in [
            &keys.state,
            &keys.users,
            &keys.passes,
            &keys.ticks,
            &keys.used,
            &keys.gaveup,
            &keys.left,
        ] {
            call.key(key);
        }
        // A ticket given up before the opening has no place yet: it is admitted in its
        // turn and lapses.
        call.arg(user.as_str())
            .arg(id.map(|id| id.to_string()).unwrap_or_default())
            .arg(mode)
            .arg(place.map_or(-1, |p| i64::try_from(p).unwrap_or(i64::MAX)));
        let answer: String = String::from_redis_value(self.run(call).await?).map_err(|_| bad())?;
        Ok(match answer.as_str() {
            "left" => Left::Left,
            "ended" => Left::Ended,
            "gone" => Left::Gone,
            _ => return Err(bad()),
        })
    }

    /// Counts of `event`'s line.
    pub async fn counts(&self, event: EventId) -> Result<LineCounts, StoreError> {
        let keys = Keys::of(event);
        type Counted = (Option<u64>, Option<u64>, Option<u64>, Option<u64>);
        let ((seq, up, lapsed, ended), given_up): (Counted, u64) = redis::pipe()
            .cmd("HMGET")
            .arg(&keys.state)
            .arg("seq")
            .arg("up")
            .arg("lapsed")
            .arg("ended")
            .zcard(&keys.gaveup)
            .query_async(&mut self.redis.connection().await?)
            .await
            .map_err(redis_error)?;
        let (seq, up) = (seq.unwrap_or(0), up.unwrap_or(0));
        Ok(LineCounts {
            waiting: seq.saturating_sub(up).saturating_sub(given_up),
            admitted: up,
            dropped: lapsed.unwrap_or(0),
            ended: ended.unwrap_or(0),
        })
    }
}

#[cfg(test)]
mod tests;
