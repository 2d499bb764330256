//! Events, ticket types, general-admission areas, seat allocations and sold seats.

use std::collections::HashSet;

use boxoffice_core::availability::{EventSeat, SeatStatus};
use boxoffice_core::event::{GaArea, NewEvent, QueueSettings, TicketType};
use boxoffice_core::ids::{EventId, VenueId};
use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};

use crate::hold_store::{AllocationFence, HoldStore};
use crate::StoreError;

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
    /// Every section, best first.
    pub section_order: Vec<String>,
    /// Ticket types in the order they were given.
    pub ticket_types: Vec<TicketType>,
    /// General-admission areas with the places left in each.
    pub ga_areas: Vec<(GaArea, u32)>,
    /// The waiting room, if the event has one.
    pub queue: Option<QueueSettings>,
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
    /// The event's currency; `None` if it has no ticket types.
    pub currency: Option<String>,
    /// Every section of the venue, best first.
    pub section_order: Vec<String>,
    /// The codes of the event's ticket types.
    pub ticket_types: Vec<String>,
}

/// Places left in one general-admission area.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GaLeft {
    /// Area code.
    pub code: String,
    /// Places in all.
    pub capacity: u32,
    /// Places not yet booked.
    pub left: u32,
}

/// What changes from moment to moment in an event: the version of its allocations, the
/// seats sold and the general-admission places left, read in one statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventState {
    /// Version of the event's allocations; a cached seat map of another version is stale.
    pub layout_version: i64,
    /// Ids of the seats in live orders.
    pub sold: Vec<String>,
    /// General-admission areas in order.
    pub ga: Vec<GaLeft>,
}

/// Stores a validated event with its ticket types, areas and allocations, in one transaction.
pub async fn insert_event(pool: &PgPool, id: EventId, event: &NewEvent) -> Result<(), StoreError> {
    let mut tx = pool.begin().await?;
    crate::db::allow_bulk_write(&mut tx).await?;
    sqlx::query(
        "insert into event (event_id, venue_id, name, starts_at, hold_ttl_seconds,
                            max_hold_seconds, max_seats_per_user, section_order)
         values ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(id.0)
    .bind(event.venue_id.0)
    .bind(&event.name)
    .bind(event.starts_at)
    .bind(event.hold_ttl_seconds as i32)
    .bind(event.max_hold_seconds as i32)
    .bind(event.max_seats_per_user as i32)
    .bind(&event.section_order)
    .execute(&mut *tx)
    .await?;

    let t = &event.ticket_types;
    sqlx::query(
        "insert into ticket_type (event_id, code, name, price_cents, currency, position)
         select $1, code, name, price, currency, ord - 1
           from unnest($2::text[], $3::text[], $4::int8[], $5::text[])
                with ordinality as t (code, name, price, currency, ord)",
    )
    .bind(id.0)
    .bind(t.iter().map(|t| t.code.as_str()).collect::<Vec<_>>())
    .bind(t.iter().map(|t| t.name.as_str()).collect::<Vec<_>>())
    .bind(t.iter().map(|t| t.price_cents).collect::<Vec<_>>())
    .bind(t.iter().map(|t| t.currency.as_str()).collect::<Vec<_>>())
    .execute(&mut *tx)
    .await?;

    let a = &event.ga_areas;
    sqlx::query(
        "insert into ga_area (event_id, code, name, capacity, seats_left, price_cents, currency,
                              max_per_booking, position)
         select $1, code, name, capacity, capacity, price, currency, max_per_booking, ord - 1
           from unnest($2::text[], $3::text[], $4::int4[], $5::int8[], $6::text[], $7::int4[])
                with ordinality as a (code, name, capacity, price, currency, max_per_booking, ord)",
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
    .execute(&mut *tx)
    .await?;

    upsert_allocations(&mut tx, id, &event.allocations).await?;
    if let Some(queue) = &event.queue {
        write_queue(&mut tx, id, queue).await?;
    }
    tx.commit().await?;
    Ok(())
}

async fn write_queue(
    conn: &mut PgConnection,
    id: EventId,
    queue: &QueueSettings,
) -> Result<(), StoreError> {
    sqlx::query(
        "insert into event_queue (event_id, enabled, opens_at, admit_per_minute, session_seconds,
                                  shuffle_at_open)
         values ($1, $2, $3, $4, $5, $6)
         on conflict (event_id) do update
            set enabled = excluded.enabled, opens_at = excluded.opens_at,
                admit_per_minute = excluded.admit_per_minute,
                session_seconds = excluded.session_seconds,
                shuffle_at_open = excluded.shuffle_at_open",
    )
    .bind(id.0)
    .bind(queue.enabled)
    .bind(queue.opens_at)
    .bind(queue.admit_per_minute as i32)
    .bind(queue.session_seconds as i32)
    .bind(queue.shuffle_at_open)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Sets (or, with `None`, removes) the event's waiting room; false if there is no such
/// event.
pub async fn set_queue(
    pool: &PgPool,
    id: EventId,
    queue: Option<&QueueSettings>,
) -> Result<bool, StoreError> {
    let mut tx = pool.begin().await?;
    let exists: Option<i32> =
        sqlx::query_scalar("select 1 from event where event_id = $1 for key share")
            .bind(id.0)
            .fetch_optional(&mut *tx)
            .await?;
    if exists.is_none() {
        return Ok(false);
    }
    match queue {
        Some(queue) => write_queue(&mut tx, id, queue).await?,
        None => {
            sqlx::query("delete from event_queue where event_id = $1")
                .bind(id.0)
                .execute(&mut *tx)
                .await?;
        }
    }
    tx.commit().await?;
    Ok(true)
}

/// The event's waiting room, if it has one.
pub async fn queue(pool: &PgPool, id: EventId) -> Result<Option<QueueSettings>, StoreError> {
    type Row = (bool, DateTime<Utc>, i32, i32, bool);
    let row: Option<Row> = sqlx::query_as(
        "select enabled, opens_at, admit_per_minute, session_seconds, shuffle_at_open
           from event_queue where event_id = $1",
    )
    .bind(id.0)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(
        |(enabled, opens_at, admit_per_minute, session_seconds, shuffle_at_open)| QueueSettings {
            enabled,
            opens_at,
            admit_per_minute: admit_per_minute as u32,
            session_seconds: session_seconds as u32,
            shuffle_at_open,
        },
    ))
}

/// The events whose waiting room is on, at most `limit` of them, the latest to open first.
pub async fn queued_events(pool: &PgPool, limit: i64) -> Result<Vec<EventId>, StoreError> {
    let ids: Vec<uuid::Uuid> = sqlx::query_scalar(
        "select event_id from event_queue where enabled order by opens_at desc limit $1",
    )
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(ids.into_iter().map(EventId).collect())
}

async fn upsert_allocations(
    tx: &mut PgConnection,
    id: EventId,
    allocations: &[(String, String)],
) -> Result<u64, StoreError> {
    let (seats, types): (Vec<&str>, Vec<&str>) = allocations
        .iter()
        .map(|(s, t)| (s.as_str(), t.as_str()))
        .unzip();
    let done = sqlx::query(
        "insert into seat_allocation (event_id, seat_id, ticket_type)
         select $1, * from unnest($2::text[], $3::text[])
         on conflict (event_id, seat_id) do update set ticket_type = excluded.ticket_type",
    )
    .bind(id.0)
    .bind(&seats)
    .bind(&types)
    .execute(&mut *tx)
    .await?;
    Ok(done.rows_affected())
}

/// Every event, soonest first.
pub async fn list_events(pool: &PgPool) -> Result<Vec<EventSummary>, StoreError> {
    Ok(sqlx::query_as(
        "select event_id, name, venue_id, starts_at from event order by starts_at, event_id",
    )
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
    );
    let Some((event_id, name, venue_id, starts_at, ttl, max_hold, max_seats, section_order)) =
        sqlx::query_as::<_, Row>(
            "select event_id, name, venue_id, starts_at, hold_ttl_seconds, max_hold_seconds,
                max_seats_per_user, section_order
           from event where event_id = $1",
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
    let ga_areas = sqlx::query_as::<_, (String, String, i32, i32, i64, String, i32)>(
        "select code, name, capacity, seats_left, price_cents, currency, max_per_booking
           from ga_area where event_id = $1 order by position",
    )
    .bind(id.0)
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(
        |(code, name, capacity, left, price_cents, currency, max_per_booking)| {
            let area = GaArea {
                code,
                name,
                capacity: capacity as u32,
                price_cents,
                currency,
                max_per_booking: max_per_booking as u32,
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
        },
        hold_ttl_seconds: ttl as u32,
        max_hold_seconds: max_hold as u32,
        max_seats_per_user: max_seats as u32,
        section_order,
        ticket_types,
        ga_areas,
        queue: queue(pool, id).await?,
    }))
}

/// The settings holds are made under; `None` if there is no such event.
pub async fn hold_policy(pool: &PgPool, id: EventId) -> Result<Option<HoldPolicy>, StoreError> {
    type Row = (
        DateTime<Utc>,
        i32,
        i32,
        i32,
        Option<String>,
        Vec<String>,
        Vec<String>,
    );
    let row: Option<Row> = sqlx::query_as(
        "select starts_at, hold_ttl_seconds, max_hold_seconds, max_seats_per_user,
                (select currency from ticket_type t where t.event_id = e.event_id order by position limit 1),
                section_order,
                array(select code from ticket_type t where t.event_id = e.event_id order by position)
           from event e where event_id = $1",
    )
    .bind(id.0)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(
        |(starts_at, ttl, max_hold, max_seats, currency, section_order, ticket_types)| HoldPolicy {
            starts_at,
            hold_ttl_seconds: ttl as u32,
            max_hold_seconds: max_hold as u32,
            max_seats_per_user: max_seats as u32,
            currency,
            section_order,
            ticket_types,
        },
    ))
}

/// The version of the event's allocations (it grows with every change to them); `None` if
/// there is no such event.
pub async fn layout_version(pool: &PgPool, id: EventId) -> Result<Option<i64>, StoreError> {
    let version = sqlx::query_scalar("select layout_version from event where event_id = $1")
        .bind(id.0)
        .fetch_optional(pool)
        .await?;
    Ok(version)
}

/// The event's seats in venue order with their ticket types and prices, and the version of
/// the allocations they reflect; `None` if there is no such event. One statement, so the
/// version and the seats come from one snapshot.
pub async fn seat_map(
    pool: &PgPool,
    id: EventId,
) -> Result<Option<(i64, Vec<EventSeat>)>, StoreError> {
    type Row = (
        String,
        String,
        String,
        String,
        String,
        f64,
        f64,
        Option<String>,
        Option<i64>,
        i64,
    );
    let rows: Vec<Row> = sqlx::query_as(
        "select s.seat_id, s.label, s.section_id, s.row_label, s.number, s.x, s.y,
                a.ticket_type, t.price_cents, e.layout_version
           from event e
           join seat s on s.venue_id = e.venue_id
           left join seat_allocation a on a.event_id = e.event_id and a.seat_id = s.seat_id
           left join ticket_type t on t.event_id = a.event_id and t.code = a.ticket_type
          where e.event_id = $1
          order by s.position",
    )
    .bind(id.0)
    .fetch_all(pool)
    .await?;
    let Some(version) = rows.first().map(|r| r.9) else {
        return Ok(None);
    };
    let seats = rows
        .into_iter()
        .map(
            |(id, label, section, row, number, x, y, ticket_type, price_cents, _)| EventSeat {
                id,
                label,
                section,
                row,
                number,
                x,
                y,
                ticket_type,
                price_cents,
            },
        )
        .collect();
    Ok(Some((version, seats)))
}

/// The event's allocation version, sold seats and general-admission places left, in one
/// round trip; `None` if there is no such event.
pub async fn event_state(pool: &PgPool, id: EventId) -> Result<Option<EventState>, StoreError> {
    type Row = (i64, Vec<String>, Vec<String>, Vec<i32>, Vec<i32>);
    let row: Option<Row> = sqlx::query_as(
        "select e.layout_version,
                array(select seat_id from order_seat o where o.event_id = e.event_id and not o.released),
                array(select code from ga_area g where g.event_id = e.event_id order by position),
                array(select capacity from ga_area g where g.event_id = e.event_id order by position),
                array(select seats_left from ga_area g where g.event_id = e.event_id order by position)
           from event e where e.event_id = $1",
    )
    .bind(id.0)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(
        |(layout_version, sold, codes, capacities, lefts)| EventState {
            layout_version,
            sold,
            ga: codes
                .into_iter()
                .zip(capacities)
                .zip(lefts)
                .map(|((code, capacity), left)| GaLeft {
                    code,
                    capacity: capacity as u32,
                    left: left as u32,
                })
                .collect(),
        },
    ))
}

/// A change to which seats are on sale.
#[derive(Clone, Debug)]
pub enum AllocationChange {
    /// Put these seats on sale at these ticket types, `(seat id, ticket type)`.
    Put(Vec<(String, String)>),
    /// Take these seats off sale.
    Withdraw(Vec<String>),
}

/// What an allocation change did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllocationOutcome {
    /// Seats put on sale, re-priced or withdrawn.
    pub changed: u64,
    /// Seats left as they were because they are held or sold, in the order asked.
    pub skipped: Vec<(String, SeatStatus)>,
}

/// Applies an allocation change to every named seat that is neither held nor sold, and
/// bumps the event's allocation version; `None` if there is no such event.
///
/// Why this is safe against a concurrent hold: the event row is locked first (`for no key
/// update`, which leaves foreign-key checks from holds and orders free to proceed but
/// queues every other allocation change), then the named allocation rows `for update`.
/// A hold in flight on the postgres store takes a share lock on the allocation rows of its
/// seats, so the update lock waits for it to commit and the held seats read afterwards
/// include it; a hold that starts later waits for this transaction and then sees the new
/// allocation. The redis store instead keeps new holds out of the event from the moment
/// the held seats are read until the change has committed, and then makes every hold
/// quote its seats from the new version (see [`HoldStore::fence_allocations`]).
pub async fn change_allocations(
    pool: &PgPool,
    holds: &dyn HoldStore,
    id: EventId,
    change: AllocationChange,
) -> Result<Option<AllocationOutcome>, StoreError> {
    let mut tx = pool.begin().await?;
    let found = sqlx::query("select 1 from event where event_id = $1 for no key update")
        .bind(id.0)
        .fetch_optional(&mut *tx)
        .await?;
    if found.is_none() {
        return Ok(None);
    }
    let named: Vec<String> = match &change {
        AllocationChange::Put(list) => list.iter().map(|(s, _)| s.clone()).collect(),
        AllocationChange::Withdraw(list) => list.clone(),
    };
    // In seat order, as holds lock them, so the two never wait on each other in a cycle.
    sqlx::query(
        "select 1 from seat_allocation where event_id = $1 and seat_id = any($2)
          order by seat_id for update",
    )
    .bind(id.0)
    .bind(&named)
    .execute(&mut *tx)
    .await?;
    let fence = holds.fence_allocations(id).await?;
    let outcome = match apply_allocation_change(&mut tx, id, &named, change, &fence).await {
        Ok(outcome) => tx
            .commit()
            .await
            .map(|()| outcome)
            .map_err(StoreError::from),
        Err(e) => Err(e),
    };
    holds.lift_fence(id, fence).await;
    outcome.map(Some)
}

/// The body of [`change_allocations`], inside its transaction and fence.
async fn apply_allocation_change(
    tx: &mut PgConnection,
    id: EventId,
    named: &[String],
    change: AllocationChange,
    fence: &AllocationFence,
) -> Result<AllocationOutcome, StoreError> {
    let sold: HashSet<String> = sqlx::query_scalar(
        "select seat_id from order_seat where event_id = $1 and seat_id = any($2) and not released",
    )
    .bind(id.0)
    .bind(named)
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .collect();
    let held: HashSet<&str> = fence.held.iter().map(|h| h.seat_id.as_str()).collect();

    let status = |seat: &str| {
        if sold.contains(seat) {
            Some(SeatStatus::Sold)
        } else if held.contains(seat) {
            Some(SeatStatus::Held)
        } else {
            None
        }
    };
    let skipped: Vec<(String, SeatStatus)> = named
        .iter()
        .filter_map(|s| status(s).map(|st| (s.to_string(), st)))
        .collect();
    let changed = match change {
        AllocationChange::Put(list) => {
            let free: Vec<(String, String)> = list
                .into_iter()
                .filter(|(s, _)| status(s).is_none())
                .collect();
            upsert_allocations(tx, id, &free).await?
        }
        AllocationChange::Withdraw(list) => {
            let free: Vec<String> = list.into_iter().filter(|s| status(s).is_none()).collect();
            sqlx::query("delete from seat_allocation where event_id = $1 and seat_id = any($2)")
                .bind(id.0)
                .bind(&free)
                .execute(&mut *tx)
                .await?
                .rows_affected()
        }
    };
    sqlx::query("update event set layout_version = layout_version + 1 where event_id = $1")
        .bind(id.0)
        .execute(&mut *tx)
        .await?;
    Ok(AllocationOutcome { changed, skipped })
}
