//! Events, ticket types, general-admission areas, seat allocations and sold seats: the
//! event records here, and a file a job beside it (allocation changes, waiting-room
//! settings, what availability reads).

use boxoffice_core::event::{
    ChangeSettings, Channel, EntrySettings, GaArea, NewEvent, QueueSettings, TicketType,
};
use boxoffice_core::ids::{EventId, OrganizationId, VenueId};
use chrono::{DateTime, Utc};
use sqlx::AssertSqlSafe;
use sqlx::PgPool;

use crate::journal::audit::{self, Action, Actor, Change};
use crate::pg::venues::VenueVersion;
use crate::StoreError;

mod allocations;
mod queue_settings;
mod state;

use allocations::upsert_allocations;
pub use allocations::{change_allocations, AllocationChange, AllocationOutcome};
use queue_settings::write_queue;
pub use queue_settings::{changes, queue, queued_events, set_changes, set_entry, set_queue};
pub use state::{event_state, layout_version, seat_map, shapes, EventState, GaLeft, SeatMapRead};

/// An event as listed.
#[derive(Clone, Debug, PartialEq, sqlx::FromRow)]
pub struct EventSummary {
    /// Event id.
    #[sqlx(try_from = "uuid::Uuid")]
    pub event_id: EventId,
    /// Display name.
    pub name: String,
    /// Venue id.
    #[sqlx(try_from = "uuid::Uuid")]
    pub venue_id: VenueId,
    /// Start time.
    pub starts_at: DateTime<Utc>,
    /// The organization it belongs to.
    #[sqlx(try_from = "uuid::Uuid")]
    pub organization_id: OrganizationId,
    /// Its time zone: its own, or else its venue's.
    pub time_zone: String,
}

/// An event with its settings, ticket types and general-admission areas.
#[derive(Clone, Debug, PartialEq)]
pub struct EventRecord {
    /// Id, name, venue and start.
    pub summary: EventSummary,
    /// Hold lifetime in seconds.
    pub hold_ttl_seconds: u32,
    /// Cap on a hold's lifetime with extensions.
    pub max_hold_seconds: u32,
    /// Per-user limit of live held seats.
    pub max_seats_per_user: u32,
    /// How long a buyer has to pay after checkout (0: the sale completes at checkout).
    pub payment_window_seconds: u32,
    /// How long a waiting-list offer stands.
    pub waitlist_offer_seconds: u32,
    /// Every section, best first.
    pub section_order: Vec<String>,
    /// Ticket types in the order they were given.
    pub ticket_types: Vec<TicketType>,
    /// General-admission areas with the places left in each.
    pub ga_areas: Vec<(GaArea, u32)>,
    /// Sales channels, in the order given.
    pub channels: Vec<Channel>,
    /// The waiting room, if the event has one.
    pub queue: Option<QueueSettings>,
    /// How its tickets are let in.
    pub entry: EntrySettings,
    /// Who may change its sold seats.
    pub changes: ChangeSettings,
}

/// An event's settings for holds. They never change once the event is created, so a
/// server may cache them with the event's seat map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HoldPolicy {
    /// When the event starts: no hold is made from then on.
    pub starts_at: DateTime<Utc>,
    /// Lifetime of a hold.
    pub hold_ttl_seconds: u32,
    /// Cap on a hold's lifetime with extensions.
    pub max_hold_seconds: u32,
    /// Live held seats one user may have.
    pub max_seats_per_user: u32,
    /// How long a buyer has to pay after checkout (0: the sale completes at checkout).
    pub payment_window_seconds: u32,
    /// The event's currency; `None` if it has no ticket types.
    pub currency: Option<String>,
    /// Every section of the venue, best first.
    pub section_order: Vec<String>,
    /// The codes of the event's ticket types.
    pub ticket_types: Vec<String>,
    /// The codes of the event's sales channels.
    pub channels: Vec<String>,
}

impl HoldPolicy {
    /// What the event lets a buyer ask for by number: up to its `max_seats_per_user`, of
    /// its ticket types.
    pub fn by_number(&self) -> boxoffice_core::validation::SeatsByNumber<'_> {
        boxoffice_core::validation::SeatsByNumber {
            most: self.max_seats_per_user,
            most_from: "the event's max_seats_per_user",
            ticket_types: self.ticket_types.iter().map(String::as_str).collect(),
            sold_by: "event",
        }
    }
}

/// Whose ticket types: an event's (table `ticket_type`) or a season's
/// (`season_ticket_type`).
pub(crate) enum TicketTypesOf {
    Event,
    Season,
}

/// Writes `types` as the ticket types of the event or season `id`, in the order given.
pub(crate) async fn insert_ticket_types(
    tx: &mut sqlx::PgConnection,
    owner: TicketTypesOf,
    id: uuid::Uuid,
    types: &[TicketType],
) -> Result<(), StoreError> {
    let (table, key) = match owner {
        TicketTypesOf::Event => ("ticket_type", "event_id"),
        TicketTypesOf::Season => ("season_ticket_type", "season_id"),
    };
    sqlx::query(AssertSqlSafe(format!(
        "insert into {table} ({key}, code, name, price_cents, currency, position)
         select $1, code, name, price, currency, ord - 1
           from unnest($2::text[], $3::text[], $4::int8[], $5::text[])
                with ordinality as t (code, name, price, currency, ord)"
    )))
    .bind(id)
    .bind(types.iter().map(|t| t.code.as_str()).collect::<Vec<_>>())
    .bind(types.iter().map(|t| t.name.as_str()).collect::<Vec<_>>())
    .bind(types.iter().map(|t| t.price_cents).collect::<Vec<_>>())
    .bind(
        types
            .iter()
            .map(|t| t.currency.as_str())
            .collect::<Vec<_>>(),
    )
    .execute(tx)
    .await?;
    Ok(())
}

/// Stores a validated event with its ticket types, areas and allocations, in one
/// transaction, if its venue is still the one it was checked against (`venue`, as read
/// with [`crate::pg::venues::read_venue`]); whether it was stored. The venue's row is
/// locked first (`for share`): a replacement of the venue committed since it was read
/// answers `false` (read the venue and check the event again), and one that comes after
/// waits for this event and then finds the venue in use.
pub async fn insert_event(
    pool: &PgPool,
    id: EventId,
    organization: OrganizationId,
    event: &NewEvent,
    venue: &VenueVersion,
    actor: Option<&Actor>,
) -> Result<bool, StoreError> {
    let mut tx = pool.begin().await?;
    if !venue_unchanged(&mut tx, event.venue_id, venue).await? {
        return Ok(false);
    }
    crate::pg::db::allow_bulk_write(&mut tx).await?;
    sqlx::query(
        "insert into event (event_id, venue_id, name, starts_at, hold_ttl_seconds,
                            max_hold_seconds, max_seats_per_user, section_order,
                            payment_window_seconds, waitlist_offer_seconds, organization_id,
                            entry_reentry, buyer_moves_until, time_zone)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
    )
    .bind(id.0)
    .bind(event.venue_id.0)
    .bind(&event.name)
    .bind(event.starts_at)
    .bind(event.hold_ttl_seconds as i32)
    .bind(event.max_hold_seconds as i32)
    .bind(event.max_seats_per_user as i32)
    .bind(&event.section_order)
    .bind(event.payment_window_seconds as i32)
    .bind(event.waitlist_offer_seconds as i32)
    .bind(organization.0)
    .bind(event.entry.reentry)
    .bind(event.changes.buyer_moves_until)
    .bind(&event.time_zone)
    .execute(&mut *tx)
    .await?;

    insert_ticket_types(&mut tx, TicketTypesOf::Event, id.0, &event.ticket_types).await?;

    let a = &event.ga_areas;
    sqlx::query(
        "insert into ga_area (event_id, code, name, capacity, seats_left, price_cents, currency,
                              max_per_booking, max_per_user, position)
         select $1, code, name, capacity, capacity, price, currency, max_per_booking,
                max_per_user, ord - 1
           from unnest($2::text[], $3::text[], $4::int4[], $5::int8[], $6::text[], $7::int4[],
                       $8::int4[])
                with ordinality as a (code, name, capacity, price, currency, max_per_booking,
                                      max_per_user, ord)",
    )
    .bind(id.0)
    .bind(a.iter().map(|a| a.code.as_str()).collect::<Vec<_>>())
    .bind(a.iter().map(|a| a.name.as_str()).collect::<Vec<_>>())
    .bind(a.iter().map(|a| a.capacity as i32).collect::<Vec<_>>())
    .bind(a.iter().map(|a| a.price_cents).collect::<Vec<_>>())
    .bind(a.iter().map(|a| a.currency.as_str()).collect::<Vec<_>>())
    .bind(
        a.iter()
            .map(|a| a.max_per_booking as i32)
            .collect::<Vec<_>>(),
    )
    .bind(a.iter().map(|a| a.max_per_user as i32).collect::<Vec<_>>())
    .execute(&mut *tx)
    .await?;

    let c = &event.channels;
    sqlx::query(
        "insert into event_channel (event_id, code, name, position)
         select $1, code, name, ord - 1
           from unnest($2::text[], $3::text[]) with ordinality as c (code, name, ord)",
    )
    .bind(id.0)
    .bind(c.iter().map(|c| c.code.as_str()).collect::<Vec<_>>())
    .bind(c.iter().map(|c| c.name.as_str()).collect::<Vec<_>>())
    .execute(&mut *tx)
    .await?;

    upsert_allocations(&mut tx, id, &event.allocations).await?;
    if let Some(queue) = &event.queue {
        write_queue(&mut tx, id, queue).await?;
    }
    if let Some(actor) = actor {
        let change = Change {
            action: Action::EventCreated,
            target_id: id.to_string(),
            changes: serde_json::json!({
                "name": event.name,
                "venue_id": event.venue_id,
                "starts_at": event.starts_at,
                "hold_ttl_seconds": event.hold_ttl_seconds,
                "max_hold_seconds": event.max_hold_seconds,
                "max_seats_per_user": event.max_seats_per_user,
                "payment_window_seconds": event.payment_window_seconds,
                "waitlist_offer_seconds": event.waitlist_offer_seconds,
                "time_zone": event.time_zone,
                "ticket_types": event.ticket_types,
                "ga_areas": event.ga_areas.iter().map(|a| &a.code).collect::<Vec<_>>(),
                "seats_allocated": event.allocations.len(),
                "queue": event.queue,
                "entry": event.entry,
                "changes": event.changes,
            }),
        };
        audit::write(&mut tx, actor, &change).await?;
    }
    tx.commit().await?;
    Ok(true)
}

/// Locks the venue's row (`for share`, which a replacement's `for update` waits for) and
/// says whether it is still at `version`.
async fn venue_unchanged(
    tx: &mut sqlx::PgConnection,
    venue: VenueId,
    version: &VenueVersion,
) -> Result<bool, StoreError> {
    let now: Option<String> =
        sqlx::query_scalar("select xmin::text from venue where venue_id = $1 for share")
            .bind(venue.0)
            .fetch_optional(&mut *tx)
            .await?;
    Ok(now.as_deref() == Some(version.as_str()))
}

/// Every event, soonest first: of one organization, or of all.
pub async fn list_events(
    pool: &PgPool,
    organization: Option<OrganizationId>,
) -> Result<Vec<EventSummary>, StoreError> {
    Ok(sqlx::query_as(
        "select e.event_id, e.name, e.venue_id, e.starts_at, e.organization_id,
                coalesce(e.time_zone, v.time_zone) as time_zone
           from event e join venue v using (venue_id)
          where $1::uuid is null or e.organization_id = $1
          order by e.starts_at, e.event_id",
    )
    .bind(organization.map(|o| o.0))
    .fetch_all(pool)
    .await?)
}

/// One event with its settings, ticket types and areas; `None` if there is no such event.
pub async fn get_event(pool: &PgPool, id: EventId) -> Result<Option<EventRecord>, StoreError> {
    type Row = (
        uuid::Uuid,
        String,
        uuid::Uuid,
        DateTime<Utc>,
        i32,
        i32,
        i32,
        Vec<String>,
        i32,
        i32,
        uuid::Uuid,
        bool,
        Option<DateTime<Utc>>,
        String,
    );
    let Some((
        event_id,
        name,
        venue_id,
        starts_at,
        ttl,
        max_hold,
        max_seats,
        section_order,
        window,
        offer_seconds,
        organization_id,
        reentry,
        buyer_moves_until,
        time_zone,
    )) = sqlx::query_as::<_, Row>(
        "select e.event_id, e.name, e.venue_id, e.starts_at, e.hold_ttl_seconds,
                e.max_hold_seconds, e.max_seats_per_user, e.section_order,
                e.payment_window_seconds, e.waitlist_offer_seconds, e.organization_id,
                e.entry_reentry, e.buyer_moves_until, coalesce(e.time_zone, v.time_zone)
           from event e join venue v using (venue_id) where e.event_id = $1",
    )
    .bind(id.0)
    .fetch_optional(pool)
    .await?
    else {
        return Ok(None);
    };
    let ticket_types = sqlx::query_as::<_, (String, String, i64, String)>(
        "select code, name, price_cents, currency from ticket_type where event_id = $1 order by position",
    )
    .bind(id.0)
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(|(code, name, price_cents, currency)| TicketType {
        code,
        name,
        price_cents,
        currency,
    })
    .collect();
    let ga_areas = sqlx::query_as::<_, (String, String, i32, i32, i64, String, i32, i32)>(
        "select code, name, capacity, seats_left, price_cents, currency, max_per_booking,
                coalesce(max_per_user, max_per_booking)
           from ga_area where event_id = $1 order by position",
    )
    .bind(id.0)
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(
        |(code, name, capacity, left, price_cents, currency, max_per_booking, max_per_user)| {
            let area = GaArea {
                code,
                name,
                capacity: capacity as u32,
                price_cents,
                currency,
                max_per_booking: max_per_booking as u32,
                max_per_user: max_per_user as u32,
            };
            (area, left as u32)
        },
    )
    .collect();
    Ok(Some(EventRecord {
        summary: EventSummary {
            event_id: EventId(event_id),
            name,
            venue_id: VenueId(venue_id),
            starts_at,
            organization_id: OrganizationId(organization_id),
            time_zone,
        },
        hold_ttl_seconds: ttl as u32,
        max_hold_seconds: max_hold as u32,
        max_seats_per_user: max_seats as u32,
        payment_window_seconds: window as u32,
        waitlist_offer_seconds: offer_seconds as u32,
        section_order,
        ticket_types,
        ga_areas,
        channels: channels(pool, id).await?,
        queue: queue(pool, id).await?,
        entry: EntrySettings { reentry },
        changes: ChangeSettings { buyer_moves_until },
    }))
}

/// The event's sales channels, in the order given.
pub async fn channels(pool: &PgPool, id: EventId) -> Result<Vec<Channel>, StoreError> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "select code, name from event_channel where event_id = $1 order by position",
    )
    .bind(id.0)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(code, name)| Channel { code, name })
        .collect())
}

/// The settings holds are made under; `None` if there is no such event.
pub async fn hold_policy(pool: &PgPool, id: EventId) -> Result<Option<HoldPolicy>, StoreError> {
    type Row = (
        DateTime<Utc>,
        i32,
        i32,
        i32,
        i32,
        Option<String>,
        Vec<String>,
        Vec<String>,
        Vec<String>,
    );
    let row: Option<Row> = sqlx::query_as(
        "select starts_at, hold_ttl_seconds, max_hold_seconds, max_seats_per_user,
                payment_window_seconds,
                (select currency from ticket_type t where t.event_id = e.event_id order by position limit 1),
                section_order,
                array(select code from ticket_type t where t.event_id = e.event_id order by position),
                array(select code from event_channel c where c.event_id = e.event_id order by position)
           from event e where event_id = $1",
    )
    .bind(id.0)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(
        |(
            starts_at,
            ttl,
            max_hold,
            max_seats,
            window,
            currency,
            section_order,
            ticket_types,
            channels,
        )| {
            HoldPolicy {
                starts_at,
                hold_ttl_seconds: ttl as u32,
                max_hold_seconds: max_hold as u32,
                max_seats_per_user: max_seats as u32,
                payment_window_seconds: window as u32,
                currency,
                section_order,
                ticket_types,
                channels,
            }
        },
    ))
}
