//! The waiting room: joining an event's line and polling a ticket, which admits whoever's
//! turn it is ([`boxoffice_store::queue`]), and the pass an admitted buyer is given.

use std::time::Duration;

use boxoffice_core::event::QueueSettings;
use boxoffice_core::ids::{EventId, UserId};
use boxoffice_store::events;
use boxoffice_store::queue::{estimated_wait_seconds, Place, Rules};
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::Error;
use crate::state::AppState;

/// A waiting ticket not polled for this long is dropped when its turn comes.
pub const DROP_AFTER: Duration = Duration::from_secs(60);

/// Where a ticket stands, as a buyer is told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Standing {
    /// In the line: people ahead plus one, and the estimated wait in seconds (`None`
    /// before opening).
    Waiting {
        /// Place in the line, 1 being next.
        position: Option<u64>,
        /// Seconds until admission at the current rate.
        wait_seconds: Option<u64>,
    },
    /// Admitted, with the pass and when it expires.
    Admitted {
        /// The pass (`Boxoffice-Pass`).
        pass: String,
        /// When the pass stops being valid.
        expires_at: DateTime<Utc>,
    },
}

/// The event's waiting room settings, if it has an enabled one.
async fn open_queue(state: &AppState, event: EventId) -> Result<QueueSettings, Error> {
    match events::queue(&state.pool, event).await? {
        Some(queue) if queue.enabled => Ok(queue),
        _ => match events::layout_version(&state.pool, event).await? {
            Some(_) => Err(Error::QueueNotFound),
            None => Err(Error::EventNotFound),
        },
    }
}

fn rules(queue: &QueueSettings) -> Rules {
    Rules {
        opens_at: queue.opens_at,
        admit_per_minute: queue.admit_per_minute,
        drop_after: DROP_AFTER,
        session: Duration::from_secs(u64::from(queue.session_seconds)),
        shuffle: queue.shuffle_at_open,
    }
}

fn standing(
    state: &AppState,
    event: EventId,
    user: &UserId,
    queue: &QueueSettings,
    place: Place,
) -> Result<(Uuid, Standing), Error> {
    Ok(match place {
        Place::Waiting { ticket, ahead } => (
            ticket,
            Standing::Waiting {
                position: ahead.map(|a| a + 1),
                wait_seconds: ahead.map(|a| estimated_wait_seconds(a, queue.admit_per_minute)),
            },
        ),
        Place::Admitted { ticket, at } => {
            let expires_at = at + chrono::Duration::seconds(i64::from(queue.session_seconds));
            let pass = state.passes.mint(event, user, ticket, expires_at);
            (ticket, Standing::Admitted { pass, expires_at })
        }
        Place::Gone => return Err(Error::TicketNotFound),
    })
}

/// Joins `user` to `event`'s line, or finds their ticket.
pub async fn join(
    state: &AppState,
    event: EventId,
    user: &UserId,
) -> Result<(Uuid, Standing), Error> {
    let queue = open_queue(state, event).await?;
    let place = state.waiting_room.join(event, user, &rules(&queue)).await?;
    standing(state, event, user, &queue, place)
}

/// Where `user`'s `ticket` stands now; polling keeps it in the line.
pub async fn poll(
    state: &AppState,
    event: EventId,
    user: &UserId,
    ticket: Uuid,
) -> Result<Standing, Error> {
    let queue = open_queue(state, event).await?;
    let place = state
        .waiting_room
        .poll(event, user, ticket, &rules(&queue))
        .await?;
    Ok(standing(state, event, user, &queue, place)?.1)
}
