//! Seasons as an organizer sets them up (events of one venue sold together, the same seat
//! for each), and a season's seats as buyers see them: a seat is free for the season only
//! where the season sells it and no event it covers has it sold or held.

use std::collections::{HashMap, HashSet};

use boxoffice_api::{
    BestAvailable, ReleasedNight, SeasonHoldBody, SeasonHoldView, SeasonOrderList, SeasonOrderView,
    SeasonSales, SeasonSalesLine, SeasonSeatView, SeasonSeats, SeatRef,
};
use boxoffice_core::availability::SeatStatus;
use boxoffice_core::best_available;
use boxoffice_core::hold::{validate_basket, ClaimedSeat, PricedSeat};
use boxoffice_core::ids::{EventId, SeasonId, UserId};
use boxoffice_core::season::{Season, SeasonOrder, SeasonSpec};
use boxoffice_core::validation::ValidationErrors;
use boxoffice_store::pg::seasons;
use boxoffice_store::pg::{events, venues};
use boxoffice_store::sales::{self, seasons::SeasonPurchase};
use boxoffice_store::season_holds::{
    SeasonAcquire, SeasonEventHold, SeasonExtend, SeasonHoldRequest, SeasonHolds, SeasonRelease,
    SeasonSeatHeld,
};
use boxoffice_store::StoreError;
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use uuid::Uuid;

use crate::live::Change;
use crate::overload::{limited, Path};
use crate::{availability, Error, Services};

/// Creates a season from `spec`, checked against its events and their venue; answers its
/// id.
pub async fn create(state: &Services, spec: SeasonSpec) -> Result<SeasonId, Error> {
    let events = seasons::season_events(&state.pool, &spec.event_ids).await?;
    let venue_id = spec
        .event_ids
        .iter()
        .find_map(|id| events.get(id))
        .map(|e| e.venue_id);
    let layout = match venue_id {
        Some(id) => venues::get_venue(&state.pool, id).await?,
        None => None,
    };
    let venue = venue_id.zip(layout.as_ref());
    let season = spec.validate(&events, venue)?;
    let id = SeasonId::new();
    match seasons::insert_season(&state.pool, id, &season).await {
        Ok(()) => Ok(id),
        Err(e) if seasons::is_event_in_another_season(&e) => Err(Error::invalid(
            "event_ids",
            "an event was put in another season meanwhile",
        )),
        Err(e) => Err(e.into()),
    }
}

/// Every season, newest first.
pub async fn list(state: &Services) -> Result<Vec<Season>, Error> {
    Ok(seasons::list_seasons(&state.pool).await?)
}

/// One season.
pub async fn view(state: &Services, id: SeasonId) -> Result<Season, Error> {
    seasons::get_season(&state.pool, id)
        .await?
        .ok_or(Error::SeasonNotFound)
}

/// The events a season (or one of its partials) covers.
fn covered(season: &Season, partial: Option<&str>) -> Result<Vec<EventId>, Error> {
    match partial {
        None => Ok(season.event_ids.clone()),
        Some(code) => season
            .partials
            .iter()
            .find(|p| p.code == code)
            .map(|p| p.event_ids.clone())
            .ok_or(Error::PartialNotFound),
    }
}

/// The season's seats (of one partial, if asked) with the season's ticket type and price
/// and their status across the events covered; and whether the hold store could not be
/// asked (held seats then read as free).
pub async fn seats(
    state: &Services,
    id: SeasonId,
    partial: Option<&str>,
) -> Result<(SeasonSeats, bool), Error> {
    let season = view(state, id).await?;
    let event_ids = covered(&season, partial)?;
    let allocations = seasons::season_allocations(&state.pool, id).await?;
    let reads = event_ids.iter().map(|&event| taken_in(state, event));
    let taken = futures::future::try_join_all(reads).await?;
    let holds_unknown = taken.iter().any(|t| t.holds_unknown);
    let first = *season.event_ids.first().ok_or(Error::SeasonNotFound)?;
    let map = availability::layout(state, first, None, 0).await?;
    let prices: HashMap<&str, i64> = season
        .ticket_types
        .iter()
        .map(|t| (t.code.as_str(), t.price_cents))
        .collect();
    let partial_prices = partial
        .and_then(|code| season.partials.iter().find(|p| p.code == code))
        .map(|p| &p.prices);
    let seats = map
        .map
        .seats()
        .iter()
        .map(|seat| {
            let ticket_type = allocations.get(&seat.id);
            let price = ticket_type.map(|code| {
                partial_prices
                    .and_then(|prices| prices.get(code))
                    .copied()
                    .unwrap_or_else(|| prices.get(code.as_str()).copied().unwrap_or_default())
            });
            let status = if taken.iter().any(|t| t.sold.contains(seat.id.as_str())) {
                SeatStatus::Sold
            } else if taken.iter().any(|t| t.held.contains(seat.id.as_str())) {
                SeatStatus::Held
            } else if ticket_type.is_some() {
                SeatStatus::Available
            } else {
                SeatStatus::NotForSale
            };
            let mut seat = seat.clone();
            seat.ticket_type = ticket_type.cloned();
            seat.price_cents = price;
            SeasonSeatView { seat, status }
        })
        .collect();
    let answer = SeasonSeats {
        season_id: id,
        partial: partial.map(str::to_owned),
        event_ids,
        seats,
    };
    Ok((answer, holds_unknown))
}

/// The seats sold and held in one event.
struct Taken {
    sold: HashSet<String>,
    held: HashSet<String>,
    holds_unknown: bool,
}

async fn taken_in(state: &Services, event: EventId) -> Result<Taken, Error> {
    let (event_state, held) = tokio::join!(
        events::event_state(&state.pool, event),
        state.holds.held_seats(event)
    );
    let sold = event_state?.ok_or(Error::EventNotFound)?.sold;
    let (held, holds_unknown) = match held {
        Ok(held) => (held.into_iter().map(|h| h.seat_id).collect(), false),
        Err(StoreError::Unavailable { reason, .. }) => {
            tracing::warn!(%event, %reason, "hold store unavailable; season seats without holds");
            (HashSet::new(), true)
        }
        Err(e) => return Err(e.into()),
    };
    Ok(Taken {
        sold: sold.into_iter().collect(),
        held,
        holds_unknown,
    })
}

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
    fn in_events(&self, token: Uuid, events: &[EventId]) -> Vec<(EventId, Uuid)> {
        events
            .iter()
            .map(|&event| (event, self.in_event(token, event)))
            .collect()
    }
}

/// The store's season holds; a store without them cannot hold a season.
fn season_holds(state: &Services) -> Result<&dyn SeasonHolds, Error> {
    state.holds.season_holds().ok_or(Error::NotImplemented(
        "season holds need the postgres hold store (BOXOFFICE_HOLD_STORE=postgres) in this version",
    ))
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
    let store = season_holds(state)?;
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
        let policy = crate::holds::event_policy(state, event).await;
        (event, admission, policy)
    });
    for (event, admission, policy) in futures::future::join_all(reads).await {
        match admission {
            Ok(()) => {}
            Err(Error::QueueRequired(_)) => unadmitted.push(event),
            Err(e) => return Err(e),
        }
        let policy = policy?;
        ttl = ttl.min(policy.hold_ttl_seconds);
        most = most.min(policy.max_seats_per_user);
        events.push(SeasonEventHold {
            event,
            token: Uuid::nil(),
            max_seats_per_user: policy.max_seats_per_user,
        });
    }
    if !unadmitted.is_empty() {
        return Err(Error::PassesRequired(unadmitted));
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
            (None, Some(ask)) => match choose_best(state, id, partial, ask).await? {
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
            SeasonAcquire::Unavailable(refused) => {
                let map = availability::layout(state, event_ids[0], None, 0).await?;
                taken = refused
                    .into_iter()
                    .map(|(event, id)| SeatRef {
                        label: crate::holds::label(&map, &id),
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
    errors.check(
        (1..=most).contains(&ask.quantity),
        "best_available.quantity",
        format!("ask for 1 to {most} seats (the smallest max_seats_per_user of the events)"),
    );
    if let Some(code) = &ask.ticket_type {
        errors.check(
            season.ticket_types.iter().any(|t| &t.code == code),
            "best_available.ticket_type",
            format!("the season has no ticket type {code:?}"),
        );
    }
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
    id: SeasonId,
    partial: Option<&str>,
    ask: best_available::Ask<'_>,
) -> Result<Option<(Vec<String>, bool)>, Error> {
    let (view, _) = seats(state, id, partial).await?;
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

/// Publishes a change in each of several events: counted in this instance's view at once,
/// then sent to the bus together rather than one event after another.
async fn publish_all(state: &Services, changes: Vec<(EventId, Change)>) {
    for (event, change) in &changes {
        state.live.apply_here(*event, change);
    }
    let sends = changes
        .into_iter()
        .map(|(event, change)| state.live.publish(event, change));
    futures::future::join_all(sends).await;
}

fn distinct_events(events: impl Iterator<Item = EventId>) -> Vec<EventId> {
    let mut distinct: Vec<EventId> = Vec::new();
    for event in events {
        if !distinct.contains(&event) {
            distinct.push(event);
        }
    }
    distinct
}

/// Refuses a buyer without a pass of theirs for `event`, where its waiting room is on.
async fn admitted(
    state: &Services,
    event: EventId,
    user: &UserId,
    passes: &[&str],
) -> Result<(), Error> {
    let mut refusal = match crate::queue::admit(state, event, user, None).await {
        Ok(_) => return Ok(()),
        Err(e) => e,
    };
    for pass in passes {
        match crate::queue::admit(state, event, user, Some(pass)).await {
            Ok(_) => return Ok(()),
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
            label: crate::holds::label(&map, &s.seat_id),
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
    let store = season_holds(state)?;
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
    let store = season_holds(state)?;
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

/// What a season checkout came to: the order, and whether it was made now (else it was
/// made before from the same hold).
pub struct SeasonCheckout {
    /// The order.
    pub order: SeasonOrderView,
    /// Made now (201) rather than found (200).
    pub created: bool,
}

/// Buys `user`'s live season hold `token`: its seats are sold in every event it holds
/// them in, in one transaction, paid at once. The same token again finds the same order.
pub async fn checkout(
    state: &Services,
    id: SeasonId,
    token: Uuid,
    user: &UserId,
) -> Result<SeasonCheckout, Error> {
    let store = season_holds(state)?;
    let season = view(state, id).await?;
    let events = state.season_tokens.in_events(token, &season.event_ids);
    let currency = season
        .ticket_types
        .first()
        .map(|t| t.currency.clone())
        .unwrap_or_default();
    let purchase = SeasonPurchase {
        season: id,
        token,
        events: &events,
        user,
        currency: &currency,
    };
    let outcome = limited(&state.overload, Path::Checkout, async {
        Ok(sales::seasons::checkout(&state.pool, store, purchase).await?)
    })
    .await?;
    let (order, created) = match outcome {
        sales::seasons::SeasonCheckout::Created(order) => (order, true),
        sales::seasons::SeasonCheckout::Existing(order) => (order, false),
        sales::seasons::SeasonCheckout::NotLive => return Err(Error::HoldNotLive),
        sales::seasons::SeasonCheckout::Forbidden => {
            return Err(Error::Forbidden("this hold belongs to another user"))
        }
    };
    if created {
        let changes = order
            .nights
            .iter()
            .map(|night| {
                let seats = order.seats.iter().map(|s| s.seat_id.as_str());
                (night.event_id, Change::now(seats, SeatStatus::Sold))
            })
            .collect();
        publish_all(state, changes).await;
    }
    Ok(SeasonCheckout {
        order: order_view(state, &season, order).await?,
        created,
    })
}

/// The season order `id` (or the season order one of whose events' orders `id` is), for
/// its owner (`by`) or an admin (`None`); `None` when there is no such season order.
pub async fn find_order(
    state: &Services,
    id: Uuid,
    by: Option<&UserId>,
) -> Result<Option<SeasonOrderView>, Error> {
    let Some(order) = sales::seasons::load(&state.pool, id).await? else {
        return Ok(None);
    };
    if by.is_some_and(|u| u != &order.user_id) {
        return Err(Error::Forbidden("this order belongs to another user"));
    }
    let season = view(state, order.season_id).await?;
    Ok(Some(order_view(state, &season, order).await?))
}

/// Cancels the season order `id` (its owner `by`, or an admin): its seats go on sale again
/// in every event where they were not released, the waiting list first; with the id of one
/// of its events' orders, in that event alone (released for that night). `None` when there
/// is no such season order; a cancelled order (or night released) is answered as it is.
pub async fn cancel_order(
    state: &Services,
    id: Uuid,
    by: Option<&UserId>,
) -> Result<Option<SeasonOrderView>, Error> {
    let outcome = sales::seasons::cancel(&state.pool, &*state.holds, id, by).await?;
    match given_back(state, outcome).await {
        Ok(order) | Err(GivenBack::Already(order)) => Ok(Some(order)),
        Err(GivenBack::NotFound) => Ok(None),
        Err(GivenBack::Failed(e)) => Err(e),
    }
}

/// Releases the season order `id`'s seats for `event` alone (its owner `by`, or an admin):
/// they go on sale in that event (the waiting list first); the order keeps the others.
pub async fn release_night(
    state: &Services,
    id: Option<Uuid>,
    event: Option<EventId>,
    by: Option<&UserId>,
) -> Result<ReleasedNight, Error> {
    let (Some(id), Some(event)) = (id, event) else {
        return Err(Error::OrderNotFound);
    };
    let outcome = sales::seasons::release_night(&state.pool, &*state.holds, id, event, by).await?;
    match given_back(state, outcome).await {
        Ok(order) => order
            .released
            .into_iter()
            .find(|r| r.event_id == event)
            .ok_or(Error::OrderNotFound),
        Err(GivenBack::Already(_)) => Err(Error::AlreadyReleased),
        Err(GivenBack::NotFound) => Err(Error::OrderNotFound),
        Err(GivenBack::Failed(e)) => Err(e),
    }
}

/// Why a cancellation or release gave nothing back.
enum GivenBack {
    Already(SeasonOrderView),
    NotFound,
    Failed(Error),
}

impl From<Error> for GivenBack {
    fn from(e: Error) -> Self {
        GivenBack::Failed(e)
    }
}

/// Publishes what a cancellation or release put back, and answers the order.
async fn given_back(
    state: &Services,
    outcome: sales::seasons::SeasonCancel,
) -> Result<SeasonOrderView, GivenBack> {
    use sales::seasons::SeasonCancel;
    let (order, returned) = match outcome {
        SeasonCancel::Done(order, returned) => (order, returned),
        SeasonCancel::Already(order) => {
            let season = view(state, order.season_id).await?;
            return Err(GivenBack::Already(order_view(state, &season, order).await?));
        }
        SeasonCancel::NotFound => return Err(GivenBack::NotFound),
        SeasonCancel::Forbidden => {
            return Err(GivenBack::Failed(Error::Forbidden(
                "this order belongs to another user",
            )))
        }
    };
    for r in &returned {
        let seats = r.seats.iter().map(String::as_str);
        crate::orders::put_back(state, r.event, seats, &r.offers).await?;
    }
    let season = view(state, order.season_id).await?;
    Ok(order_view(state, &season, order).await?)
}

/// The season order as answered, its seats labelled.
async fn order_view(
    state: &Services,
    season: &Season,
    order: SeasonOrder,
) -> Result<SeasonOrderView, Error> {
    let map = availability::layout(state, season.event_ids[0], None, 0).await?;
    let refs = |seats: &[ClaimedSeat]| -> Vec<SeatRef> {
        seats
            .iter()
            .map(|s| SeatRef {
                id: s.seat_id.clone(),
                label: crate::holds::label(&map, &s.seat_id),
                event_id: None,
            })
            .collect()
    };
    let released = order
        .nights
        .iter()
        .filter(|n| n.released)
        .map(|n| ReleasedNight {
            event_id: n.event_id,
            seats: refs(&order.seats),
        })
        .collect();
    Ok(SeasonOrderView {
        order_id: order.order_id,
        season_id: order.season_id,
        event_ids: order.event_ids(),
        user_id: order.user_id.to_string(),
        seats: order
            .seats
            .iter()
            .map(|s| PricedSeat {
                id: s.seat_id.clone(),
                label: crate::holds::label(&map, &s.seat_id),
                ticket_type: s.ticket_type.clone(),
                price_cents: s.price_cents,
            })
            .collect(),
        partial: order.partial,
        total_cents: order.total_cents,
        currency: order.currency,
        status: order.status,
        created_at: order.created_at,
        released,
    })
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
    let store = season_holds(state)?;
    let season = view(state, id).await?;
    let events = state.season_tokens.in_events(token, &season.event_ids);
    let rows = store.season_hold(&events).await?;
    let present: HashSet<EventId> = rows.iter().map(|(_, s)| s.event).collect();
    if present.is_empty() {
        return Err(Error::HoldNotLive);
    }
    let (mut ttl, mut most) = (u32::MAX, u32::MAX);
    for &event in &present {
        let policy = crate::holds::event_policy(state, event).await?;
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

/// Most season orders one list answers.
pub const MAX_ORDERS_LISTED: i64 = 200;

/// The season's orders, newest first (`limit` of them, at most [`MAX_ORDERS_LISTED`]);
/// with `q`, those whose id, buyer or a seat it names.
pub async fn list_orders(
    state: &Services,
    id: SeasonId,
    q: Option<&str>,
    limit: i64,
) -> Result<SeasonOrderList, Error> {
    let season = view(state, id).await?;
    let q = q.map(str::trim).filter(|q| !q.is_empty());
    let limit = limit.clamp(1, MAX_ORDERS_LISTED);
    let orders = sales::seasons::list(&state.pool, id, q, limit).await?;
    let mut views = Vec::with_capacity(orders.len());
    for order in orders {
        views.push(order_view(state, &season, order).await?);
    }
    Ok(SeasonOrderList { orders: views })
}

/// The season's sales: the whole season and each partial (those with none sold too).
pub async fn sales_of(state: &Services, id: SeasonId) -> Result<SeasonSales, Error> {
    let season = view(state, id).await?;
    let sold = sales::seasons::sales(&state.pool, id).await?;
    let line = |partial: Option<&str>, name: &str| {
        let found = sold.iter().find(|l| l.partial.as_deref() == partial);
        SeasonSalesLine {
            partial: partial.map(str::to_owned),
            name: name.to_owned(),
            orders: found.map_or(0, |l| l.orders),
            seats: found.map_or(0, |l| l.seats),
            revenue_cents: found.map_or(0, |l| l.revenue_cents),
        }
    };
    let mut lines = vec![line(None, &season.name)];
    lines.extend(season.partials.iter().map(|p| line(Some(&p.code), &p.name)));
    Ok(SeasonSales {
        currency: season
            .ticket_types
            .first()
            .map(|t| t.currency.clone())
            .unwrap_or_default(),
        orders: lines.iter().map(|l| l.orders).sum(),
        seats: lines.iter().map(|l| l.seats).sum(),
        revenue_cents: lines.iter().map(|l| l.revenue_cents).sum(),
        lines,
    })
}
