//! What availability reads of an event: its allocation version, its seat map, and what
//! changes from moment to moment (sold seats, general-admission places left).

use boxoffice_core::availability::EventSeat;
use boxoffice_core::ids::EventId;
use boxoffice_core::venue::{Point, SeatAttributes, Shape};
use sqlx::types::Json;
use sqlx::PgPool;

use crate::StoreError;

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
    /// Ids of the seats in live orders, but those listed for resale.
    pub sold: Vec<String>,
    /// Ids of the seats their buyers list for resale.
    pub listed: Vec<String>,
    /// General-admission areas in order.
    pub ga: Vec<GaLeft>,
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

/// The event's seats in venue order with their ticket types and prices as a buyer in
/// `channel` (`None`: in none) sees them, and the version of the allocations they reflect;
/// `None` if there is no such event. A seat allocated to another channel has no ticket type
/// (it is not on sale to them) and is listed in the second vector, by its place in the
/// first. One statement, so the version and the seats come from one snapshot.
pub async fn seat_map(
    pool: &PgPool,
    id: EventId,
    channel: Option<&str>,
) -> Result<Option<SeatMapRead>, StoreError> {
    let rows: Vec<SeatMapRow> = sqlx::query_as(
        "select s.seat_id, s.label, s.section_id, s.row_label, s.number, s.x, s.y,
                case when a.channel is null or a.channel = $2 then a.ticket_type end
                    as ticket_type,
                case when a.channel is null or a.channel = $2 then t.price_cents end
                    as price_cents,
                a.channel is not null and a.channel is distinct from $2 as elsewhere,
                e.layout_version,
                s.category, s.accessible, s.companion, s.restricted_view, s.external_id
           from event e
           join seat s on s.venue_id = e.venue_id
           left join seat_allocation a on a.event_id = e.event_id and a.seat_id = s.seat_id
           left join ticket_type t on t.event_id = a.event_id and t.code = a.ticket_type
          where e.event_id = $1
          order by s.position",
    )
    .bind(id.0)
    .bind(channel)
    .fetch_all(pool)
    .await?;
    let Some(version) = rows.first().map(|r| r.layout_version) else {
        return Ok(None);
    };
    let elsewhere = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.elsewhere.then_some(i))
        .collect();
    let seats = rows
        .into_iter()
        .map(|r| EventSeat {
            id: r.seat_id,
            label: r.label,
            section: r.section_id,
            row: r.row_label,
            number: r.number,
            x: r.x,
            y: r.y,
            ticket_type: r.ticket_type,
            price_cents: r.price_cents,
            attributes: SeatAttributes {
                category: r.category,
                accessible: r.accessible,
                companion: r.companion,
                restricted_view: r.restricted_view,
            },
            external_id: r.external_id,
        })
        .collect();
    Ok(Some(SeatMapRead {
        version,
        seats,
        elsewhere,
    }))
}

/// An event's seat map as one channel's buyers (or buyers in none) see it.
#[derive(Clone, Debug, PartialEq)]
pub struct SeatMapRead {
    /// The version of the allocations it reflects.
    pub version: i64,
    /// Every seat, in venue order.
    pub seats: Vec<EventSeat>,
    /// Where in `seats` the seats allocated to other channels are, ascending.
    pub elsewhere: Vec<usize>,
}

/// The shapes drawn behind the seats of the event's venue and its focal point (if it has
/// one); `None` if there is no such event.
pub async fn shapes(
    pool: &PgPool,
    id: EventId,
) -> Result<Option<(Vec<Shape>, Option<Point>)>, StoreError> {
    type Look = (Json<Vec<Shape>>, Option<f64>, Option<f64>);
    let row: Option<Look> = sqlx::query_as(
        "select v.shapes, v.focal_x, v.focal_y
           from event e join venue v using (venue_id) where e.event_id = $1",
    )
    .bind(id.0)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|(Json(shapes), x, y)| (shapes, x.zip(y).map(|(x, y)| Point { x, y }))))
}

/// The event's allocation version, sold seats and general-admission places left, in one
/// round trip; `None` if there is no such event.
pub async fn event_state(pool: &PgPool, id: EventId) -> Result<Option<EventState>, StoreError> {
    type Row = (
        i64,
        Vec<String>,
        Vec<String>,
        Vec<String>,
        Vec<i32>,
        Vec<i32>,
    );
    let row: Option<Row> = sqlx::query_as(
        "select e.layout_version,
                array(select seat_id from order_seat o where o.event_id = e.event_id and not o.released
                         and not exists (select 1 from resale_listing l
                                          where l.event_id = o.event_id and l.seat_id = o.seat_id)),
                array(select seat_id from resale_listing l where l.event_id = e.event_id),
                array(select code from ga_area g where g.event_id = e.event_id order by position),
                array(select capacity from ga_area g where g.event_id = e.event_id order by position),
                array(select seats_left from ga_area g where g.event_id = e.event_id order by position)
           from event e where e.event_id = $1",
    )
    .bind(id.0)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(
        |(layout_version, sold, listed, codes, capacities, lefts)| EventState {
            layout_version,
            sold,
            listed,
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

/// A seat of an event's map as `seat_map` reads it.
#[derive(sqlx::FromRow)]
struct SeatMapRow {
    seat_id: String,
    label: String,
    section_id: String,
    row_label: String,
    number: String,
    x: f64,
    y: f64,
    ticket_type: Option<String>,
    price_cents: Option<i64>,
    elsewhere: bool,
    layout_version: i64,
    category: Option<String>,
    accessible: bool,
    companion: bool,
    restricted_view: bool,
    external_id: Option<String>,
}
