//! Availability, composed at read time: the seat map (cached), the sold seats and
//! general-admission places (Postgres) and the live holds (the hold store).

use std::sync::Arc;

use boxoffice_core::availability::SeatState;
use boxoffice_core::ids::EventId;
use boxoffice_store::events::{self, GaLeft};

use crate::error::ApiError;
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
}

/// Composes the event's availability: two round trips run concurrently (Postgres for sold
/// seats and the allocation version, the hold store for live holds), never a query per seat.
pub async fn event_availability(
    state: &AppState,
    event: EventId,
) -> Result<EventAvailability, ApiError> {
    let (event_state, held) = tokio::try_join!(
        events::event_state(&state.pool, event),
        state.holds.held_seats(event)
    )?;
    let event_state = event_state.ok_or_else(ApiError::event_not_found)?;
    let map = state
        .seat_maps
        .get(&state.pool, event, event_state.layout_version)
        .await?
        .ok_or_else(ApiError::event_not_found)?;
    let states = map
        .map
        .compose(event_state.sold.iter().map(String::as_str), &held);
    Ok(EventAvailability {
        map,
        states,
        ga: event_state.ga,
    })
}
