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
//! 5. The hold store decides, all or nothing, and is the only one that can grant:
//!    - postgres: `boxoffice_store::pg::holds` (its `claim` module: the claim is sent with
//!      the others waiting, and every rule of a claim is written once, in
//!      `boxoffice_claim`, the store crate's `sql/claim.sql`);
//!    - redis: `scripts/hold_acquire.lua`, one script that checks every seat, the
//!      event's start and the buyer's limit, then sets every seat.
//! 6. The store's answer teaches this instance's view (seats held or refused are known
//!    taken for a while); a changed layout makes the seats be quoted again; a hold made is
//!    published to every page of the event.

use std::sync::Arc;

use boxoffice_core::hold::{
    validate_basket, AcquireOutcome, ClaimedSeat, ExtendOutcome, Hold, PricedSeat, ReleaseOutcome,
};
use boxoffice_core::ids::{EventId, UserId};
use boxoffice_store::hold_store::HoldRequest;
use boxoffice_store::pg::events::HoldPolicy;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::live::{Answer, Ask, Change};
use crate::overload::{limited, Path};
use crate::queue::Admitted;
use crate::seat_map::RenderedSeatMap;
use crate::Services;
use crate::{Error, SeatRef};

/// How often a hold (or a growing) quotes its seats again from a newer seat map before giving up.
pub(crate) const MAX_LAYOUT_RELOADS: usize = 3;

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

/// The event's seat map and hold settings, cached.
pub(crate) async fn event_layout(
    state: &Services,
    event: EventId,
) -> Result<Arc<RenderedSeatMap>, Error> {
    state
        .seat_maps
        .get_any(&state.pool, event)
        .await?
        .ok_or(Error::EventNotFound)
}

/// The event's seat map as a buyer in `channel` sees it (a channel the event does not have
/// is no channel), cached.
pub(crate) async fn buyer_layout(
    state: &Services,
    event: EventId,
    channel: Option<&str>,
) -> Result<Arc<RenderedSeatMap>, Error> {
    let Some(channel) = crate::availability::channel_of(state, event, channel).await? else {
        return event_layout(state, event).await;
    };
    state
        .seat_maps
        .get_any_in(&state.pool, event, Some(channel))
        .await?
        .ok_or(Error::EventNotFound)
}

/// The event's hold settings, without rendering its seat map when none is cached.
pub(super) async fn event_policy(state: &Services, event: EventId) -> Result<HoldPolicy, Error> {
    state
        .seat_maps
        .policy(&state.pool, event)
        .await?
        .ok_or(Error::EventNotFound)
}

/// Seats with the labels of the event's seat map.
pub(crate) fn priced(map: &RenderedSeatMap, seats: &[ClaimedSeat]) -> Vec<PricedSeat> {
    seats
        .iter()
        .map(|s| PricedSeat {
            label: label(map, &s.seat_id),
            id: s.seat_id.clone(),
            ticket_type: s.ticket_type.clone(),
            price_cents: s.price_cents,
        })
        .collect()
}

pub(crate) fn label(map: &RenderedSeatMap, seat: &str) -> String {
    map.map
        .get(seat)
        .map(|m| m.label.clone())
        .unwrap_or_default()
}

pub(crate) fn labelled(map: &RenderedSeatMap, hold: Hold) -> LabelledHold {
    LabelledHold {
        seats: priced(map, &hold.seats),
        total_cents: hold.seats.iter().map(|s| s.price_cents).sum(),
        currency: map.policy.currency.clone().unwrap_or_default(),
        hold,
    }
}

/// What the seat map quotes for each seat of the basket: its ticket type and price, or
/// `None` if it is not on sale.
pub(crate) fn quotes(map: &RenderedSeatMap, basket: &[String]) -> Vec<Option<ClaimedSeat>> {
    basket
        .iter()
        .map(|id| {
            let seat = map.map.get(id)?;
            Some(ClaimedSeat {
                seat_id: id.clone(),
                ticket_type: seat.ticket_type.clone()?,
                price_cents: seat.price_cents?,
            })
        })
        .collect()
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
    let mut map = buyer_layout(state, event, channel).await?;
    let mut basket = validate_basket(seats, &map.map, map.policy.max_seats_per_user)?;
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
    let mut reloads = 0;
    let asked = taken.epoch(event);
    let confirmed = |seats: &[String]| match &asking {
        Some(asking) => asking.confirmed(seats, asked),
        None => taken.confirmed(event, seats, asked),
    };
    let outcome = limited(&state.overload, Path::Hold, async {
        loop {
            let outcome = acquire(state, event, user, admitted, &map, &basket).await?;
            match &outcome {
                AcquireOutcome::Unavailable(seats) => confirmed(&taken_in(&map, seats)),
                AcquireOutcome::Held(hold) => confirmed(&hold_seats(hold)),
                _ => {}
            }
            match outcome {
                // The allocations changed since this server cached the map: quote again.
                AcquireOutcome::LayoutChanged(version) if reloads < MAX_LAYOUT_RELOADS => {
                    reloads += 1;
                    (map, basket) = requote(state, event, &map, version, seats).await?;
                }
                outcome => break Ok(outcome),
            }
        }
    })
    .await?;
    settle(state, event, &map, outcome).await
}

/// Of the seats a hold was refused, those this instance may take as taken by someone:
/// not those allocated to a channel the buyer is not in, which are free to that
/// channel's buyers.
pub(crate) fn taken_in(map: &RenderedSeatMap, refused: &[String]) -> Vec<String> {
    refused
        .iter()
        .filter(|seat| !map.is_elsewhere(seat))
        .cloned()
        .collect()
}

/// The seat map of the allocations' `version` in the view of `map`'s channel, and `seats`
/// checked against it: to quote a basket again once the store says the allocations
/// changed.
pub(crate) async fn requote(
    state: &Services,
    event: EventId,
    map: &RenderedSeatMap,
    version: i64,
    seats: &[String],
) -> Result<(Arc<RenderedSeatMap>, Vec<String>), Error> {
    let map = state
        .seat_maps
        .get_in(&state.pool, event, map.channel.as_deref(), version)
        .await?
        .ok_or(Error::EventNotFound)?;
    let basket = validate_basket(seats, &map.map, map.policy.max_seats_per_user)?;
    Ok((map, basket))
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

/// Asks the hold store for `basket`, priced as `map` quotes it.
pub(super) async fn acquire(
    state: &Services,
    event: EventId,
    user: &UserId,
    admitted: Admitted,
    map: &RenderedSeatMap,
    basket: &[String],
) -> Result<AcquireOutcome, Error> {
    let began = std::time::Instant::now();
    let quotes = quotes(map, basket);
    let request = hold_request(state, (event, user, admitted), map, basket, &quotes);
    let outcome = state.holds.acquire(&request).await;
    let label = match &outcome {
        Ok(AcquireOutcome::Held(_)) => "granted",
        Ok(AcquireOutcome::LayoutChanged(_)) => "retried",
        Ok(_) => "refused",
        Err(_) => "error",
    };
    state.metrics.store_call(
        "boxoffice_hold_duration_seconds",
        state.holds.kind(),
        label,
        began.elapsed(),
    );
    Ok(outcome?)
}

/// What the hold store is asked, for `basket` of `buyer` (the event, the user and their
/// admission), quoted by `map`: for a new hold or a growing one.
pub(crate) fn hold_request<'a>(
    state: &Services,
    (event, user, admitted): (EventId, &'a UserId, Admitted),
    map: &'a RenderedSeatMap,
    basket: &'a [String],
    quotes: &'a [Option<ClaimedSeat>],
) -> HoldRequest<'a> {
    HoldRequest {
        event,
        user,
        seats: basket,
        quotes,
        layout_version: map.version,
        ttl_seconds: map.policy.hold_ttl_seconds,
        max_seats_per_user: map.policy.max_seats_per_user,
        holds_per_minute: state.rate_limits.holds.per_minute(),
        pass: admitted.pass(),
        channel: map.channel.as_deref(),
    }
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
        AcquireOutcome::LayoutChanged(_) => Err(Error::Unavailable {
            reason: "the event's allocations keep changing".into(),
            retry_after: std::time::Duration::from_secs(1),
        }),
    }
}

pub(super) fn seat_refs(map: &RenderedSeatMap, ids: Vec<String>) -> Vec<SeatRef> {
    ids.into_iter()
        .map(|id| SeatRef {
            event_id: None,
            label: label(map, &id),
            id,
        })
        .collect()
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
