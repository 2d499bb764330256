//! HTTP routes, one module per resource. Handlers stay thin: extract, call the store or a
//! service, map the result.

pub mod admin;
pub mod audit;
pub mod availability;
pub mod bookings;
pub mod changes;
pub mod events;
pub mod holds;
pub mod ops;
pub mod orders;
pub mod organizations;
pub mod page;
pub mod pay;
pub mod queue;
pub mod seasons;
pub mod sessions;
pub mod stream;
pub mod tickets;
pub mod venues;
pub mod waitlist;
pub mod webhooks;

use boxoffice_core::ids::{EventId, VenueId};

use crate::error::ApiError;

/// The event a path names; a malformed id is as unknown as a missing one (404).
pub(crate) fn event_id(text: &str) -> Result<EventId, ApiError> {
    EventId::parse(text).ok_or_else(ApiError::event_not_found)
}

/// The venue a path names; a malformed id is as unknown as a missing one (404).
pub(crate) fn venue_id(text: &str) -> Result<VenueId, ApiError> {
    VenueId::parse(text).ok_or_else(venue_not_found)
}

pub(crate) fn venue_not_found() -> ApiError {
    ApiError::NotFound {
        code: "not_found",
        detail: "no such venue".into(),
    }
}
