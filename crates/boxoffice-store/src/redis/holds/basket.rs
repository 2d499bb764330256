//! A hold that grows and shrinks a seat at a time on the redis store
//! (`scripts/hold_grow.lua`, `scripts/hold_shrink.lua`). Both rewrite the hold's seats in
//! the script; the scripts that act on seats read before (extend, release, checkout) check
//! that the hold still has exactly those, and read it again when not.

use std::time::Duration;

use boxoffice_core::hold::{AcquireOutcome, ClaimedSeat, GrowOutcome, Hold, ShrinkOutcome};
use boxoffice_core::ids::{EventId, UserId};
use redis::Value;
use uuid::Uuid;

use super::claim::{claim_call, rate_interval, refusal};
use super::codec::{decode, decode_seats, millis, nth, rest};
use super::event_state::Load;
use super::{keys, RedisHoldStore, WAIT_FOR_EVENT};
use crate::claim_word::ClaimWord;
use crate::hold_store::HoldRequest;
use crate::redis::link::redis_error;
use crate::StoreError;

impl RedisHoldStore {
    pub(super) async fn grow_hold(
        &self,
        token: Uuid,
        r: &HoldRequest<'_>,
    ) -> Result<GrowOutcome, StoreError> {
        let mut conn = self.conn().await?;
        let deadline = tokio::time::Instant::now() + WAIT_FOR_EVENT;
        loop {
            let mut call = claim_call(&self.scripts.grow, r, token);
            call.arg(token.to_string())
                .arg(r.user.as_str())
                .arg(r.max_seats_per_user)
                .arg(r.layout_version)
                .arg(rate_interval(r.holds_per_minute))
                .arg(r.holds_per_minute)
                .arg(r.pass.map_or_else(String::new, |p| p.ticket.to_string()));
            for (seat, quote) in r.seats.iter().zip(r.quotes) {
                match quote {
                    Some(q) => call
                        .arg(seat)
                        .arg("1")
                        .arg(&q.ticket_type)
                        .arg(q.price_cents),
                    None => call.arg(seat).arg("0").arg("").arg(0),
                };
            }
            // Unlike a new hold's, a growing that went unanswered is not undone: its seats
            // would be the buyer's own, released or bought with the hold.
            let reply: Vec<Value> = call.invoke_async(&mut conn).await.map_err(redis_error)?;
            let word = ClaimWord::read(&nth::<String>(&reply, 0)?, "hold_grow.lua")?;
            let wait = match word {
                ClaimWord::Held => {
                    let hold = hold_from(r.event, r.user, token, rest(&reply, 1))?;
                    return Ok(GrowOutcome::Acquire(AcquireOutcome::Held(hold)));
                }
                ClaimWord::Gone => return Ok(GrowOutcome::NotLive),
                ClaimWord::Other => return Ok(GrowOutcome::Forbidden),
                ClaimWord::Load => matches!(self.load(r.event, false).await?, Load::Busy),
                ClaimWord::Busy => true,
                _ => return refusal(word, &reply).map(GrowOutcome::Acquire),
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

    pub(super) async fn shrink_hold(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
        seat: &str,
    ) -> Result<ShrinkOutcome, StoreError> {
        let mut conn = self.conn().await?;
        let Some(stored) = self.stored(&mut conn, event, token).await? else {
            return Ok(ShrinkOutcome::NotLive);
        };
        if stored.user != user.as_str() {
            return Ok(ShrinkOutcome::Forbidden);
        }
        let reply: Vec<Value> = self
            .scripts
            .shrink
            .key(keys::hold(event, token))
            .key(keys::held(event))
            .key(keys::user(event, user.as_str()))
            .key(keys::pass_ended(event, stored.pass))
            .key(keys::seat(event, seat))
            .arg(token.to_string())
            .arg(user.as_str())
            .arg(seat)
            .arg("1")
            .invoke_async(&mut conn)
            .await
            .map_err(redis_error)?;
        let what: String = nth(&reply, 0)?;
        Ok(match what.as_str() {
            "kept" => ShrinkOutcome::Kept(hold_from(event, user, token, rest(&reply, 1))?),
            "emptied" => {
                let pass_ended = reply.len() > 1;
                if let (true, Some(ticket)) = (pass_ended, stored.pass) {
                    self.record_pass_ended(event, ticket).await;
                }
                ShrinkOutcome::Emptied { pass_ended }
            }
            "absent" => ShrinkOutcome::NotInHold,
            "other" => ShrinkOutcome::Forbidden,
            _ => ShrinkOutcome::NotLive,
        })
    }
}

/// The hold a script answered as `{created ms, expires ms, seats JSON}`.
fn hold_from(
    event: EventId,
    user: &UserId,
    token: Uuid,
    reply: &[Value],
) -> Result<Hold, StoreError> {
    let [created, expires, seats, ..] = reply else {
        return Err(StoreError::Other(
            "a hold script answered too little".into(),
        ));
    };
    let seats: Vec<ClaimedSeat> = decode_seats(&decode::<String>(seats)?)?;
    Ok(Hold {
        token,
        event_id: event,
        user_id: user.clone(),
        seats,
        created_at: millis(decode(created)?)?,
        expires_at: millis(decode(expires)?)?,
    })
}
