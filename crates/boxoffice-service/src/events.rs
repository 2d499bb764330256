//! Events as an organizer sets them up: created on a venue, read with their seat counts,
//! their waiting room set, and their allocations changed (every page of the event then
//! takes the new seat map).

use std::collections::{HashMap, HashSet};

use boxoffice_api::{
    AllocationsChanged, AllocationsRequest, ChannelReleased, EventView, GaAreaView, SkippedSeat,
};
use boxoffice_core::availability::SeatCounts;
use boxoffice_core::event::{
    resolve_allocations, ChangeSettings, EntrySettings, EventSpec, QueueSettings, WithdrawSpec,
};
use boxoffice_core::ids::{EventId, OrganizationId};
use boxoffice_core::validation::ValidationErrors;
use boxoffice_core::venue::VenueLayout;
use boxoffice_store::journal::audit::Actor;
use boxoffice_store::pg::events::{self, AllocationChange, AllocationOutcome, EventRecord};
use boxoffice_store::pg::venues;
use boxoffice_store::StoreError;

use crate::availability::event_availability;
use crate::live::Change;
use crate::{Error, Services};

/// How many times an event is checked against its venue again when the venue was
/// replaced between the check and the write: a venue is replaced only while no event
/// uses it, so the second try almost always stands.
const VENUE_READS: usize = 4;

/// Creates an event of `organization` from `spec`, checked against its venue (which must
/// be the organization's: another's is as missing); answers its id. An event created while
/// its venue is replaced is made on the venue it was checked against, or checked again
/// against the new one ([`events::insert_event`]).
pub async fn create(
    state: &Services,
    organization: OrganizationId,
    spec: EventSpec,
    actor: &Actor,
) -> Result<EventId, Error> {
    let id = EventId::new();
    for _ in 0..VENUE_READS {
        let (event, venue) = checked(state, organization, spec.clone()).await?;
        if events::insert_event(&state.pool, id, organization, &event, &venue, Some(actor)).await? {
            return Ok(id);
        }
    }
    Err(StoreError::Contention.into())
}

/// Creates the event `id` of the `default` organization from `spec` unless it exists; whether it was created now
/// (`false` when it was there before, or another server created it first).
pub async fn ensure(state: &Services, id: EventId, spec: EventSpec) -> Result<bool, Error> {
    if events::get_event(&state.pool, id).await?.is_some() {
        return Ok(false);
    }
    for _ in 0..VENUE_READS {
        let (event, venue) = checked(state, OrganizationId::DEFAULT, spec.clone()).await?;
        let inserted = events::insert_event(
            &state.pool,
            id,
            OrganizationId::DEFAULT,
            &event,
            &venue,
            None,
        )
        .await;
        match inserted {
            Ok(false) => continue,
            other => return Ok(crate::venues::inserted(other.map(drop))?),
        }
    }
    Err(StoreError::Contention.into())
}

/// `spec` checked against its venue, now, with the version of the venue it was checked
/// against: a venue of another organization than `organization` is as missing.
async fn checked(
    state: &Services,
    organization: OrganizationId,
    spec: EventSpec,
) -> Result<(boxoffice_core::event::NewEvent, venues::VenueVersion), Error> {
    let no_venue = || Error::invalid("venue_id", "no such venue");
    let owner = boxoffice_store::pg::organizations::owner(
        &state.pool,
        boxoffice_store::pg::organizations::Owned::Venue(spec.venue_id.0),
    )
    .await?;
    if owner != Some(organization) {
        return Err(no_venue());
    }
    let (venue, version) = venues::read_venue(&state.pool, spec.venue_id)
        .await?
        .ok_or_else(no_venue)?;
    Ok((spec.validate(&venue, chrono::Utc::now())?, version))
}

/// Every event, soonest first: of one organization, or of all.
pub async fn list(
    state: &Services,
    organization: Option<OrganizationId>,
) -> Result<Vec<events::EventSummary>, Error> {
    Ok(events::list_events(&state.pool, organization).await?)
}

/// One event's record: its name, start, time zone, settings, ticket types and areas,
/// without counting its seats.
pub async fn record(state: &Services, id: EventId) -> Result<EventRecord, Error> {
    events::get_event(&state.pool, id)
        .await?
        .ok_or(Error::EventNotFound)
}

/// One event as it stands: its settings, GA areas and seat counts now; and whether the
/// hold store could not be asked (held seats then count as available).
pub async fn view(state: &Services, id: EventId) -> Result<(EventView, bool), Error> {
    let record = events::get_event(&state.pool, id)
        .await?
        .ok_or(Error::EventNotFound)?;
    let availability = event_availability(state, id).await?;
    let view = EventView {
        id,
        organization_id: record.summary.organization_id,
        venue_id: record.summary.venue_id,
        name: record.summary.name,
        starts_at: record.summary.starts_at,
        hold_ttl_seconds: record.hold_ttl_seconds,
        max_hold_seconds: record.max_hold_seconds,
        max_seats_per_user: record.max_seats_per_user,
        payment_window_seconds: record.payment_window_seconds,
        waitlist_offer_seconds: record.waitlist_offer_seconds,
        time_zone: record.summary.time_zone,
        section_order: record.section_order,
        ticket_types: record.ticket_types,
        ga_areas: record
            .ga_areas
            .into_iter()
            .map(|(area, left)| GaAreaView { area, left })
            .collect(),
        counts: SeatCounts::of(&availability.states),
        channels: record.channels,
        queue: record.queue,
        entry: record.entry,
        changes: record.changes,
    };
    Ok((view, availability.holds_unknown))
}

/// Sets the event's waiting room (`None`: no waiting room); every instance reads it again.
pub async fn set_queue(
    state: &Services,
    id: EventId,
    queue: Option<&QueueSettings>,
    actor: Option<&Actor>,
) -> Result<(), Error> {
    if let Some(queue) = queue {
        let mut errors = ValidationErrors::default();
        queue.check("queue", &mut errors);
        errors.into_result(())?;
    }
    if !events::set_queue(&state.pool, id, queue, actor).await? {
        return Err(Error::EventNotFound);
    }
    crate::queue::settings_changed(state, id).await;
    Ok(())
}

/// Sets how the event's tickets are let in.
pub async fn set_entry(
    state: &Services,
    id: EventId,
    entry: EntrySettings,
    actor: Option<&Actor>,
) -> Result<(), Error> {
    if !events::set_entry(&state.pool, id, entry, actor).await? {
        return Err(Error::EventNotFound);
    }
    Ok(())
}

/// Sets who may change the event's sold seats.
pub async fn set_changes(
    state: &Services,
    id: EventId,
    changes: ChangeSettings,
    actor: Option<&Actor>,
) -> Result<(), Error> {
    if !events::set_changes(&state.pool, id, changes, actor).await? {
        return Err(Error::EventNotFound);
    }
    Ok(())
}

/// Puts seats on sale or changes their ticket type; held and sold seats are left alone and
/// listed back.
pub async fn put_allocations(
    state: &Services,
    id: EventId,
    body: &AllocationsRequest,
    actor: &Actor,
) -> Result<AllocationsChanged, Error> {
    let (record, venue) = event_and_venue(state, id).await?;
    let mut errors = ValidationErrors::default();
    errors.check(
        !body.allocations.is_empty(),
        "allocations",
        "must have at least one entry",
    );
    let codes: HashSet<&str> = record
        .ticket_types
        .iter()
        .map(|t| t.code.as_str())
        .collect();
    let channels: HashSet<&str> = record.channels.iter().map(|c| c.code.as_str()).collect();
    let allocations = resolve_allocations(
        &body.allocations,
        &venue.index(),
        &codes,
        &channels,
        &mut errors,
    );
    let allocations = errors.into_result(allocations)?;
    change(state, id, &venue, AllocationChange::Put(allocations), actor).await
}

/// Takes seats off sale; held and sold seats are left alone and listed back.
pub async fn withdraw_allocations(
    state: &Services,
    id: EventId,
    body: &WithdrawSpec,
    actor: &Actor,
) -> Result<AllocationsChanged, Error> {
    let (_, venue) = event_and_venue(state, id).await?;
    let seats = body.resolve(&venue.index())?;
    change(state, id, &venue, AllocationChange::Withdraw(seats), actor).await
}

/// Puts the channel's seats that are neither held nor sold on general sale, at once on
/// every page of the event; answers how many.
pub async fn release_channel(
    state: &Services,
    id: EventId,
    code: &str,
    actor: &Actor,
) -> Result<ChannelReleased, Error> {
    let record = events::get_event(&state.pool, id)
        .await?
        .ok_or(Error::EventNotFound)?;
    if !record.channels.iter().any(|c| c.code == code) {
        return Err(Error::ChannelNotFound);
    }
    let outcome = events::change_allocations(
        &state.pool,
        state.holds.as_ref(),
        id,
        AllocationChange::Release(code.to_owned()),
        Some(actor),
    )
    .await?
    .ok_or(Error::EventNotFound)?;
    state.live.publish(id, Change::Layout).await;
    Ok(ChannelReleased {
        released: outcome.changed,
    })
}

/// Makes the change, and has every page of the event take the new seat map.
async fn change(
    state: &Services,
    id: EventId,
    venue: &VenueLayout,
    change: AllocationChange,
    actor: &Actor,
) -> Result<AllocationsChanged, Error> {
    let outcome =
        events::change_allocations(&state.pool, state.holds.as_ref(), id, change, Some(actor))
            .await?
            .ok_or(Error::EventNotFound)?;
    state.live.publish(id, Change::Layout).await;
    Ok(changed(venue, outcome))
}

/// The event and its venue's layout, for resolving seat selectors.
async fn event_and_venue(
    state: &Services,
    id: EventId,
) -> Result<(EventRecord, VenueLayout), Error> {
    let record = events::get_event(&state.pool, id)
        .await?
        .ok_or(Error::EventNotFound)?;
    let venue = venues::get_venue(&state.pool, record.summary.venue_id)
        .await?
        .ok_or_else(|| StoreError::Other(format!("event {id} has no venue").into()))?;
    Ok((record, venue))
}

/// What a change did, with each seat left alone named by its label.
fn changed(venue: &VenueLayout, outcome: AllocationOutcome) -> AllocationsChanged {
    let skipped_ids: HashSet<&str> = outcome.skipped.iter().map(|(id, _)| id.as_str()).collect();
    let labels: HashMap<&str, &str> = venue
        .seats()
        .filter(|(_, _, s)| skipped_ids.contains(s.id.as_str()))
        .map(|(_, _, s)| (s.id.as_str(), s.label.as_str()))
        .collect();
    AllocationsChanged {
        changed: outcome.changed,
        skipped: outcome
            .skipped
            .iter()
            .map(|(id, status)| SkippedSeat {
                id: id.clone(),
                label: labels
                    .get(id.as_str())
                    .copied()
                    .unwrap_or_default()
                    .to_owned(),
                status: *status,
            })
            .collect(),
    }
}
