//! Availability, composed at read time: the seat map (cached), the sold seats and
//! general-admission places (Postgres) and the live holds (the hold store).

use std::sync::Arc;

use boxoffice_core::availability::SeatState;
use boxoffice_core::ids::EventId;
use boxoffice_store::events::{self, GaLeft};
use boxoffice_store::StoreError;

use super::Error;
use crate::seat_map::RenderedSeatMap;
use crate::state::AppState;

/// Every seat's state in one event, and its general-admission places.
pub struct EventAvailability {
    /// The seat map the states refer to.
    pub map: Arc<RenderedSeatMap>,
    /// One state per seat of `map`, in order.
    pub states: Vec<SeatState>,
    /// Places left per area.
    pub ga: Vec<GaLeft>,
    /// The hold store could not be reached: held seats read as available (the answer
    /// says so).
    pub holds_unknown: bool,
}

/// Composes the event's availability: two round trips run concurrently (Postgres for sold
/// seats and the allocation version, the hold store for live holds), never a query per seat.
/// Postgres is needed; the hold store is not: without it `holds_unknown` says so.
pub async fn event_availability(
    state: &AppState,
    event: EventId,
) -> Result<EventAvailability, Error> {
    let (event_state, held) = tokio::join!(
        events::event_state(&state.pool, event),
        state.holds.held_seats(event)
    );
    let event_state = event_state?.ok_or(Error::EventNotFound)?;
    let (held, holds_unknown) = match held {
        Ok(held) => (held, false),
        Err(StoreError::Unavailable { reason, .. }) => {
            tracing::warn!(%event, %reason, "hold store unavailable; availability without holds");
            (Vec::new(), true)
        }
        Err(e) => return Err(e.into()),
    };
    let map = state
        .seat_maps
        .get(&state.pool, event, event_state.layout_version)
        .await?
        .ok_or(Error::EventNotFound)?;
    let states = map
        .map
        .compose(event_state.sold.iter().map(String::as_str), &held);
    Ok(EventAvailability {
        map,
        states,
        ga: event_state.ga,
        holds_unknown,
    })
}

/// The body of `GET /v1/events/{id}/seats`, as the stream's `snapshot` event carries it.
pub struct SeatsSnapshot {
    /// The JSON body.
    pub body: String,
    /// Composed without the hold store, which was unreachable.
    pub holds_unknown: bool,
}

/// Composes `event`'s seats with their statuses now.
pub async fn seats_snapshot(state: &AppState, event: EventId) -> Result<SeatsSnapshot, Error> {
    let availability = event_availability(state, event).await?;
    let body = availability.map.render_seats(event, &availability.states);
    Ok(SeatsSnapshot {
        body: String::from_utf8(body).expect("the seat map renders UTF-8 JSON"),
        holds_unknown: availability.holds_unknown,
    })
}
