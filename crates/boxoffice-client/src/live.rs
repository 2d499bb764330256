//! `GET /v1/events/{id}/stream`: an event's seats, then their changes, as typed events.

use boxoffice_api::{GaChanged, SeatsChanged, SeatsView};
use eventsource_stream::Eventsource;
use futures::{Stream, StreamExt};

use crate::{Error, Result};

/// One event of the stream.
#[derive(Clone, Debug, PartialEq)]
pub enum LiveEvent {
    /// Every seat with its status; replaces whatever came before.
    Snapshot(SeatsView),
    /// Seats whose status changed.
    Seats(SeatsChanged),
    /// Places left in a general-admission area.
    Ga(GaChanged),
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
                "seats" => serde_json::from_str(&event.data).map(LiveEvent::Seats),
                "ga" => serde_json::from_str(&event.data).map(LiveEvent::Ga),
                _ => return None,
            };
            Some(parsed.map_err(|e| Error::Stream(format!("{} event: {e}", event.event))))
        })
        .boxed()
}
