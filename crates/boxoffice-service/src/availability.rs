//! Availability, composed at read time: the seat map (cached), the sold seats and
//! general-admission places (Postgres) and the live holds (the hold store).

use std::sync::{Arc, OnceLock};

use boxoffice_core::availability::SeatState;
use boxoffice_core::ids::EventId;
use boxoffice_store::pg::events::{self, GaLeft};
use boxoffice_store::StoreError;

use crate::seat_map::RenderedSeatMap;
use crate::Error;
use crate::Services;

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
/// Postgres is needed; the hold store is not: without it `holds_unknown` says so. The sold
/// seats and the allocations are read from the replica when one is up and in step
/// ([`crate::replica`]): this is what buyers look at, not what decides a sale. Should the
/// replica fail the read, it is not used until it answers again, and the primary answers.
/// An event the replica does not know may be one it has not replayed yet (created a moment
/// ago, within the lag bound): the primary answers whether it exists.
pub async fn event_availability(
    state: &Services,
    event: EventId,
) -> Result<EventAvailability, Error> {
    event_availability_in(state, event, None).await
}

/// [`event_availability`] as the buyers of `channel` see it (seats allocated to other
/// channels read `not_for_sale`); a channel the event does not have is no channel.
pub async fn event_availability_in(
    state: &Services,
    event: EventId,
    channel: Option<&str>,
) -> Result<EventAvailability, Error> {
    let channel = channel_of(state, event, channel).await?;
    if let Some(replica) = state.replica.as_deref() {
        if let Some(pool) = replica.pool() {
            match event_availability_from(state, event, pool, channel).await {
                Err(Error::Store(error)) => {
                    tracing::warn!(%error, "replica read failed: reads go to the primary");
                    replica.failed();
                }
                Err(Error::EventNotFound) => {}
                answer => return answer,
            }
        }
    }
    event_availability_from(state, event, &state.pool, channel).await
}

/// `channel` if it is one of the event's channels, else `None`: a buyer's token may name
/// a channel of another event, and sees this one as buyers in no channel do.
pub async fn channel_of<'c>(
    state: &Services,
    event: EventId,
    channel: Option<&'c str>,
) -> Result<Option<&'c str>, Error> {
    let Some(code) = channel else {
        return Ok(None);
    };
    let policy = state
        .seat_maps
        .policy(&state.pool, event)
        .await?
        .ok_or(Error::EventNotFound)?;
    Ok(policy.channels.iter().any(|c| c == code).then_some(code))
}

/// [`event_availability_in`] with the sold seats and allocations read from `pool`, for a
/// channel of the event (or none).
pub async fn event_availability_from(
    state: &Services,
    event: EventId,
    pool: &sqlx::PgPool,
    channel: Option<&str>,
) -> Result<EventAvailability, Error> {
    let (event_state, held) = tokio::join!(
        events::event_state(pool, event),
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
        .get_in(pool, event, channel, event_state.layout_version)
        .await?
        .ok_or(Error::EventNotFound)?;
    let states = map.compose(
        event_state.sold.iter().map(String::as_str),
        event_state.listed.iter().map(String::as_str),
        &held,
    );
    Ok(EventAvailability {
        map,
        states,
        ga: event_state.ga,
        holds_unknown,
    })
}

/// The version of the event's allocations now.
pub async fn layout_version(state: &Services, event: EventId) -> Result<i64, Error> {
    events::layout_version(&state.pool, event)
        .await?
        .ok_or(Error::EventNotFound)
}

/// The event's seat map at `version` or newer, as the buyers of `channel` see it.
pub async fn layout(
    state: &Services,
    event: EventId,
    channel: Option<&str>,
    version: i64,
) -> Result<Arc<RenderedSeatMap>, Error> {
    let channel = channel_of(state, event, channel).await?;
    state
        .seat_maps
        .get_in(&state.pool, event, channel, version)
        .await?
        .ok_or(Error::EventNotFound)
}

/// What a snapshot of an event's seats carries (each a stream event of its own name,
/// which the route gives it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SnapshotKind {
    /// Every seat with its layout and status: the body of `GET /v1/events/{id}/seats`, sent
    /// as a `snapshot` event.
    #[default]
    Full,
    /// Every seat's status alone, compactly, in the order of the layout at a version; sent
    /// as a `statuses` event.
    Statuses,
}

/// An event's seats at one moment, rendered in each form at most once however many
/// streams send it.
pub struct SeatsSnapshot {
    event: EventId,
    availability: EventAvailability,
    full: OnceLock<String>,
    statuses: OnceLock<String>,
    /// What the sender made of it (see [`SeatsSnapshot::encoded`]).
    encoded: OnceLock<Box<dyn std::any::Any + Send + Sync>>,
}

impl SeatsSnapshot {
    /// The snapshot in the form `kind`, as the stream's event carries it.
    pub fn body(&self, kind: SnapshotKind) -> &str {
        let a = &self.availability;
        match kind {
            SnapshotKind::Full => self.full.get_or_init(|| {
                String::from_utf8(a.map.render_seats(self.event, &a.states))
                    .expect("the seat map renders UTF-8 JSON")
            }),
            SnapshotKind::Statuses => self
                .statuses
                .get_or_init(|| a.map.render_statuses(self.event, &a.states)),
        }
    }

    /// The encodings of this snapshot its sender keeps with it (the server's stream: each
    /// form framed as an event, and compressed), so that each is made once however many
    /// streams send the snapshot. Made empty by the first call; a snapshot has one kind of
    /// encodings.
    pub fn encoded<T: Default + Send + Sync + 'static>(&self) -> &T {
        self.encoded
            .get_or_init(|| Box::new(T::default()))
            .downcast_ref()
            .expect("a snapshot keeps one kind of encodings")
    }

    /// The seat map (the view of one channel, or of none) it was composed from.
    pub fn map(&self) -> &Arc<RenderedSeatMap> {
        &self.availability.map
    }

    /// Composed without the hold store, which was unreachable.
    pub fn holds_unknown(&self) -> bool {
        self.availability.holds_unknown
    }
}

/// Composes `event`'s seats with their statuses now, as buyers in no channel see them.
pub async fn seats_snapshot(state: &Services, event: EventId) -> Result<SeatsSnapshot, Error> {
    seats_snapshot_in(state, event, None).await
}

/// [`seats_snapshot`] as the buyers of `channel` see them.
pub async fn seats_snapshot_in(
    state: &Services,
    event: EventId,
    channel: Option<&str>,
) -> Result<SeatsSnapshot, Error> {
    Ok(SeatsSnapshot {
        event,
        availability: event_availability_in(state, event, channel).await?,
        full: OnceLock::new(),
        statuses: OnceLock::new(),
        encoded: OnceLock::new(),
    })
}
