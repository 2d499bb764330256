//! Tickets and entry: reading the tickets of orders and bookings, the organizations' entry
//! keys, check-ins, the revocation list and the door's counts.
//!
//! A seat's ticket is its sold `order_seat` row and a GA place's a `ga_ticket` row; the
//! triggers of migration 0027 issue and revoke them with the sale, so nothing here writes
//! a ticket. The scan itself, a change to a sold seat like a resale or a cancellation, is
//! [`crate::sales::door`], under the seat's lock. (A long file: a ticket's whole life after
//! the sale, from reading it to the door's counts, in one place.)

use boxoffice_core::ids::{EventId, KeyId, OrganizationId};
use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::AssertSqlSafe;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::journal::audit::{self, Action, Actor, Change};
use crate::StoreError;

/// Where a ticket stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TicketStatus {
    /// Sold, not scanned in yet.
    Valid,
    /// Let in at least once.
    Redeemed,
    /// Cancelled, moved or resold: it lets nobody in.
    Revoked,
}

impl TicketStatus {
    /// The name the API gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            TicketStatus::Valid => "valid",
            TicketStatus::Redeemed => "redeemed",
            TicketStatus::Revoked => "revoked",
        }
    }
}

/// What a ticket is for: a seat, or a place in a GA area.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Admits {
    /// A seat, sold in an order.
    Seat {
        /// The event order it is in.
        order_id: Uuid,
        /// The season order, if the seat was sold with a season.
        season_order_id: Option<Uuid>,
        /// The seat.
        seat_id: String,
    },
    /// One place of a GA booking.
    Place {
        /// The booking.
        booking_id: Uuid,
        /// The area's code.
        area: String,
        /// The area's name.
        area_name: String,
        /// This place, 1 to `places`.
        place: u32,
        /// The booking's places.
        places: u32,
    },
}

/// A ticket as it is stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredTicket {
    /// Its id.
    pub ticket_id: Uuid,
    /// Its event.
    pub event_id: EventId,
    /// The event's organization, whose entry key signs it.
    pub organization_id: OrganizationId,
    /// A seat or a place.
    pub admits: Admits,
    /// The ticket type's code (a GA place: its area's).
    pub ticket_type: String,
    /// The buyer's user id.
    pub holder: String,
    /// When it was issued: the sale, the payment, or the move that issued it.
    pub issued_at: DateTime<Utc>,
    /// Where it stands.
    pub status: TicketStatus,
    /// What it was sold at: its seat's price, or its booking's total over its places.
    pub price_cents: i64,
    /// The currency of the order or booking.
    pub currency: String,
}

/// A ticket's row, seat or place, as [`tickets_query`] selects it.
#[derive(sqlx::FromRow)]
struct TicketRow {
    ticket_id: Uuid,
    event_id: Uuid,
    organization_id: Uuid,
    order_id: Option<Uuid>,
    season_order_id: Option<Uuid>,
    booking_id: Option<Uuid>,
    seat_id: Option<String>,
    area: Option<String>,
    area_name: Option<String>,
    place: Option<i32>,
    places: Option<i32>,
    ticket_type: String,
    holder: String,
    issued_at: DateTime<Utc>,
    status: String,
    price_cents: i64,
    currency: String,
}

/// The tickets' rows, seats then places, each filtered by `{seats}` and `{places}`, in
/// event order, then seat or place. A released seat row is a ticket only once revoked: a
/// pending order's seats have none.
///
/// Whether a ticket was let in or revoked is a scalar subquery on the row's primary key,
/// not `exists`: Postgres may plan an `exists` here as a hash of the whole table (all of
/// an event's entries, for one ticket read at the door: 0.3 s a scan at 77,000 entries).
fn tickets_query(seats: &str, places: &str) -> String {
    format!(
        "select s.ticket_id, s.event_id, e.organization_id, o.order_id, o.season_order_id,
                null::uuid as booking_id, s.seat_id, null::text as area,
                null::text as area_name, null::int4 as place, null::int4 as places,
                s.ticket_type, o.user_id as holder,
                coalesce(s.issued_at, o.paid_at, o.created_at) as issued_at,
                case when s.released then 'revoked'
                     when (select true from ticket_entry t
                            where t.event_id = s.event_id and t.ticket_id = s.ticket_id)
                     then 'redeemed' else 'valid' end as status,
                s.price_cents, o.currency::text as currency,
                e.starts_at, 0 as place_order
           from order_seat s
           join ticket_order o using (event_id, order_id)
           join event e using (event_id)
          where ({seats})
            and (not s.released or (select true from revoked_ticket r
                                     where r.event_id = s.event_id
                                       and r.ticket_id = s.ticket_id))
         union all
         select g.ticket_id, g.event_id, e.organization_id, null, null, b.booking_id, null,
                b.area, a.name, g.place, b.quantity, b.area, b.user_id, g.issued_at,
                case when b.status <> 'confirmed' then 'revoked'
                     when (select true from ticket_entry t
                            where t.event_id = g.event_id and t.ticket_id = g.ticket_id)
                     then 'redeemed' else 'valid' end,
                b.total_cents / b.quantity, b.currency::text,
                e.starts_at, g.place
           from ga_ticket g
           join ga_booking b using (event_id, booking_id)
           join ga_area a on a.event_id = b.event_id and a.code = b.area
           join event e on e.event_id = g.event_id
          where ({places})
          order by starts_at, event_id, seat_id, place_order"
    )
}

impl From<TicketRow> for StoredTicket {
    fn from(r: TicketRow) -> Self {
        let admits = match (r.order_id, r.seat_id) {
            (Some(order_id), Some(seat_id)) => Admits::Seat {
                order_id,
                season_order_id: r.season_order_id,
                seat_id,
            },
            _ => Admits::Place {
                booking_id: r.booking_id.unwrap_or_default(),
                area: r.area.unwrap_or_default(),
                area_name: r.area_name.unwrap_or_default(),
                place: r.place.unwrap_or_default() as u32,
                places: r.places.unwrap_or_default() as u32,
            },
        };
        StoredTicket {
            ticket_id: r.ticket_id,
            event_id: EventId(r.event_id),
            organization_id: OrganizationId(r.organization_id),
            admits,
            ticket_type: r.ticket_type,
            holder: r.holder,
            issued_at: r.issued_at,
            status: match r.status.as_str() {
                "revoked" => TicketStatus::Revoked,
                "redeemed" => TicketStatus::Redeemed,
                _ => TicketStatus::Valid,
            },
            price_cents: r.price_cents,
            currency: r.currency,
        }
    }
}

async fn tickets_where(
    conn: &mut PgConnection,
    seats: &str,
    places: &str,
    id: Uuid,
) -> Result<Vec<StoredTicket>, StoreError> {
    let rows: Vec<TicketRow> = sqlx::query_as(AssertSqlSafe(tickets_query(seats, places)))
        .bind(id)
        .fetch_all(&mut *conn)
        .await?;
    Ok(rows.into_iter().map(StoredTicket::from).collect())
}

/// The tickets of an event order, or of every night of a season order (by the season
/// order's id or one of its nights'), in event then seat order: revoked ones too, none
/// for an order not paid.
pub async fn of_order(pool: &PgPool, order_id: Uuid) -> Result<Vec<StoredTicket>, StoreError> {
    let mut conn = pool.acquire().await?;
    tickets_where(
        &mut conn,
        "o.order_id = $1 or o.season_order_id = $1",
        "false",
        order_id,
    )
    .await
}

/// The tickets of a GA booking, a place each.
pub async fn of_booking(pool: &PgPool, booking_id: Uuid) -> Result<Vec<StoredTicket>, StoreError> {
    let mut conn = pool.acquire().await?;
    tickets_where(&mut conn, "false", "g.booking_id = $1", booking_id).await
}

/// One ticket by id, if there is one (a pending order's seats have none).
pub async fn find(
    conn: &mut PgConnection,
    ticket_id: Uuid,
) -> Result<Option<StoredTicket>, StoreError> {
    Ok(
        tickets_where(conn, "s.ticket_id = $1", "g.ticket_id = $1", ticket_id)
            .await?
            .into_iter()
            .next(),
    )
}

/// One ticket by id, on a connection of its own.
pub async fn load(pool: &PgPool, ticket_id: Uuid) -> Result<Option<StoredTicket>, StoreError> {
    let mut conn = pool.acquire().await?;
    find(&mut conn, ticket_id).await
}

/// An organization's entry key as stored.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct StoredEntryKey {
    /// Its name in a ticket's payload.
    pub kid: String,
    /// Its organization.
    #[sqlx(try_from = "Uuid")]
    pub organization_id: OrganizationId,
    /// The 32-byte seed of the signing key.
    pub private_key: Vec<u8>,
    /// The 32-byte public key.
    pub public_key: Vec<u8>,
    /// When it began to sign.
    pub created_at: DateTime<Utc>,
    /// When it stopped signing, if it did.
    pub retired_at: Option<DateTime<Utc>>,
}

/// A new entry key, made by the caller.
pub struct NewEntryKey<'a> {
    /// Its organization.
    pub organization_id: OrganizationId,
    /// Its name.
    pub kid: &'a str,
    /// The 32-byte seed.
    pub private_key: &'a [u8; 32],
    /// The public key.
    pub public_key: &'a [u8; 32],
}

/// Every entry key of every organization, oldest first.
pub async fn all_entry_keys(pool: &PgPool) -> Result<Vec<StoredEntryKey>, StoreError> {
    Ok(sqlx::query_as(
        "select kid, organization_id, private_key, public_key, created_at, retired_at
           from entry_key order by organization_id, created_at",
    )
    .fetch_all(pool)
    .await?)
}

/// Gives the organization its first entry key, unless it has one that signs already
/// (perhaps made by another server at the same moment): whether this one was stored.
pub async fn ensure_entry_key(pool: &PgPool, key: &NewEntryKey<'_>) -> Result<bool, StoreError> {
    Ok(sqlx::query(
        "insert into entry_key (kid, organization_id, private_key, public_key)
         values ($1, $2, $3, $4) on conflict do nothing",
    )
    .bind(key.kid)
    .bind(key.organization_id.0)
    .bind(&key.private_key[..])
    .bind(&key.public_key[..])
    .execute(pool)
    .await?
    .rows_affected()
        == 1)
}

/// Retires the organization's signing entry key and stores `key` to sign from now on, with
/// its audit entry.
pub async fn rotate_entry_key(
    pool: &PgPool,
    key: &NewEntryKey<'_>,
    actor: &Actor,
) -> Result<StoredEntryKey, StoreError> {
    let mut tx = pool.begin().await?;
    let retired: Vec<String> = sqlx::query_scalar(
        "update entry_key set retired_at = now()
          where organization_id = $1 and retired_at is null returning kid",
    )
    .bind(key.organization_id.0)
    .fetch_all(&mut *tx)
    .await?;
    let stored: StoredEntryKey = sqlx::query_as(
        "insert into entry_key (kid, organization_id, private_key, public_key)
         values ($1, $2, $3, $4)
         returning kid, organization_id, private_key, public_key, created_at, retired_at",
    )
    .bind(key.kid)
    .bind(key.organization_id.0)
    .bind(&key.private_key[..])
    .bind(&key.public_key[..])
    .fetch_one(&mut *tx)
    .await?;
    let change = Change {
        action: Action::EntryKeyCreated,
        target_id: key.organization_id.to_string(),
        changes: json!({ "kid": key.kid, "retired": retired }),
    };
    audit::write(&mut tx, actor, &change).await?;
    tx.commit().await?;
    Ok(stored)
}

/// Entry or exit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Passage {
    /// In through a gate.
    Entry,
    /// Out.
    Exit,
}

impl Passage {
    /// The name the API gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            Passage::Entry => "entry",
            Passage::Exit => "exit",
        }
    }
}

/// A scan to record.
pub struct Scan<'a> {
    /// The event at whose door it was scanned.
    pub event: EventId,
    /// The ticket, its signature checked.
    pub ticket_id: Uuid,
    /// The scanner's id for this scan.
    pub nonce: &'a str,
    /// In or out.
    pub passage: Passage,
    /// Where.
    pub gate: Option<&'a str>,
    /// When the scanner saw it (an upload); `None`: now.
    pub scanned_at: Option<DateTime<Utc>>,
    /// An offline scanner's upload: recorded even if the ticket was in already.
    pub force: bool,
    /// Whether a ticket that went out may come in again.
    pub reentry: bool,
    /// The key that scanned.
    pub key_id: Option<KeyId>,
}

/// What a scan came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScanOutcome {
    /// Recorded: let in (or out), or, for an upload, let in twice (`duplicate`).
    Recorded {
        /// The check-in's id.
        checkin_id: Uuid,
        /// `ok` or `duplicate`.
        duplicate: bool,
        /// The ticket.
        ticket: StoredTicket,
    },
    /// The same nonce was recorded before: that answer again.
    Repeated {
        /// The first check-in's id.
        checkin_id: Uuid,
        /// Its result.
        duplicate: bool,
        /// The ticket.
        ticket: StoredTicket,
    },
    /// Inside already, since `at` through `gate`.
    AlreadyIn {
        /// When it entered.
        at: DateTime<Utc>,
        /// Where.
        gate: Option<String>,
    },
    /// Cancelled, moved or resold.
    Revoked,
    /// An exit of a ticket that is not inside: nothing recorded.
    NotInside,
    /// No ticket of that id in this event.
    Unknown,
}

/// The check-in recorded under `nonce` in the event, if any.
pub(crate) async fn by_nonce(
    conn: &mut PgConnection,
    event: EventId,
    nonce: &str,
) -> Result<Option<ScanOutcome>, StoreError> {
    let first: Option<(Uuid, Uuid, String)> = sqlx::query_as(
        "select checkin_id, ticket_id, result from checkin where event_id = $1 and nonce = $2",
    )
    .bind(event.0)
    .bind(nonce)
    .fetch_optional(&mut *conn)
    .await?;
    let Some((checkin_id, ticket_id, result)) = first else {
        return Ok(None);
    };
    let ticket = find(conn, ticket_id).await?.ok_or_else(|| {
        StoreError::Other(format!("check-in {checkin_id} names no ticket").into())
    })?;
    Ok(Some(ScanOutcome::Repeated {
        checkin_id,
        duplicate: result == "duplicate",
        ticket,
    }))
}

/// The door's counts for an event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DoorCounts {
    /// Tickets that let someone in (valid and redeemed).
    pub tickets: i64,
    /// Tickets let in at least once.
    pub entered: i64,
    /// Tickets inside now.
    pub inside: i64,
    /// Uploads of tickets that were in already.
    pub duplicates: i64,
    /// Tickets let in at each gate (`None`: no gate named).
    pub by_gate: Vec<(Option<String>, i64)>,
}

/// The door's counts for `event`.
pub async fn door_counts(pool: &PgPool, event: EventId) -> Result<DoorCounts, StoreError> {
    let (tickets, entered, inside, duplicates): (i64, i64, i64, i64) = sqlx::query_as(
        "select (select count(*) from order_seat where event_id = $1 and not released)
              + (select coalesce(sum(quantity), 0) from ga_booking
                  where event_id = $1 and status = 'confirmed'),
                (select count(*) from ticket_entry where event_id = $1),
                (select count(*) from ticket_entry where event_id = $1 and inside),
                (select count(*) from checkin where event_id = $1 and result = 'duplicate')",
    )
    .bind(event.0)
    .fetch_one(pool)
    .await?;
    let by_gate = sqlx::query_as(
        "select gate, count(distinct ticket_id) from checkin
          where event_id = $1 and kind = 'entry'
          group by gate order by gate nulls first",
    )
    .bind(event.0)
    .fetch_all(pool)
    .await?;
    Ok(DoorCounts {
        tickets,
        entered,
        inside,
        duplicates,
        by_gate,
    })
}

/// How far behind the present a revocation list's `as_of` is: a revocation is stamped with
/// its transaction's start, and may commit after a list read at a later time. Asking again
/// from `as_of` overlaps the last answer rather than missing one.
pub const REVOCATIONS_SETTLE_SECONDS: i64 = 60;

/// The event's tickets revoked at or after `since` (all, without), oldest first, and the
/// time to ask again from.
pub async fn revoked_since(
    pool: &PgPool,
    event: EventId,
    since: Option<DateTime<Utc>>,
) -> Result<(Vec<(Uuid, DateTime<Utc>)>, DateTime<Utc>), StoreError> {
    let mut tx = pool.begin().await?;
    let as_of: DateTime<Utc> = sqlx::query_scalar("select now() - make_interval(secs => $1)")
        .bind(REVOCATIONS_SETTLE_SECONDS as f64)
        .fetch_one(&mut *tx)
        .await?;
    let revoked = sqlx::query_as(
        "select ticket_id, revoked_at from revoked_ticket
          where event_id = $1 and ($2::timestamptz is null or revoked_at >= $2)
          order by revoked_at, ticket_id",
    )
    .bind(event.0)
    .bind(since)
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok((revoked, as_of))
}

/// What the door needs to know of an event.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct Door {
    /// Its organization, whose entry keys sign its tickets.
    #[sqlx(try_from = "Uuid")]
    pub organization_id: OrganizationId,
    /// Whether a ticket that went out may come in again.
    pub reentry: bool,
    /// When the event was created: no key retired before then signed its tickets.
    pub created_at: DateTime<Utc>,
}

/// The door of `event`; `None` if there is no such event.
pub async fn door(pool: &PgPool, event: EventId) -> Result<Option<Door>, StoreError> {
    Ok(sqlx::query_as(
        "select organization_id, entry_reentry as reentry, created_at
           from event where event_id = $1",
    )
    .bind(event.0)
    .fetch_optional(pool)
    .await?)
}

/// What a printed ticket says of its event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Printed {
    /// The event's name.
    pub name: String,
    /// When it starts.
    pub starts_at: DateTime<Utc>,
    /// Its time zone (its own, or else its venue's).
    pub time_zone: String,
    /// The venue's name.
    pub venue: String,
    /// The name of each ticket type and GA area, by code.
    pub type_names: std::collections::HashMap<String, String>,
    /// The ticket types' codes in the event's order (as `GET /v1/events/{id}` lists them).
    pub type_codes: Vec<String>,
    /// The GA areas' codes in the event's order.
    pub area_codes: Vec<String>,
}

/// What a printed ticket says of `event`; `None` if there is no such event.
pub async fn printed(pool: &PgPool, event: EventId) -> Result<Option<Printed>, StoreError> {
    let head: Option<(String, DateTime<Utc>, String, String)> = sqlx::query_as(
        "select e.name, e.starts_at, v.name, coalesce(e.time_zone, v.time_zone)
           from event e join venue v using (venue_id)
          where e.event_id = $1",
    )
    .bind(event.0)
    .fetch_optional(pool)
    .await?;
    let Some((name, starts_at, venue, time_zone)) = head else {
        return Ok(None);
    };
    let rows = sqlx::query_as::<_, (bool, String, String)>(
        "select false, code, name from (select code, name from ticket_type
                                          where event_id = $1 order by position) t
         union all
         select true, code, name from (select code, name from ga_area
                                         where event_id = $1 order by position) a",
    )
    .bind(event.0)
    .fetch_all(pool)
    .await?;
    let (mut type_codes, mut area_codes) = (Vec::new(), Vec::new());
    for (area, code, _) in &rows {
        if *area {
            area_codes.push(code.clone());
        } else {
            type_codes.push(code.clone());
        }
    }
    Ok(Some(Printed {
        name,
        starts_at,
        time_zone,
        venue,
        type_names: rows
            .into_iter()
            .map(|(_, code, name)| (code, name))
            .collect(),
        type_codes,
        area_codes,
    }))
}

/// What a typed code stands for among an organization's tickets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByCode {
    /// No ticket of the organization.
    None,
    /// This ticket, of this event.
    One {
        /// The ticket.
        ticket_id: Uuid,
        /// Its event.
        event_id: EventId,
    },
    /// More than one (two ids sharing their first 48 bits): not a code to let anyone in by.
    Many,
}

/// The organization's ticket whose id lies in `first..=last` (the ids a code stands for):
/// a sold seat's (its row not released) or a place's.
pub async fn by_code(
    pool: &PgPool,
    organization: OrganizationId,
    first: Uuid,
    last: Uuid,
) -> Result<ByCode, StoreError> {
    let found: Vec<(Uuid, Uuid)> = sqlx::query_as(
        "select t.ticket_id, t.event_id
           from (select ticket_id, event_id from order_seat
                  where ticket_id between $2 and $3
                 union all
                 select ticket_id, event_id from ga_ticket
                  where ticket_id between $2 and $3) t
           join event e using (event_id)
          where e.organization_id = $1
          limit 2",
    )
    .bind(organization.0)
    .bind(first)
    .bind(last)
    .fetch_all(pool)
    .await?;
    Ok(match found.as_slice() {
        [] => ByCode::None,
        [(ticket_id, event_id)] => ByCode::One {
            ticket_id: *ticket_id,
            event_id: EventId(*event_id),
        },
        _ => ByCode::Many,
    })
}
