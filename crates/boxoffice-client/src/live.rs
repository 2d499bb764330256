//! `GET /v1/events/{id}/stream`: an event's seats, then their changes, as typed events.

use boxoffice_api::{GaChanged, SeatStatuses, SeatsChanged, SeatsView};
use eventsource_stream::Eventsource;
use futures::{Stream, StreamExt};

use crate::{Error, Result};

/// One event of the stream.
#[derive(Clone, Debug, PartialEq)]
pub enum LiveEvent {
    /// Every seat with its status; replaces whatever came before.
    Snapshot(SeatsView),
    /// Every seat's status alone, in the order of the layout at its version; replaces
    /// whatever came before (streams opened with [`Snapshot::Statuses`]).
    Statuses(SeatStatuses),
    /// Seats whose status changed.
    Seats(SeatsChanged),
    /// Places left in a general-admission area.
    Ga(GaChanged),
}

/// What a stream's snapshots carry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Snapshot {
    /// Every seat with its layout and status ([`LiveEvent::Snapshot`]).
    #[default]
    Full,
    /// Every seat's status alone, for a client that keeps the layout
    /// ([`LiveEvent::Statuses`], with `GET /v1/events/{id}/layout`).
    Statuses,
}

impl Snapshot {
    pub(crate) fn query(self) -> &'static str {
        match self {
            Snapshot::Full => "full",
            Snapshot::Statuses => "statuses",
        }
    }
}

/// The stream's events as they arrive; an event of an unknown name is skipped, so a
/// server that sends more kinds does not break an older client.
pub(crate) fn events(
    response: reqwest::Response,
) -> impl Stream<Item = Result<LiveEvent>> + Send + Unpin {
    response
        .bytes_stream()
        .eventsource()
        .filter_map(|item| async move {
            let event = match item {
                Ok(event) => event,
                Err(e) => {
                    return Some(Err(Error::Stream(e.to_string())));
                }
            };
            let parsed = match event.event.as_str() {
                "snapshot" => serde_json::from_str(&event.data).map(LiveEvent::Snapshot),
                "statuses" => serde_json::from_str(&event.data).map(LiveEvent::Statuses),
                "seats" => serde_json::from_str(&event.data).map(LiveEvent::Seats),
                "ga" => serde_json::from_str(&event.data).map(LiveEvent::Ga),
                _ => return None,
            };
            Some(parsed.map_err(|e| Error::Stream(format!("{} event: {e}", event.event))))
        })
        .boxed()
}
