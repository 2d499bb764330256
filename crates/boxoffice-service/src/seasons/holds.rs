//! Season holds: one basket held in every event a season (or a partial) covers at once,
//! all or nothing, read, extended and released whole; each event's seats under a token the
//! server derives for that event.

use std::collections::HashSet;

use crate::queue::Admitted;
use boxoffice_api::{BestAvailable, SeasonHoldBody, SeasonHoldView, SeatRef};
use boxoffice_core::availability::SeatStatus;
use boxoffice_core::best_available;
use boxoffice_core::hold::{validate_basket, PricedSeat};
use boxoffice_core::ids::{EventId, SeasonId, UserId};
use boxoffice_core::season::Season;
use boxoffice_core::validation::{SeatsByNumber, ValidationErrors};
use boxoffice_store::season_holds::{
    SeasonAcquire, SeasonEventHold, SeasonExtend, SeasonHoldRequest, SeasonRelease, SeasonSeatHeld,
};
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use uuid::Uuid;

use crate::live::Change;
use crate::overload::{limited, Path};
use crate::{availability, Error, Services};

use super::{covered, distinct_events, publish_all, seats_of, view};

/// Each event's token of a season hold: an HMAC of the season hold's token and the event,
/// under a key derived from the JWT secret, so every instance derives the same tokens and
/// no buyer can: a season hold's seats are reached only through the season, whole.
pub struct SeasonTokens {
    key: [u8; 32],
}

impl SeasonTokens {
    /// Tokens keyed by a key derived from `jwt_secret`.
    pub fn new(jwt_secret: &crate::Secret) -> Self {
        let mut mac = Hmac::<Sha256>::new_from_slice(jwt_secret.expose().as_bytes())
            .expect("HMAC takes a key of any length");
        mac.update(b"boxoffice.season-hold");
        Self {
            key: mac.finalize().into_bytes().into(),
        }
    }

    /// The season hold `token`'s token in `event`.
    pub fn in_event(&self, token: Uuid, event: EventId) -> Uuid {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("a 32-byte key");
        mac.update(token.as_bytes());
        mac.update(event.0.as_bytes());
        let digest = mac.finalize().into_bytes();
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&digest[..16]);
        uuid::Builder::from_random_bytes(bytes).into_uuid()
    }

    /// The season hold `token`'s token in each of `events`.
    pub(super) fn in_events(&self, token: Uuid, events: &[EventId]) -> Vec<(EventId, Uuid)> {
        events
            .iter()
            .map(|&event| (event, self.in_event(token, event)))
            .collect()
    }
}

/// How many times a best-available season hold chooses again when a chosen seat was taken
/// meanwhile.
const MAX_CHOICES: usize = 3;

/// Holds `body.seats` (or the best seats free in every event, for `body.best_available`)
/// for `user` in every event the season (or the partial) covers, under one new token, all
/// or nothing, under the server's limit of holds. Where a covered event's waiting room is
/// on, one of `passes` must be the buyer's pass of that event.
pub async fn hold_seats(
    state: &Services,
    id: SeasonId,
    user: &UserId,
    body: &SeasonHoldBody,
    passes: &[&str],
) -> Result<SeasonHoldView, Error> {
    let store = state.holds.season_holds();
    let season = view(state, id).await?;
    let partial = body.partial.as_deref();
    let event_ids = covered(&season, partial)?;
    let mut events = Vec::with_capacity(event_ids.len());
    let mut ttl = u32::MAX;
    let mut most = u32::MAX;
    let mut unadmitted = Vec::new();
    // Each event's admission and rules, read for all the events at once.
    let reads = event_ids.iter().map(|&event| async move {
        let admission = admitted(state, event, user, passes).await;
        let policy = crate::layouts::event_policy(state, event).await;
        (event, admission, policy)
    });
    for (event, admission, policy) in futures::future::join_all(reads).await {
        let admitted = match admission {
            Ok(admitted) => admitted,
            Err(Error::QueueRequired(_)) => {
                unadmitted.push(event);
                continue;
            }
            Err(e) => return Err(e),
        };
        let policy = policy?;
        ttl = ttl.min(policy.hold_ttl_seconds);
        most = most.min(policy.max_seats_per_user);
        events.push(SeasonEventHold {
            event,
            token: Uuid::nil(),
            max_seats_per_user: policy.max_seats_per_user,
            pass: admitted.pass(),
        });
    }
    if !unadmitted.is_empty() {
        return Err(Error::PassesRequired(unadmitted));
    }
    // A season hold is a hold in every event it covers: it counts against the buyer's
    // hold rate in each, as any hold there does (past it, 429).
    for &event in &event_ids {
        crate::holds::count_hold(state, event, user).await?;
    }
    let (given, best) = match (&body.seats, &body.best_available) {
        (Some(seats), None) => (
            Some(checked_seats(state, &season, seats, most).await?),
            None,
        ),
        (None, Some(best)) => (None, Some(checked_ask(&season, best, most)?)),
        _ => {
            return Err(Error::invalid(
                "seats",
                "give either seats or best_available",
            ))
        }
    };
    let mut taken = Vec::new();
    for _ in 0..MAX_CHOICES {
        let (seats, adjacent) = match (&given, best) {
            (Some(seats), _) => (seats.clone(), None),
            (None, Some(ask)) => match choose_best(state, &season, partial, ask).await? {
                Some((seats, adjacent)) => (seats, Some(adjacent)),
                None => return Err(Error::SeatsUnavailable(Vec::new())),
            },
            (None, None) => unreachable!("one of the two was given"),
        };
        let token = Uuid::new_v4();
        for hold in &mut events {
            hold.token = state.season_tokens.in_event(token, hold.event);
        }
        let request = SeasonHoldRequest {
            season: id,
            partial,
            user,
            events: &events,
            seats: &seats,
            ttl_seconds: ttl,
            holds_per_minute: state.rate_limits.holds.per_minute(),
        };
        let acquired = limited(&state.overload, Path::Hold, async {
            Ok(store.acquire_season(&request).await?)
        })
        .await?;
        match acquired {
            SeasonAcquire::Held(held) => {
                publish(state, &held).await;
                let view = hold_view(state, &season, token, partial, event_ids, &held).await?;
                return Ok(SeasonHoldView { adjacent, ..view });
            }
            SeasonAcquire::Started(_) => return Err(Error::EventStarted),
            SeasonAcquire::LimitExceeded(_) => return Err(Error::HoldLimitExceeded(most)),
            SeasonAcquire::PassEnded(events) => return Err(Error::PassesEnded(events)),
            SeasonAcquire::RateLimited(wait) => return Err(Error::RateLimited(wait)),
            SeasonAcquire::Unavailable(refused) => {
                let map = availability::layout(state, event_ids[0], None, 0).await?;
                taken = refused
                    .into_iter()
                    .map(|(event, id)| SeatRef {
                        label: crate::layouts::label(&map, &id),
                        id,
                        event_id: Some(event),
                    })
                    .collect();
                // Seats named by the buyer are not chosen again; best available is, from
                // what is free now.
                if given.is_some() {
                    break;
                }
            }
        }
    }
    Err(Error::SeatsUnavailable(taken))
}

/// A best-available ask checked against the season and the smallest per-buyer limit.
fn checked_ask<'a>(
    season: &Season,
    ask: &'a BestAvailable,
    most: u32,
) -> Result<best_available::Ask<'a>, Error> {
    let mut errors = ValidationErrors::default();
    let sale = SeatsByNumber {
        most,
        most_from: "the smallest max_seats_per_user of the events",
        ticket_types: season
            .ticket_types
            .iter()
            .map(|t| t.code.as_str())
            .collect(),
        sold_by: "season",
    };
    errors.check_seats_by_number(
        "best_available.",
        "ask for",
        (ask.quantity, ask.ticket_type.as_deref()),
        &sale,
    );
    errors.into_result(()).map_err(Error::Invalid)?;
    Ok(best_available::Ask {
        quantity: ask.quantity as usize,
        ticket_type: ask.ticket_type.as_deref(),
        section_order: &[],
        accessible: ask.accessible,
    })
}

/// The best seats free in every event covered, by an event's rules (the venue's order of
/// sections), sorted; and whether they are side by side. `None` when too few are free.
async fn choose_best(
    state: &Services,
    season: &Season,
    partial: Option<&str>,
    ask: best_available::Ask<'_>,
) -> Result<Option<(Vec<String>, bool)>, Error> {
    let (view, _) = seats_of(state, season, partial).await?;
    let mut sections: Vec<String> = Vec::new();
    for s in &view.seats {
        if !sections.contains(&s.seat.section) {
            sections.push(s.seat.section.clone());
        }
    }
    let slots: Vec<best_available::Slot<'_>> = view
        .seats
        .iter()
        .map(|s| best_available::Slot {
            section: &s.seat.section,
            row: &s.seat.row,
            ticket_type: s.seat.ticket_type.as_deref(),
            free: s.status == SeatStatus::Available,
            accessible: s.seat.attributes.accessible,
            companion: s.seat.attributes.companion,
            distance: 0,
        })
        .collect();
    let ask = best_available::Ask {
        section_order: &sections,
        ..ask
    };
    Ok(best_available::choose(&slots, &ask).map(|choice| {
        let mut ids: Vec<String> = choice
            .seats
            .iter()
            .map(|&i| view.seats[i].seat.id.clone())
            .collect();
        ids.sort();
        (ids, choice.adjacent)
    }))
}

/// Each event's seats of `held` shown held to its followers.
async fn publish(state: &Services, held: &[SeasonSeatHeld]) {
    let expires_at = held[0].expires_at;
    let changes = distinct_events(held.iter().map(|s| s.event))
        .into_iter()
        .map(|event| {
            let seats = held.iter().filter(|s| s.event == event);
            (
                event,
                Change::held(seats.map(|s| s.seat_id.as_str()), expires_at),
            )
        })
        .collect();
    publish_all(state, changes).await;
}

/// The buyer admitted to `event` with one of `passes` where its waiting room is on
/// (without one where it is off); refuses a buyer without one.
async fn admitted(
    state: &Services,
    event: EventId,
    user: &UserId,
    passes: &[&str],
) -> Result<Admitted, Error> {
    let mut refusal = match crate::queue::admit(state, event, user, None).await {
        Ok(pass) => return Ok(pass),
        Err(e) => e,
    };
    for pass in passes {
        match crate::queue::admit(state, event, user, Some(pass)).await {
            Ok(pass) => return Ok(pass),
            Err(e) => refusal = e,
        }
    }
    Err(refusal)
}

/// The basket checked against the venue and the smallest per-buyer limit, sorted.
async fn checked_seats(
    state: &Services,
    season: &Season,
    seats: &[String],
    most: u32,
) -> Result<Vec<String>, Error> {
    let map = availability::layout(state, season.event_ids[0], None, 0).await?;
    Ok(validate_basket(seats, &map.map, most)?)
}

/// The hold as answered: its seats (once each, with their labels) and total.
async fn hold_view(
    state: &Services,
    season: &Season,
    token: Uuid,
    partial: Option<&str>,
    event_ids: Vec<EventId>,
    held: &[SeasonSeatHeld],
) -> Result<SeasonHoldView, Error> {
    let map = availability::layout(state, season.event_ids[0], None, 0).await?;
    let first = held.first().map(|s| s.event);
    let seats: Vec<PricedSeat> = held
        .iter()
        .filter(|s| Some(s.event) == first)
        .map(|s| PricedSeat {
            id: s.seat_id.clone(),
            label: crate::layouts::label(&map, &s.seat_id),
            ticket_type: s.ticket_type.clone(),
            price_cents: s.price_cents,
        })
        .collect();
    let currency = season
        .ticket_types
        .first()
        .map(|t| t.currency.clone())
        .unwrap_or_default();
    Ok(SeasonHoldView {
        hold_token: token,
        season_id: season.id,
        partial: partial.map(str::to_owned),
        event_ids,
        total_cents: seats.iter().map(|s| s.price_cents).sum(),
        seats,
        currency,
        expires_at: held.iter().map(|s| s.expires_at).min().unwrap_or_default(),
        adjacent: None,
    })
}

/// The live season hold `token`, if it is `user`'s.
pub async fn get_hold(
    state: &Services,
    id: SeasonId,
    token: Uuid,
    user: &UserId,
) -> Result<SeasonHoldView, Error> {
    let store = state.holds.season_holds();
    let season = view(state, id).await?;
    let events = state.season_tokens.in_events(token, &season.event_ids);
    let rows = store.season_hold(&events).await?;
    if rows.is_empty() {
        return Err(Error::HoldNotFound);
    }
    if rows.iter().any(|(owner, _)| owner != user) {
        return Err(Error::Forbidden("this hold belongs to another user"));
    }
    let held: Vec<SeasonSeatHeld> = rows.into_iter().map(|(_, seat)| seat).collect();
    // The events held in, in the season's order; a partial's if they are exactly its.
    let present: HashSet<EventId> = held.iter().map(|s| s.event).collect();
    let event_ids: Vec<EventId> = season
        .event_ids
        .iter()
        .copied()
        .filter(|e| present.contains(e))
        .collect();
    let partial = season
        .partials
        .iter()
        .find(|p| {
            p.event_ids.len() == present.len()
                && present.len() < season.event_ids.len()
                && p.event_ids.iter().all(|e| present.contains(e))
        })
        .map(|p| p.code.clone());
    hold_view(state, &season, token, partial.as_deref(), event_ids, &held).await
}

/// Frees the seats the season hold `token` still owns in every event (compare-and-delete).
pub async fn release_hold(
    state: &Services,
    id: SeasonId,
    token: Uuid,
    user: &UserId,
) -> Result<(), Error> {
    let store = state.holds.season_holds();
    let season = view(state, id).await?;
    let events = state.season_tokens.in_events(token, &season.event_ids);
    match store.release_season(&events, user).await? {
        SeasonRelease::Released(freed) => {
            let changes = freed
                .into_iter()
                .map(|(event, seats)| {
                    let seats = seats.iter().map(String::as_str);
                    (event, Change::now(seats, SeatStatus::Available))
                })
                .collect();
            publish_all(state, changes).await;
            Ok(())
        }
        SeasonRelease::NotLive => Err(Error::HoldNotFound),
        SeasonRelease::Forbidden => Err(Error::Forbidden("this hold belongs to another user")),
    }
}

/// Extends the live season hold `token` of `user` in every event it holds seats in, at
/// once: to now + the shortest `hold_ttl_seconds` of those events, never past its creation
/// + their shortest `max_hold_seconds`.
pub async fn extend_hold(
    state: &Services,
    id: SeasonId,
    token: Uuid,
    user: &UserId,
) -> Result<DateTime<Utc>, Error> {
    let store = state.holds.season_holds();
    let season = view(state, id).await?;
    let events = state.season_tokens.in_events(token, &season.event_ids);
    let rows = store.season_hold(&events).await?;
    let present: HashSet<EventId> = rows.iter().map(|(_, s)| s.event).collect();
    if present.is_empty() {
        return Err(Error::HoldNotLive);
    }
    let (mut ttl, mut most) = (u32::MAX, u32::MAX);
    for &event in &present {
        let policy = crate::layouts::event_policy(state, event).await?;
        ttl = ttl.min(policy.hold_ttl_seconds);
        most = most.min(policy.max_hold_seconds);
    }
    let held: Vec<(EventId, Uuid)> = events
        .into_iter()
        .filter(|(e, _)| present.contains(e))
        .collect();
    let extend = store.extend_season(&held, user, ttl, most);
    match limited(&state.overload, Path::Hold, async { Ok(extend.await?) }).await? {
        SeasonExtend::Extended { expires_at, seats } => {
            let changes = seats
                .into_iter()
                .map(|(event, seats)| {
                    let seats = seats.iter().map(String::as_str);
                    (event, Change::held(seats, expires_at))
                })
                .collect();
            publish_all(state, changes).await;
            Ok(expires_at)
        }
        SeasonExtend::NotLive => Err(Error::HoldNotLive),
        SeasonExtend::Forbidden => Err(Error::Forbidden("this hold belongs to another user")),
    }
}
