//! The claim on the redis store: one run of `scripts/hold_acquire.lua` holds a basket (or,
//! for a season claim, marks it and then holds it), as `pg/holds/claim.rs` is the claim on
//! the postgres store. The call is built here ([`claim_call`], shared with
//! `hold_grow.lua`, which claims seats into a live hold) and its answer decoded here
//! ([`refusal`]): every script that claims seats answers in the same words as
//! `sql/claim.sql`.

use std::time::Duration;

use boxoffice_core::hold::{AcquireOutcome, ClaimedSeat, Hold};
use redis::{Script, ScriptInvocation, Value};
use uuid::Uuid;

use super::codec::{decode, encode_seats, millis, nth, rest};
use super::event_state::Load;
use super::{keys, RedisHoldStore, WAIT_FOR_EVENT};
use crate::claim_word::ClaimWord;
use crate::hold_store::HoldRequest;
use crate::redis::link::redis_error;
use crate::StoreError;

/// How a run of `hold_acquire.lua` claims a basket.
#[derive(Clone, Copy, Debug)]
pub(super) enum Mode<'a> {
    /// A hold of the event alone.
    Hold,
    /// A season claim checking the basket as a hold is checked, then marking its seats with
    /// `mark` for the request's time to live, nothing else.
    Prepare {
        /// `p:` and the claim's token in the event.
        mark: &'a str,
    },
    /// A season claim holding the seats it marked with `mark` (its marks count as free),
    /// one of `events` the claim holds seats in.
    Season {
        /// `p:` and the claim's token in the event.
        mark: &'a str,
        /// How many events the season claim holds seats in.
        events: usize,
    },
}

/// What a run of `hold_acquire.lua` did.
#[derive(Debug)]
pub(super) enum Claimed {
    /// The basket is held.
    Held(Hold),
    /// (Preparing) the seats are marked.
    Prepared,
    /// Nothing was written, for this reason.
    Refused(AcquireOutcome),
}

impl RedisHoldStore {
    /// Claims `r`'s basket under `token` as `mode` says, loading the event's state first
    /// where Redis lacks it and waiting (up to [`WAIT_FOR_EVENT`]) while another server
    /// loads it, its allocations change or another season claim has a seat marked.
    pub(super) async fn claim(
        &self,
        r: &HoldRequest<'_>,
        token: Uuid,
        mode: Mode<'_>,
    ) -> Result<Claimed, StoreError> {
        let quoted: Vec<ClaimedSeat> = r.quotes.iter().flatten().cloned().collect();
        let seats_json = encode_seats(&quoted);
        let (mark, phase) = match mode {
            Mode::Hold => ("", String::new()),
            Mode::Prepare { mark } => (mark, "prepare".to_owned()),
            Mode::Season { mark, events } => (mark, events.to_string()),
        };
        let mut conn = self.conn().await?;
        let deadline = tokio::time::Instant::now() + WAIT_FOR_EVENT;
        loop {
            let mut call = claim_call(&self.scripts.acquire, r, token);
            call.arg(token.to_string())
                .arg(r.user.as_str())
                .arg(u64::from(r.ttl_seconds) * 1000)
                .arg(r.max_seats_per_user)
                .arg(r.layout_version)
                .arg(&seats_json)
                .arg(rate_interval(r.holds_per_minute))
                .arg(r.holds_per_minute)
                .arg(r.pass.map_or_else(String::new, |p| p.ticket.to_string()))
                .arg(r.pass.map_or(0, |p| p.expires_at.timestamp_millis()))
                .arg(mark)
                .arg(&phase);
            for (seat, quote) in r.seats.iter().zip(r.quotes) {
                call.arg(seat).arg(if quote.is_some() { "1" } else { "0" });
            }
            let reply: Vec<Value> = match call.invoke_async(&mut conn).await {
                Ok(reply) => reply,
                Err(e) => {
                    let e = redis_error(e);
                    // Marks lapse by themselves within moments; a hold is released.
                    if matches!(e, StoreError::Unavailable { .. })
                        && !matches!(mode, Mode::Prepare { .. })
                    {
                        self.undo_later(r, token);
                    }
                    return Err(e);
                }
            };
            let word = ClaimWord::read(&nth::<String>(&reply, 0)?, "a hold script")?;
            let wait = match word {
                ClaimWord::Held => {
                    let (created, expires): (i64, i64) = (nth(&reply, 1)?, nth(&reply, 2)?);
                    let refresh: i64 = nth(&reply, 3)?;
                    if refresh == 1 {
                        // Refresh before the state lapses, so no hold ever waits for a load
                        // in an event that is selling.
                        if let Err(e) = self.load(r.event, true).await {
                            tracing::warn!(event = %r.event, error = %e, "could not refresh the event's state in redis");
                        }
                    }
                    return Ok(Claimed::Held(Hold {
                        token,
                        event_id: r.event,
                        user_id: r.user.clone(),
                        seats: quoted,
                        created_at: millis(created)?,
                        expires_at: millis(expires)?,
                    }));
                }
                ClaimWord::Prepared => return Ok(Claimed::Prepared),
                ClaimWord::Load => matches!(self.load(r.event, false).await?, Load::Busy),
                ClaimWord::Busy => true,
                _ => return refusal(word, &reply).map(Claimed::Refused),
            };
            if wait {
                if tokio::time::Instant::now() >= deadline {
                    return Err(StoreError::unavailable(
                        "the event's state is being loaded, its allocations are changing or a season claim has its seats",
                    ));
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    }
}

/// A call of `hold_acquire.lua` or `hold_grow.lua` for `r` under `token`, with its keys:
/// the event's state, its sold and held seats, the buyer's held seats, the hold, the
/// buyer's rate, the pass, then each seat's.
pub(super) fn claim_call<'a>(
    script: &'a Script,
    r: &HoldRequest<'_>,
    token: Uuid,
) -> ScriptInvocation<'a> {
    let mut call = script.key(keys::sync(r.event));
    call.key(keys::fence(r.event))
        .key(keys::sold(r.event))
        .key(keys::held(r.event))
        .key(keys::user(r.event, r.user.as_str()))
        .key(keys::hold(r.event, token))
        .key(keys::hold_rate(r.event, r.user.as_str()))
        .key(keys::pass_ended(r.event, r.pass.map(|p| p.ticket)));
    for seat in r.seats {
        call.key(keys::seat(r.event, seat));
    }
    call
}

/// The hold rate's interval as the scripts take it: milliseconds of a minute one request
/// uses, or 0 for no limit.
pub(super) fn rate_interval(holds_per_minute: u32) -> f64 {
    if holds_per_minute == 0 {
        0.0
    } else {
        60_000.0 / f64::from(holds_per_minute)
    }
}

/// What `hold_acquire.lua` and `hold_grow.lua` answer alike when they refuse: `word` is
/// the reply's first value.
pub(super) fn refusal(word: ClaimWord, reply: &[Value]) -> Result<AcquireOutcome, StoreError> {
    Ok(match word {
        ClaimWord::Unavailable => AcquireOutcome::Unavailable(
            rest(reply, 1)
                .iter()
                .map(decode)
                .collect::<Result<Vec<String>, _>>()?,
        ),
        ClaimWord::Rate => {
            let wait: u64 = nth(reply, 1)?;
            AcquireOutcome::RateLimited(Duration::from_millis(wait))
        }
        ClaimWord::Stale => AcquireOutcome::LayoutChanged(nth(reply, 1)?),
        word => word
            .plain_refusal()
            .ok_or_else(|| word.unexpected("a hold script"))?,
    })
}
