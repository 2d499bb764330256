//! The waiting room: joining an event's line, a ticket's poll, giving a place up, the
//! line's public status, the pass an admitted buyer is given (checked before every hold
//! and booking while the queue is on) and its early end when the buyer is done.
//!
//! The line is built for millions in line ([`boxoffice_store::redis::queue`]): a ticket
//! is signed and carries its own place ([`ticket`]), every instance follows the line's one
//! public counter ([`line`]), and a waiting ticket's poll is answered from that, without a
//! store call. Only joining, giving up, and exchanging an admitted ticket for its pass
//! reach Redis.

pub mod line;
pub mod ticket;

use std::sync::Arc;

use boxoffice_core::event::QueueSettings;
use boxoffice_core::ids::{EventId, UserId};
use boxoffice_store::pg::events;
use boxoffice_store::redis::queue::{estimated_wait_seconds, place, Exchange, Left, LineCounts};
use chrono::{DateTime, Utc};

use crate::live::Change;
use crate::pass::Refused;
use crate::Error;
use crate::Services;
pub use boxoffice_store::hold_store::HoldPass;
use line::{Line, Lines, Status, View};
use ticket::Ticket;

/// Where a ticket stands, as a buyer is told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Standing {
    /// In the line.
    Waiting {
        /// Place in the line, 1 being next (`None` before opening).
        position: Option<u64>,
        /// Seconds until admission at the rate in force (`None` before opening).
        wait_seconds: Option<u64>,
        /// The ticket re-issued with its place, when the one shown was issued before the
        /// opening.
        reissued: Option<String>,
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

/// The event's line as this instance follows it.
async fn line_of(state: &Services, event: EventId) -> Result<Arc<Line>, Error> {
    let settings = open_queue(state, event).await?;
    Lines::line(&state.0, event, &settings).await
}

/// The ticket `text` of `user` in `event`'s line: [`Error::TicketInvalid`] if the server
/// did not sign it for this event, [`Error::TicketNotFound`] if it is another buyer's.
fn ticket_of(state: &Services, event: EventId, user: &UserId, text: &str) -> Result<Ticket, Error> {
    let ticket = state.tickets.verify(text).ok_or(Error::TicketInvalid)?;
    if ticket.event != event {
        return Err(Error::TicketInvalid);
    }
    if &ticket.user != user {
        return Err(Error::TicketNotFound);
    }
    Ok(ticket)
}

/// The ticket's place in the line as `view` has it (`None` before the opening).
fn place_in(view: &View, ticket: &Ticket) -> Option<u64> {
    ticket
        .place
        .or_else(|| place(ticket.join, view.state.order, view.settings.shuffle_at_open))
}

/// Where a ticket at `place` stands by `view` with the counter at `up`, without a store:
/// `None` once admitted.
fn waiting(view: &View, place: Option<u64>, up: u64) -> Option<(Option<u64>, Option<u64>)> {
    let Some(place) = place else {
        return Some((None, None));
    };
    (place > up).then(|| {
        let ahead = place - up;
        let rate = match view.state.admitting_per_minute {
            0 => view.settings.admit_per_minute,
            rate => rate,
        };
        (Some(ahead), Some(estimated_wait_seconds(ahead - 1, rate)))
    })
}

/// A buyer's ticket, signed, and where it stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Joined {
    /// The signed ticket.
    pub ticket: String,
    /// Place in the line (0 once admitted, `None` before the opening).
    pub position: Option<u64>,
    /// Seconds until admission at the rate in force (`None` before the opening).
    pub wait_seconds: Option<u64>,
}

/// Joins `user` to `event`'s line, or finds their ticket (the same bytes each time).
pub async fn join(state: &Services, event: EventId, user: &UserId) -> Result<Joined, Error> {
    let line = line_of(state, event).await?;
    let view = line.view();
    let joined = state
        .waiting_room
        .join(event, user, &view.rules(), None)
        .await?;
    let place = place(joined.join, joined.order, view.settings.shuffle_at_open);
    let ticket = Ticket {
        event,
        id: joined.id,
        join: joined.join,
        place,
        joined_at: joined.joined_at,
        user: user.clone(),
    };
    let up = joined.admitted_up_to.max(view.admitted_up_to());
    let (position, wait_seconds) = waiting(&view, place, up).unwrap_or((Some(0), Some(0)));
    Ok(Joined {
        ticket: state.tickets.sign(&ticket),
        position,
        wait_seconds,
    })
}

/// Where `user`'s `ticket` stands now. A waiting ticket is answered from this instance's
/// view of the line; an admitted one is exchanged for its pass (once; asking again finds
/// the same pass).
pub async fn poll(
    state: &Services,
    event: EventId,
    user: &UserId,
    ticket: &str,
) -> Result<Standing, Error> {
    let ticket = ticket_of(state, event, user, ticket)?;
    let line = line_of(state, event).await?;
    if line.given_up(ticket.id) {
        return Err(Error::TicketNotFound);
    }
    let view = line.view();
    let place = place_in(&view, &ticket);
    if let Some((position, wait_seconds)) = waiting(&view, place, view.admitted_up_to()) {
        let reissued = (ticket.place.is_none() && place.is_some()).then(|| {
            state.tickets.sign(&Ticket {
                place,
                ..ticket.clone()
            })
        });
        return Ok(Standing::Waiting {
            position,
            wait_seconds,
            reissued,
        });
    }
    let place = place.expect("an admitted ticket has a place");
    let rules = view.rules();
    match state
        .waiting_room
        .exchange(event, user, ticket.id, place, &rules)
        .await?
    {
        Exchange::Pass(at) => {
            let expires_at =
                at + chrono::Duration::seconds(i64::from(view.settings.session_seconds));
            if expires_at <= Utc::now() {
                return Err(Error::TicketNotFound);
            }
            let pass = state
                .admission
                .passes
                .mint(event, user, ticket.id, expires_at);
            Ok(Standing::Admitted { pass, expires_at })
        }
        // This instance read the counter after Redis moved it (it never runs ahead).
        Exchange::Waiting => Ok(Standing::Waiting {
            position: Some(1),
            wait_seconds: Some(0),
            reissued: None,
        }),
        Exchange::Gone => Err(Error::TicketNotFound),
    }
}

/// `user` gives up their `ticket`: from now on it answers [`Error::TicketNotFound`] on
/// every instance (on others as soon as the bus carries the word, and within a
/// [`line::TICK`] should the bus lose it). A ticket already exchanged for a pass ends the
/// pass too, in the hold store, as a checkout does: no hold is made under it again.
pub async fn leave(
    state: &Services,
    event: EventId,
    user: &UserId,
    ticket: &str,
) -> Result<(), Error> {
    let ticket = ticket_of(state, event, user, ticket)?;
    let line = line_of(state, event).await?;
    if line.given_up(ticket.id) {
        return Err(Error::TicketNotFound);
    }
    let view = line.view();
    let place = place_in(&view, &ticket);
    // A pass lasts at most its session from now.
    let until = Utc::now() + chrono::Duration::seconds(i64::from(view.settings.session_seconds));
    // An admitted ticket may have been exchanged for a pass: it is ended first, so that a
    // store failure leaves the ticket to be given up again rather than a pass running.
    // (Ending a pass never given is harmless: nothing refers to it.)
    let admitted = waiting(&view, place, view.admitted_up_to()).is_none();
    if admitted {
        state.holds.end_pass(event, ticket.id, until).await?;
    }
    match state
        .waiting_room
        .leave(event, user, ticket.id, place)
        .await?
    {
        left @ (Left::Left | Left::Ended) => {
            line.give_up(ticket.id);
            // Exchanged on an instance whose view ran ahead of this one's.
            if left == Left::Ended && !admitted {
                state.holds.end_pass(event, ticket.id, until).await?;
            }
            state.live.publish(event, Change::GaveUp(ticket.id)).await;
            Ok(())
        }
        Left::Gone => Err(Error::TicketNotFound),
    }
}

/// The line's figures as this instance last read them.
pub async fn line(state: &Services, event: EventId) -> Result<Arc<View>, Error> {
    Ok(line_of(state, event).await?.view())
}

/// The line's public status, the same bytes for everyone until a figure changes.
pub async fn status(state: &Services, event: EventId) -> Result<Arc<Status>, Error> {
    Ok(line_of(state, event).await?.view().status())
}

/// A buyer let through one event's waiting room: what every call that makes or grows a
/// buyer's hold (built in one place, `crate::asking`, for an admitted buyer or an
/// explicit order change), or books places, needs, and only [`admit`] gives. So no
/// buyer's flow can reach a hold store without its buyer admitted: skipping the check does
/// not compile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admitted {
    event: EventId,
    pass: Option<HoldPass>,
}

impl Admitted {
    /// The event the buyer was admitted to.
    pub fn event(&self) -> EventId {
        self.event
    }

    /// The pass the buyer was let through with, for the store to check whether it ended in
    /// the same call that claims; `None` where the event's waiting room is off.
    pub fn pass(&self) -> Option<HoldPass> {
        self.pass
    }
}

/// Lets a hold or booking of `event` by `user` through if the event's waiting room is off,
/// or `pass` (the `Boxoffice-Pass` header) is a pass of this buyer for this event that has
/// not expired (kept in the [`Admitted`], which the hold or booking takes to its store:
/// whether the pass ended early is the store's to say, in the same call that claims);
/// refuses it with [`Error::QueueRequired`] otherwise.
pub async fn admit(
    state: &Services,
    event: EventId,
    user: &UserId,
    pass: Option<&str>,
) -> Result<Admitted, Error> {
    if state.admission.queue(&state.pool, event).await?.is_none() {
        return Ok(Admitted { event, pass: None });
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
    Ok(Admitted {
        event,
        pass: Some(HoldPass {
            ticket: pass.ticket,
            expires_at: pass.expires_at,
        }),
    })
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
    state.lines.forget(event);
    state.live.publish(event, Change::Queue).await;
}

/// `user`'s pass in `event` ended (the hold store ended it, refusing it from now on, when
/// they checked out or released their last hold): if the event's queue is on, its slot
/// goes to the next in line. The sale went through whatever happens here, so a failure is
/// only logged; the slot then frees when the pass would have expired.
pub async fn done(state: &Services, event: EventId, user: &UserId) {
    let ended = async {
        if state.admission.queue(&state.pool, event).await?.is_some() {
            state.waiting_room.end(event, user).await?;
        }
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
