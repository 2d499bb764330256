//! Seasons as an organizer sets them up (events of one venue sold together, the same seat
//! for each), and a season's seats as buyers see them: a seat is free for the season only
//! where the season sells it and no event it covers has it sold or held.
//!
//! - [`holds`]: season holds, each held in every event the season covers at once.
//! - [`orders`]: season orders, their cancellation and their nights released, and the
//!   organizer's list and sales.

use std::collections::{HashMap, HashSet};

use boxoffice_api::{SeasonSeatView, SeasonSeats};
use boxoffice_core::availability::SeatStatus;
use boxoffice_core::ids::{EventId, OrganizationId, SeasonId};
use boxoffice_core::season::{Season, SeasonSpec};
use boxoffice_store::pg::seasons;
use boxoffice_store::pg::{events, venues};
use boxoffice_store::StoreError;

use crate::live::Change;
use crate::{availability, Error, Services};

mod holds;
mod orders;

pub use holds::{extend_hold, get_hold, hold_seats, release_hold, SeasonTokens};
pub use orders::{
    cancel_order, checkout, find_order, list_orders, release_night, sales_of, SeasonCheckout,
    MAX_ORDERS_LISTED,
};

/// Creates a season of `organization` from `spec`, checked against its events and their
/// venue (another organization's events are as missing); answers its id.
pub async fn create(
    state: &Services,
    organization: OrganizationId,
    spec: SeasonSpec,
    actor: &boxoffice_store::journal::audit::Actor,
) -> Result<SeasonId, Error> {
    let events = seasons::season_events(&state.pool, organization, &spec.event_ids).await?;
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
    match seasons::insert_season(&state.pool, id, organization, &season, Some(actor)).await {
        Ok(()) => Ok(id),
        Err(e) if seasons::is_event_in_another_season(&e) => Err(Error::invalid(
            "event_ids",
            "an event was put in another season meanwhile",
        )),
        Err(e) => Err(e.into()),
    }
}

/// Every season, newest first; with `organization`, that organization's only.
pub async fn list(
    state: &Services,
    organization: Option<boxoffice_core::ids::OrganizationId>,
) -> Result<Vec<Season>, Error> {
    Ok(seasons::list_seasons(&state.pool, organization).await?)
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
    seats_of(state, &season, partial).await
}

/// [`seats`] of a season already read.
async fn seats_of(
    state: &Services,
    season: &Season,
    partial: Option<&str>,
) -> Result<(SeasonSeats, bool), Error> {
    let id = season.id;
    let event_ids = covered(season, partial)?;
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
