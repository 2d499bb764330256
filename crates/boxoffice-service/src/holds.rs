//! Holds: a basket held all or nothing (quoted again from a newer seat map when the
//! event's allocations changed meanwhile), read, extended and released.
//!
//! How a hold is decided, in the order it happens ([`create_hold`]):
//!
//! 0. While the event's waiting room is on, the buyer's pass is checked
//!    ([`crate::queue::admit`]); without a valid one, 403. What it answers
//!    ([`crate::queue::Admitted`]) is what a store request is built from, so no flow that
//!    makes or grows a hold, or books places, can reach a store without it.
//! 1. The buyer's hold rate is counted ([`count_hold`]); past it, 429.
//! 2. The basket is checked against the event's seat map (unknown, repeated or too many
//!    seats are refused before any store is asked).
//! 3. Seats this instance knows taken, from the change feed and the store's own recent
//!    answers, are refused here ([`crate::live::Taken`], the only memory of recent
//!    refusals); a request for seats already on their way to the store from this instance
//!    waits for that answer once, and is refused if that answer says its seats are taken.
//! 4. The store's part passes the server's adaptive limit ([`crate::overload::limited`]):
//!    past it, 503 with a turn, and nothing answered without a store ever counts against
//!    it.
//! 5. The hold store decides, all or nothing, and is the only one that can grant; it is
//!    asked the one way every flow asks it (`crate::asking`: the request built for the
//!    admitted buyer, the seats quoted again from a newer map when the allocations
//!    changed):
//!    - postgres: `boxoffice_store::pg::holds` (its `claim` module: the claim is sent with
//!      the others waiting, and every rule of a claim is written once, in
//!      `boxoffice_claim`, the store crate's `sql/claim.sql`);
//!    - redis: `scripts/hold_acquire.lua`, one script that checks every seat, the
//!      event's start and the buyer's limit, then sets every seat.
//! 6. The store's answer teaches this instance's view (seats held or refused are known
//!    taken for a while); a hold made is published to every page of the event.

use boxoffice_core::hold::{AcquireOutcome, ExtendOutcome, Hold, PricedSeat, ReleaseOutcome};
use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::asking::{kept_changing, For, Reply};
use crate::layouts::{buyer_layout, event_layout, event_policy, priced, seat_refs, taken_in};
use crate::live::{Answer, Ask, Change};
use crate::overload::{limited, Path};
use crate::seat_map::RenderedSeatMap;
use crate::Error;
use crate::Services;

/// A live hold with its seats' labels and its total.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelledHold {
    /// The hold.
    pub hold: Hold,
    /// Its seats with labels and the prices quoted.
    pub seats: Vec<PricedSeat>,
    /// Sum of the seat prices.
    pub total_cents: i64,
    /// The event's currency.
    pub currency: String,
}

pub(crate) fn labelled(map: &RenderedSeatMap, hold: Hold) -> LabelledHold {
    LabelledHold {
        seats: priced(map, &hold.seats),
        total_cents: hold.seats.iter().map(|s| s.price_cents).sum(),
        currency: map.policy.currency.clone().unwrap_or_default(),
        hold,
    }
}

/// Holds every seat of `seats` for `user` under one new token, or none.
///
/// The basket is checked against the event's seat map first (unknown, repeated or too
/// many seats are refused before any store is asked). The user's hold rate is counted
/// here (see [`count_hold`]). Seats this instance knows are taken are refused without
/// the store; while another request for some of the same seats is on its way to the
/// store from this instance, this one waits for its answer first (once). Should the
/// event's allocations have changed since this server cached its map, the seats are
/// quoted again from the new one. A buyer in a sales channel (`channel`, their token's)
/// may hold that channel's seats too.
pub async fn create_hold(
    state: &Services,
    event: EventId,
    user: &UserId,
    channel: Option<&str>,
    pass: Option<&str>,
    seats: &[String],
) -> Result<LabelledHold, Error> {
    let admitted = crate::queue::admit(state, event, user, pass).await?;
    count_hold(state, event, user).await?;
    let who = For::Buyer(admitted);
    let map = buyer_layout(state, event, channel).await?;
    let basket = who.basket(&map, seats)?;
    let taken = state.live.taken();
    // Asked with others for the same seats: wait for the first of them to be answered
    // (once), which may settle this one too. (Nothing to wait for if this instance never
    // refuses by itself.)
    let mut waited = false;
    let asking = if taken.refuses() {
        loop {
            refuse_known_taken(state, event, &map, &basket)?;
            match taken.ask(event, &basket) {
                Ask::Go(asking) => break Some(asking),
                Ask::Wait(first) if !waited => {
                    waited = true;
                    if let Some(answer) = crate::live::answered(first).await {
                        refuse_answered(state, event, &map, &basket, &answer)?;
                    }
                }
                Ask::Wait(_) => break None,
            }
        }
    } else {
        None
    };
    let asked = taken.epoch(event);
    let confirmed = &|seats: &[String]| match &asking {
        Some(asking) => asking.confirmed(seats, asked),
        None => taken.confirmed(event, seats, asked),
    };
    let quoted = limited(
        &state.overload,
        Path::Hold,
        crate::asking::quoted(
            state,
            (event, who),
            seats,
            (map, basket),
            |map, basket| async move {
                let outcome =
                    crate::asking::acquire(state, (event, user, who), &map, &basket).await?;
                match &outcome {
                    AcquireOutcome::Unavailable(seats) => confirmed(&taken_in(&map, seats)),
                    AcquireOutcome::Held(hold) => confirmed(&hold_seats(hold)),
                    _ => {}
                }
                Ok(match outcome {
                    // The allocations changed since this server cached the map: quote again.
                    AcquireOutcome::LayoutChanged(version) => Reply::LayoutChanged(version),
                    outcome => Reply::Done(outcome),
                })
            },
        ),
    )
    .await?;
    let outcome = quoted.answer.ok_or_else(kept_changing)?;
    settle(state, event, &quoted.map, outcome).await
}

fn hold_seats(hold: &Hold) -> Vec<String> {
    hold.seats.iter().map(|s| s.seat_id.clone()).collect()
}

/// Refuses the basket without asking the hold store when this instance knows some of its
/// seats are taken (see [`crate::live::Taken`]): on a hot seat, every buyer but the one
/// who got it is answered here (having counted against the buyer's hold rate, see
/// [`count_hold`]). Before the event starts only: from then on the store answers.
fn refuse_known_taken(
    state: &Services,
    event: EventId,
    map: &RenderedSeatMap,
    basket: &[String],
) -> Result<(), Error> {
    if map.policy.starts_at <= Utc::now() {
        return Ok(());
    }
    let taken = state.live.taken().known_taken(event, basket);
    if taken.is_empty() {
        return Ok(());
    }
    state.live.taken().answered_here();
    Err(Error::SeatsUnavailable(seat_refs(map, taken)))
}

/// Refuses the basket without asking the hold store when the store's answer to the ask
/// this request waited for (`answer`) says some of its seats are taken, and nothing of
/// the event was freed since that ask began (see [`crate::live::Taken::settled`]): the
/// answer this request would have had, had it asked beside that one. Before the event
/// starts only, as [`refuse_known_taken`].
fn refuse_answered(
    state: &Services,
    event: EventId,
    map: &RenderedSeatMap,
    basket: &[String],
    answer: &Answer,
) -> Result<(), Error> {
    if map.policy.starts_at <= Utc::now() {
        return Ok(());
    }
    let taken = state.live.taken().settled(event, answer, basket);
    if taken.is_empty() {
        return Ok(());
    }
    state.live.taken().answered_here();
    Err(Error::SeatsUnavailable(seat_refs(map, taken)))
}

/// Counts a hold against the user's hold rate in the event.
///
/// A hold store that counts the rate in the hold's own round trip counts, across every
/// instance, the holds it is asked for; this instance then counts on its own every hold
/// it is asked for, so that those it refuses without the store (seats known taken) are
/// limited too. Otherwise the count is kept here, in Redis when configured.
pub(super) async fn count_hold(
    state: &Services,
    event: EventId,
    user: &UserId,
) -> Result<(), Error> {
    let limits = &state.rate_limits;
    let key = format!("{event}:{user}");
    if state.holds.limits_hold_rate() {
        limits.check_here(&limits.holds, &key)
    } else {
        limits.check(&limits.holds, &key).await
    }
    .map_err(Error::RateLimited)
}

/// The answer to an acquisition that is not retried: a new hold is published to the live
/// streams; anything else is the error it means.
pub(super) async fn settle(
    state: &Services,
    event: EventId,
    map: &RenderedSeatMap,
    outcome: AcquireOutcome,
) -> Result<LabelledHold, Error> {
    match outcome {
        AcquireOutcome::Held(hold) => {
            let seats = hold.seats.iter().map(|s| s.seat_id.as_str());
            let change = Change::held(seats, hold.expires_at);
            state.live.publish(event, change).await;
            Ok(labelled(map, hold))
        }
        AcquireOutcome::Unavailable(ids) => Err(Error::SeatsUnavailable(seat_refs(map, ids))),
        AcquireOutcome::EventStarted => Err(Error::EventStarted),
        AcquireOutcome::PassEnded => Err(crate::queue::pass_ended()),
        AcquireOutcome::LimitExceeded => {
            Err(Error::HoldLimitExceeded(map.policy.max_seats_per_user))
        }
        AcquireOutcome::RateLimited(wait) => {
            state.rate_limits.holds.refused();
            Err(Error::RateLimited(wait))
        }
        AcquireOutcome::LayoutChanged(_) => Err(kept_changing()),
    }
}

/// The live hold `token`, if it is `user`'s.
pub async fn get_hold(
    state: &Services,
    event: EventId,
    token: Option<Uuid>,
    user: &UserId,
) -> Result<LabelledHold, Error> {
    let map = event_layout(state, event).await?;
    let token = token.ok_or(Error::HoldNotFound)?;
    let hold = state
        .holds
        .get(event, token)
        .await?
        .ok_or(Error::HoldNotFound)?;
    if &hold.user_id != user {
        return Err(Error::Forbidden("this hold belongs to another user"));
    }
    Ok(labelled(&map, hold))
}

/// Extends the live hold `token` of `user` by the event's hold TTL, capped at its creation
/// plus `max_hold_seconds`; answers the new expiry.
pub async fn extend_hold(
    state: &Services,
    event: EventId,
    token: Option<Uuid>,
    user: &UserId,
) -> Result<DateTime<Utc>, Error> {
    let policy = event_policy(state, event).await?;
    let token = token.ok_or(Error::HoldNotLive)?;
    let extend = state.holds.extend(
        event,
        token,
        user,
        policy.hold_ttl_seconds,
        policy.max_hold_seconds,
    );
    match limited(&state.overload, Path::Hold, async { Ok(extend.await?) }).await? {
        ExtendOutcome::Extended { expires_at, seats } => {
            let change = Change::held(seats.iter().map(String::as_str), expires_at);
            state.live.publish(event, change).await;
            Ok(expires_at)
        }
        ExtendOutcome::NotLive => Err(Error::HoldNotLive),
        ExtendOutcome::Forbidden => Err(Error::Forbidden("this hold belongs to another user")),
    }
}

/// Frees the seats `token` still owns (compare-and-delete). If those were the buyer's last,
/// their waiting-room pass ends.
pub async fn release_hold(
    state: &Services,
    event: EventId,
    token: Option<Uuid>,
    user: &UserId,
) -> Result<(), Error> {
    event_policy(state, event).await?;
    let token = token.ok_or(Error::HoldNotFound)?;
    match state.holds.release(event, token, user).await? {
        ReleaseOutcome::Released { seats, pass_ended } => {
            let change = crate::freed::change(state, event, seats.iter().map(String::as_str)).await;
            state.live.publish(event, change).await;
            if pass_ended {
                crate::queue::done(state, event, user).await;
            }
            Ok(())
        }
        ReleaseOutcome::NotLive => Err(Error::HoldNotFound),
        ReleaseOutcome::Forbidden => Err(Error::Forbidden("this hold belongs to another user")),
    }
}

/// What the API answers for it.
impl From<LabelledHold> for boxoffice_api::HoldView {
    fn from(h: LabelledHold) -> Self {
        Self {
            hold_token: h.hold.token,
            event_id: h.hold.event_id,
            seats: h.seats,
            total_cents: h.total_cents,
            currency: h.currency,
            expires_at: h.hold.expires_at,
            adjacent: None,
        }
    }
}
