//! What every flow reads of an event's seat map: the cached map (everyone's, or as a sales
//! channel's buyer sees it), the event's hold settings, what the map quotes for a basket,
//! and seats' labels. The hold, the sale, the door and the console all print a seat by its
//! label from here, without going through the hold flow.

use std::sync::Arc;

use boxoffice_core::hold::{ClaimedSeat, PricedSeat};
use boxoffice_core::ids::EventId;
use boxoffice_store::pg::events::HoldPolicy;

use crate::seat_map::RenderedSeatMap;
use crate::{Error, SeatRef, Services};

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
pub(crate) async fn event_policy(state: &Services, event: EventId) -> Result<HoldPolicy, Error> {
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

/// A seat's label on the map ("Stalls A-12"); empty for a seat the map does not have.
pub(crate) fn label(map: &RenderedSeatMap, seat: &str) -> String {
    map.map
        .get(seat)
        .map(|m| m.label.clone())
        .unwrap_or_default()
}

/// Seats by id and label, as a refusal names them.
pub(crate) fn seat_refs(map: &RenderedSeatMap, ids: Vec<String>) -> Vec<SeatRef> {
    ids.into_iter()
        .map(|id| SeatRef {
            event_id: None,
            label: label(map, &id),
            id,
        })
        .collect()
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
