//! The waiting room: joining an event's line and polling a ticket, which admits whoever's
//! turn it is ([`boxoffice_store::redis::queue`]); the pass an admitted buyer is given, checked
//! before every hold and booking while the queue is on; and its early end when the buyer
//! is done.

use std::time::Duration;

use boxoffice_core::event::QueueSettings;
use boxoffice_core::ids::{EventId, UserId};
use boxoffice_store::pg::events;
use boxoffice_store::redis::queue::{estimated_wait_seconds, LineCounts, Place, Rules};
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::live::Change;
use crate::pass::Refused;
use crate::Error;
use crate::Services;
pub use boxoffice_store::hold_store::HoldPass;

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
async fn open_queue(state: &Services, event: EventId) -> Result<QueueSettings, Error> {
    match state.admission.queue(&state.pool, event).await? {
        Some(queue) => Ok(queue),
        None => match events::layout_version(&state.pool, event).await? {
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
    state: &Services,
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
            let pass = state.admission.passes.mint(event, user, ticket, expires_at);
            (ticket, Standing::Admitted { pass, expires_at })
        }
        Place::Ended { .. } | Place::Gone => return Err(Error::TicketNotFound),
    })
}

/// Joins `user` to `event`'s line, or finds their ticket.
pub async fn join(
    state: &Services,
    event: EventId,
    user: &UserId,
) -> Result<(Uuid, Standing), Error> {
    let queue = open_queue(state, event).await?;
    let place = state.waiting_room.join(event, user, &rules(&queue)).await?;
    standing(state, event, user, &queue, place)
}

/// Where `user`'s `ticket` stands now; polling keeps it in the line.
pub async fn poll(
    state: &Services,
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

/// Lets a hold or booking of `event` by `user` through if the event's waiting room is off
/// (`None`), or `pass` (the `Boxoffice-Pass` header) is a pass of this buyer for this
/// event that has not expired (the pass, which the hold or booking takes to its store:
/// whether it ended early is the store's to say, in the same call that claims); refuses it
/// with [`Error::QueueRequired`] otherwise.
pub async fn admit(
    state: &Services,
    event: EventId,
    user: &UserId,
    pass: Option<&str>,
) -> Result<Option<HoldPass>, Error> {
    if state.admission.queue(&state.pool, event).await?.is_none() {
        return Ok(None);
    }
    let pass = pass.ok_or(Error::QueueRequired(
        "this event's waiting room is on: join it, and show the pass it gives in Boxoffice-Pass",
    ))?;
    let pass = state
        .admission
        .passes
        .verify(pass, event, user)
        .map_err(|refused| {
            Error::QueueRequired(match refused {
                Refused::Invalid => "the pass is not valid: join the waiting room again",
                Refused::Expired => "the pass has expired: join the waiting room again",
                Refused::NotYours => "the pass is not for this event and buyer",
            })
        })?;
    Ok(Some(HoldPass {
        ticket: pass.ticket,
        expires_at: pass.expires_at,
    }))
}

/// The refusal of a hold or booking under a pass that has ended.
pub(crate) fn pass_ended() -> Error {
    Error::QueueRequired(
        "the pass ended when its buyer checked out or released every hold: join the waiting \
         room again",
    )
}

/// The event's waiting-room settings changed: every instance reads them again.
pub async fn settings_changed(state: &Services, event: EventId) {
    state.admission.forget(event);
    state.live.publish(event, Change::Queue).await;
}

/// `user`'s pass in `event` ended (the hold store ended it, refusing it from now on, when
/// they checked out or released their last hold): if the event's queue is on, its slot
/// goes to the next in line. The sale went through whatever happens here, so a failure is
/// only logged; the slot then frees when the pass would have expired.
pub async fn done(state: &Services, event: EventId, user: &UserId) {
    let ended = async {
        let Some(queue) = state.admission.queue(&state.pool, event).await? else {
            return Ok(());
        };
        state.waiting_room.end(event, user, &rules(&queue)).await?;
        Ok::<_, boxoffice_store::StoreError>(())
    };
    if let Err(error) = ended.await {
        tracing::warn!(%error, %event, "waiting room: a pass's slot could not be freed early");
    }
}

/// Events whose waiting-room figures `/metrics` shows.
const EVENTS_MEASURED: i64 = 100;

/// The counts of every waiting room that is on (the latest [`EVENTS_MEASURED`] to open),
/// or of none if a store does not answer.
pub async fn counts(state: &Services) -> Vec<(EventId, LineCounts)> {
    let Ok(queued) = events::queued_events(&state.pool, EVENTS_MEASURED).await else {
        return Vec::new();
    };
    let mut counts = Vec::with_capacity(queued.len());
    for event in queued {
        match state.waiting_room.counts(event).await {
            Ok(c) => counts.push((event, c)),
            Err(_) => return Vec::new(),
        }
    }
    counts
}
