//! Venues and their seat maps.

use boxoffice_core::ids::{OrganizationId, VenueId};
use boxoffice_core::venue::{Point, Row, Seat, SeatAttributes, Section, Shape, VenueLayout};
use sqlx::types::Json;
use sqlx::AssertSqlSafe;
use sqlx::PgPool;

use crate::journal::audit::{self, Action, Actor, Change};
use crate::StoreError;

/// Stores a validated venue with every section, row and seat, in one transaction.
pub async fn insert_venue(
    pool: &PgPool,
    id: VenueId,
    organization: OrganizationId,
    layout: &VenueLayout,
    actor: Option<&Actor>,
) -> Result<(), StoreError> {
    let mut tx = pool.begin().await?;
    crate::pg::db::allow_bulk_write(&mut tx).await?;
    sqlx::query(
        "insert into venue (venue_id, name, seat_count, shapes, organization_id, focal_x, focal_y,
                            time_zone)
         values ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(id.0)
    .bind(&layout.name)
    .bind(layout.seat_count() as i32)
    .bind(Json(&layout.shapes))
    .bind(organization.0)
    .bind(layout.focal_point.map(|p| p.x))
    .bind(layout.focal_point.map(|p| p.y))
    .bind(&layout.time_zone)
    .execute(&mut *tx)
    .await?;
    write_seats(&mut tx, id, layout).await?;
    if let Some(actor) = actor {
        let change = Change {
            action: Action::VenueCreated,
            target_id: id.to_string(),
            changes: serde_json::json!({
                "name": layout.name,
                "seat_count": layout.seat_count(),
                "sections": layout.sections.len(),
            }),
        };
        audit::write(&mut tx, actor, &change).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// What [`replace_venue`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replaced {
    /// The venue is the layout now.
    Done,
    /// No such venue.
    NotFound,
    /// An event or a season uses the venue: its seats stay as they are.
    InUse,
}

/// Replaces venue `id`'s name, sections, rows, seats, shapes and focal point with
/// `layout`, in one transaction, unless an event or a season uses it. The venue's row is
/// locked first (`FOR UPDATE`), which waits for an event being created on it to commit
/// (its foreign key locks the row too) and then sees that event.
pub async fn replace_venue(
    pool: &PgPool,
    id: VenueId,
    layout: &VenueLayout,
    actor: &Actor,
) -> Result<Replaced, StoreError> {
    let mut tx = pool.begin().await?;
    crate::pg::db::allow_bulk_write(&mut tx).await?;
    let Some((name, seats)) = sqlx::query_as::<_, (String, i32)>(
        "select name, seat_count from venue where venue_id = $1 for update",
    )
    .bind(id.0)
    .fetch_optional(&mut *tx)
    .await?
    else {
        return Ok(Replaced::NotFound);
    };
    let used: bool = sqlx::query_scalar(
        "select exists (select 1 from event where venue_id = $1)
             or exists (select 1 from season where venue_id = $1)",
    )
    .bind(id.0)
    .fetch_one(&mut *tx)
    .await?;
    if used {
        return Ok(Replaced::InUse);
    }
    for table in ["seat", "venue_row", "venue_section"] {
        sqlx::query(AssertSqlSafe(format!(
            "delete from {table} where venue_id = $1"
        )))
        .bind(id.0)
        .execute(&mut *tx)
        .await?;
    }
    sqlx::query(
        "update venue set name = $2, seat_count = $3, shapes = $4, focal_x = $5, focal_y = $6,
                          time_zone = $7
          where venue_id = $1",
    )
    .bind(id.0)
    .bind(&layout.name)
    .bind(layout.seat_count() as i32)
    .bind(Json(&layout.shapes))
    .bind(layout.focal_point.map(|p| p.x))
    .bind(layout.focal_point.map(|p| p.y))
    .bind(&layout.time_zone)
    .execute(&mut *tx)
    .await?;
    write_seats(&mut tx, id, layout).await?;
    let change = Change {
        action: Action::VenueUpdated,
        target_id: id.to_string(),
        changes: serde_json::json!({
            "name": [name, layout.name],
            "seat_count": [seats, layout.seat_count()],
        }),
    };
    audit::write(&mut tx, actor, &change).await?;
    tx.commit().await?;
    Ok(Replaced::Done)
}

/// Writes `layout`'s sections, rows and seats under venue `id`, one statement a table.
async fn write_seats(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    id: VenueId,
    layout: &VenueLayout,
) -> Result<(), StoreError> {
    let mut s = SectionColumns::default();
    let mut r = RowColumns::default();
    let mut seats = SeatColumns::default();
    for (si, section) in layout.sections.iter().enumerate() {
        s.id.push(section.id.as_str());
        s.name.push(section.name.as_str());
        s.origin_x.push(section.origin.x);
        s.origin_y.push(section.origin.y);
        s.seat_spacing.push(section.seat_spacing);
        s.row_spacing.push(section.row_spacing);
        s.position.push(si as i32);
        for (ri, row) in section.rows.iter().enumerate() {
            r.section.push(section.id.as_str());
            r.label.push(row.label.as_str());
            r.position.push(ri as i32);
            for seat in &row.seats {
                seats.position.push(seats.id.len() as i32);
                seats.id.push(seat.id.as_str());
                seats.section.push(section.id.as_str());
                seats.row.push(row.label.as_str());
                seats.number.push(seat.number.as_str());
                seats.label.push(seat.label.as_str());
                seats.x.push(seat.x);
                seats.y.push(seat.y);
                let a = &seat.attributes;
                seats.category.push(a.category.as_deref());
                seats.accessible.push(a.accessible);
                seats.companion.push(a.companion);
                seats.restricted_view.push(a.restricted_view);
                seats.external_id.push(seat.external_id.as_deref());
            }
        }
    }
    // One statement per table, whatever the venue's size: arrays in, unnest on the server.
    sqlx::query(
        "insert into venue_section
             (venue_id, section_id, name, origin_x, origin_y, seat_spacing, row_spacing, position)
         select $1, * from unnest($2::text[], $3::text[], $4::float8[], $5::float8[],
                                  $6::float8[], $7::float8[], $8::int4[])",
    )
    .bind(id.0)
    .bind(&s.id)
    .bind(&s.name)
    .bind(&s.origin_x)
    .bind(&s.origin_y)
    .bind(&s.seat_spacing)
    .bind(&s.row_spacing)
    .bind(&s.position)
    .execute(&mut **tx)
    .await?;
    sqlx::query(
        "insert into venue_row (venue_id, section_id, label, position)
         select $1, * from unnest($2::text[], $3::text[], $4::int4[])",
    )
    .bind(id.0)
    .bind(&r.section)
    .bind(&r.label)
    .bind(&r.position)
    .execute(&mut **tx)
    .await?;
    sqlx::query(
        "insert into seat (venue_id, seat_id, position, section_id, row_label, number, label, x, y,
                           category, accessible, companion, restricted_view, external_id)
         select $1, * from unnest($2::text[], $3::int4[], $4::text[], $5::text[], $6::text[],
                                  $7::text[], $8::float8[], $9::float8[], $10::text[],
                                  $11::bool[], $12::bool[], $13::bool[], $14::text[])",
    )
    .bind(id.0)
    .bind(&seats.id)
    .bind(&seats.position)
    .bind(&seats.section)
    .bind(&seats.row)
    .bind(&seats.number)
    .bind(&seats.label)
    .bind(&seats.x)
    .bind(&seats.y)
    .bind(&seats.category)
    .bind(&seats.accessible)
    .bind(&seats.companion)
    .bind(&seats.restricted_view)
    .bind(&seats.external_id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

#[derive(Default)]
struct SectionColumns<'a> {
    id: Vec<&'a str>,
    name: Vec<&'a str>,
    origin_x: Vec<f64>,
    origin_y: Vec<f64>,
    seat_spacing: Vec<f64>,
    row_spacing: Vec<f64>,
    position: Vec<i32>,
}

#[derive(Default)]
struct RowColumns<'a> {
    section: Vec<&'a str>,
    label: Vec<&'a str>,
    position: Vec<i32>,
}

#[derive(Default)]
struct SeatColumns<'a> {
    id: Vec<&'a str>,
    position: Vec<i32>,
    section: Vec<&'a str>,
    row: Vec<&'a str>,
    number: Vec<&'a str>,
    label: Vec<&'a str>,
    x: Vec<f64>,
    y: Vec<f64>,
    category: Vec<Option<&'a str>>,
    accessible: Vec<bool>,
    companion: Vec<bool>,
    restricted_view: Vec<bool>,
    external_id: Vec<Option<&'a str>>,
}

/// Every venue's id, name and seat count, newest first: of one organization, or of all.
pub async fn list_venues(
    pool: &PgPool,
    organization: Option<OrganizationId>,
) -> Result<Vec<(VenueId, String, usize)>, StoreError> {
    let rows: Vec<(uuid::Uuid, String, i32)> = sqlx::query_as(
        "select venue_id, name, seat_count from venue
          where $1::uuid is null or organization_id = $1
          order by created_at desc, venue_id",
    )
    .bind(organization.map(|o| o.0))
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, name, seats)| (VenueId(id), name, seats as usize))
        .collect())
}

/// Loads a venue's whole seat map; `None` if there is no such venue.
pub async fn get_venue(pool: &PgPool, id: VenueId) -> Result<Option<VenueLayout>, StoreError> {
    Ok(read_venue(pool, id).await?.map(|(layout, _)| layout))
}

/// The version of a venue as read: its row's version (`xmin`), which every replacement
/// changes. A writer that acts on what it read checks it under the venue row's lock
/// ([`crate::pg::events::insert_event`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VenueVersion(String);

impl VenueVersion {
    /// As Postgres writes it.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

/// Loads a venue's whole seat map, with its version; `None` if there is no such venue.
///
/// The venue's row, sections, rows and seats are read in one snapshot (a repeatable-read,
/// read-only transaction), so a replacement committing meanwhile is read whole or not at
/// all: a reader gets the old venue or the new one, never a mix.
pub async fn read_venue(
    pool: &PgPool,
    id: VenueId,
) -> Result<Option<(VenueLayout, VenueVersion)>, StoreError> {
    type Head = (
        String,
        Json<Vec<Shape>>,
        Option<f64>,
        Option<f64>,
        String,
        String,
    );
    let mut tx = pool.begin().await?;
    sqlx::query("set transaction isolation level repeatable read, read only")
        .execute(&mut *tx)
        .await?;
    let Some((name, Json(shapes), focal_x, focal_y, time_zone, version)) =
        sqlx::query_as::<_, Head>(
            "select name, shapes, focal_x, focal_y, time_zone, xmin::text
               from venue where venue_id = $1",
        )
        .bind(id.0)
        .fetch_optional(&mut *tx)
        .await?
    else {
        return Ok(None);
    };
    let sections: Vec<(String, String, f64, f64, f64, f64)> = sqlx::query_as(
        "select section_id, name, origin_x, origin_y, seat_spacing, row_spacing
           from venue_section where venue_id = $1 order by position",
    )
    .bind(id.0)
    .fetch_all(&mut *tx)
    .await?;
    let rows: Vec<(String, String)> = sqlx::query_as(
        "select r.section_id, r.label
           from venue_row r join venue_section s using (venue_id, section_id)
          where r.venue_id = $1 order by s.position, r.position",
    )
    .bind(id.0)
    .fetch_all(&mut *tx)
    .await?;
    let seats: Vec<SeatRow> = sqlx::query_as(
        "select seat_id, section_id, row_label, number, label, x, y,
                category, accessible, companion, restricted_view, external_id
           from seat where venue_id = $1 order by position",
    )
    .bind(id.0)
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;

    let mut layout = VenueLayout {
        name,
        sections: sections
            .into_iter()
            .map(|(id, name, ox, oy, seat_spacing, row_spacing)| Section {
                id,
                name,
                origin: Point { x: ox, y: oy },
                seat_spacing,
                row_spacing,
                rows: Vec::new(),
            })
            .collect(),
        shapes,
        focal_point: focal_x.zip(focal_y).map(|(x, y)| Point { x, y }),
        time_zone,
    };
    assemble(&mut layout, rows, seats)
        .map_err(|what| StoreError::Other(format!("venue {id}: {what}").into()))?;
    Ok(Some((layout, VenueVersion(version))))
}

/// Puts `rows` and `seats`, read in venue order, into `layout`'s sections: each belongs to
/// the last section or row opened with its name. A row or seat of no section read (which
/// one snapshot never gives) is an error, not a panic.
fn assemble(
    layout: &mut VenueLayout,
    rows: Vec<(String, String)>,
    seats: Vec<SeatRow>,
) -> Result<(), String> {
    let mut si = 0;
    for (section, label) in rows {
        si += layout.sections[si..]
            .iter()
            .position(|s| s.id == section)
            .ok_or_else(|| format!("row {label} of section {section}, out of order"))?;
        layout.sections[si].rows.push(Row {
            label,
            seats: Vec::new(),
        });
    }
    let (mut si, mut ri) = (0, 0);
    for seat in seats {
        if layout.sections.get(si).is_none_or(|s| s.id != seat.section) {
            si += layout.sections[si..]
                .iter()
                .position(|s| s.id == seat.section)
                .ok_or_else(|| format!("seat {} of an unknown section", seat.seat_id))?;
            ri = 0;
        }
        let rows = &mut layout.sections[si].rows;
        ri += rows
            .get(ri..)
            .and_then(|rows| rows.iter().position(|r| r.label == seat.row))
            .ok_or_else(|| format!("seat {} of an unknown row", seat.seat_id))?;
        rows[ri].seats.push(Seat {
            id: seat.seat_id,
            number: seat.number,
            label: seat.label,
            x: seat.x,
            y: seat.y,
            attributes: SeatAttributes {
                category: seat.category,
                accessible: seat.accessible,
                companion: seat.companion,
                restricted_view: seat.restricted_view,
            },
            external_id: seat.external_id,
        });
    }
    Ok(())
}

/// A seat as `get_venue` reads it.
#[derive(sqlx::FromRow)]
struct SeatRow {
    seat_id: String,
    #[sqlx(rename = "section_id")]
    section: String,
    #[sqlx(rename = "row_label")]
    row: String,
    number: String,
    label: String,
    x: f64,
    y: f64,
    category: Option<String>,
    accessible: bool,
    companion: bool,
    restricted_view: bool,
    external_id: Option<String>,
}
