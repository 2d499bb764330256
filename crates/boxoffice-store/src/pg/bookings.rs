//! General-admission bookings (docs/design/general-admission.md): places sold by quantity
//! from one row per area.

use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use sqlx::AssertSqlSafe;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::error::Constraint;
use crate::pg::audit::{By, Change};
use crate::StoreError;

/// A general-admission booking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Booking {
    /// Booking id.
    pub booking_id: Uuid,
    /// The event.
    pub event_id: EventId,
    /// Area code.
    pub area: String,
    /// The buyer.
    pub user_id: String,
    /// Places booked.
    pub quantity: u32,
    /// Price of all the places.
    pub total_cents: i64,
    /// ISO 4217 code.
    pub currency: String,
    /// `confirmed` or `cancelled`.
    pub status: String,
    /// When it was committed.
    pub created_at: DateTime<Utc>,
}

/// A request for places.
#[derive(Clone, Copy, Debug)]
pub struct BookingRequest<'a> {
    /// The event.
    pub event: EventId,
    /// The buyer.
    pub user: &'a UserId,
    /// Area code.
    pub area: &'a str,
    /// Places wanted (at least 1).
    pub quantity: u32,
    /// The client's idempotency key, if it sent one.
    pub idempotency_key: Option<&'a str>,
    /// The waiting-room ticket of the pass the booking is asked under, while the event's
    /// queue is on: refused if that pass has ended.
    pub pass: Option<Uuid>,
}

/// What a booking request came to.
#[derive(Clone, Debug, PartialEq)]
pub enum BookingOutcome {
    /// The places are booked.
    Booked(Booking),
    /// Fewer than the quantity asked remain; nothing was booked.
    SoldOut {
        /// Places left.
        left: u32,
    },
    /// No such event.
    EventNotFound,
    /// The event has no such area.
    AreaNotFound,
    /// The event has started (by Postgres' clock).
    EventStarted,
    /// More places than one booking may take.
    TooMany {
        /// The area's `max_per_booking`.
        max: u32,
    },
    /// The buyer's confirmed bookings of the area plus these would pass its
    /// `max_per_user`; nothing was booked.
    UserLimit {
        /// The area's `max_per_user`.
        max: u32,
        /// Places the buyer has booked in the area already.
        booked: u32,
    },
    /// The waiting-room pass the booking was asked under has ended.
    PassEnded,
    /// The idempotency key was used before for this same request: what it came to then
    /// ([`BookingOutcome::Booked`] or [`BookingOutcome::SoldOut`]). Nothing was booked now.
    Replay(Box<BookingOutcome>),
    /// The idempotency key was used before for a different request.
    KeyReused,
}

/// How a remembered answer is kept in `idempotency.status`: the HTTP status it was first
/// sent with, as rows written before the answer was kept by kind have it too.
const REMEMBERED_BOOKED: i16 = 201;
/// See [`REMEMBERED_BOOKED`].
const REMEMBERED_SOLD_OUT: i16 = 409;

/// Books places, or answers why not. With an idempotency key, a booking and a sold-out
/// refusal are remembered for the key (in the same transaction), and a repeat of the same
/// request answers [`BookingOutcome::Replay`] of what it came to; other refusals keep
/// nothing, so the key can be used again once the request is put right.
///
/// Why it never oversells: the area row is locked (`for update`) before its places are
/// read, so concurrent bookings of one area take turns and each sees the places the one
/// before it left; the decrement is relative to the row; and `ga_area_seats_left_check`
/// refuses a negative count even if a path forgot the lock. The buyer's places in the area
/// are counted under the same lock, in a statement of their own (its snapshot taken once
/// the lock is granted), so two bookings by one buyer take turns and the second sees the
/// first: `max_per_user` holds however they race.
pub async fn book(
    pool: &PgPool,
    request: &BookingRequest<'_>,
) -> Result<BookingOutcome, StoreError> {
    let mut tx = pool.begin().await?;
    let fingerprint = format!(
        "booking:{}:{}:{}",
        request.event, request.area, request.quantity
    );
    if let Some(key) = request.idempotency_key {
        // Claim the key. A concurrent request with the same key waits here until the first
        // one commits (then we replay its answer) or rolls back (then we go ahead).
        let claimed = sqlx::query(
            "insert into idempotency (event_id, user_id, key, fingerprint, status, body)
             values ($4, $1, $2, $3, 0, 'null') on conflict do nothing",
        )
        .bind(request.user.as_str())
        .bind(key)
        .bind(&fingerprint)
        .bind(request.event.0)
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
        if !claimed {
            let (stored, status, body): (String, i16, String) = sqlx::query_as(
                "select fingerprint, status, body::text from idempotency
                  where event_id = $3 and user_id = $1 and key = $2",
            )
            .bind(request.user.as_str())
            .bind(key)
            .bind(request.event.0)
            .fetch_one(&mut *tx)
            .await?;
            if stored != fingerprint {
                return Ok(BookingOutcome::KeyReused);
            }
            let body: Value =
                serde_json::from_str(&body).map_err(|e| StoreError::Other(Box::new(e)))?;
            let first = remembered(&mut tx, status, &body).await?;
            return Ok(BookingOutcome::Replay(Box::new(first)));
        }
    }

    let outcome = take_places(&mut tx, request).await?;
    let answer = match &outcome {
        BookingOutcome::Booked(b) => Some((REMEMBERED_BOOKED, json!({"booking_id": b.booking_id}))),
        BookingOutcome::SoldOut { left } => Some((REMEMBERED_SOLD_OUT, json!({"left": left}))),
        _ => None,
    };
    match (request.idempotency_key, answer) {
        (Some(key), Some((status, body))) => {
            sqlx::query(
                "update idempotency set status = $3, body = $4::jsonb
                  where event_id = $5 and user_id = $1 and key = $2",
            )
            .bind(request.user.as_str())
            .bind(key)
            .bind(status)
            .bind(body.to_string())
            .bind(request.event.0)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
        }
        (None, _) if matches!(outcome, BookingOutcome::Booked(_)) => tx.commit().await?,
        // Nothing changed; an answer not worth keeping releases the key with the rest.
        _ => tx.rollback().await?,
    }
    Ok(outcome)
}

/// What a remembered answer came to. A booking is read back from its row (rows written by
/// earlier versions kept the whole answer, of which the id is all that is needed), so a
/// repeat after a cancellation shows the booking as it is now.
async fn remembered(
    tx: &mut PgConnection,
    status: i16,
    body: &Value,
) -> Result<BookingOutcome, StoreError> {
    let corrupt = || StoreError::Other(format!("unreadable remembered answer {body}").into());
    match status {
        REMEMBERED_BOOKED => {
            let id: Uuid = body["booking_id"]
                .as_str()
                .and_then(|id| id.parse().ok())
                .ok_or_else(corrupt)?;
            find_booking(tx, id, false)
                .await?
                .map(BookingOutcome::Booked)
                .ok_or_else(corrupt)
        }
        REMEMBERED_SOLD_OUT => Ok(BookingOutcome::SoldOut {
            left: body["left"]
                .as_u64()
                .and_then(|l| u32::try_from(l).ok())
                .ok_or_else(corrupt)?,
        }),
        _ => Err(corrupt()),
    }
}

async fn take_places(
    tx: &mut PgConnection,
    r: &BookingRequest<'_>,
) -> Result<BookingOutcome, StoreError> {
    type Area = (i32, i32, i32, i64, String, bool);
    // The lock that makes "read the places left, then write" safe (docs/design/general-admission.md).
    let area: Option<Area> = sqlx::query_as(
        "select a.seats_left, a.max_per_booking, coalesce(a.max_per_user, a.max_per_booking),
                a.price_cents, a.currency, e.starts_at <= now()
           from ga_area a join event e on e.event_id = a.event_id
          where a.event_id = $1 and a.code = $2
            for update of a",
    )
    .bind(r.event.0)
    .bind(r.area)
    .fetch_optional(&mut *tx)
    .await?;
    let Some((left, max_per_booking, max_per_user, price_cents, currency, started)) = area else {
        let event_exists: bool =
            sqlx::query_scalar("select exists (select 1 from event where event_id = $1)")
                .bind(r.event.0)
                .fetch_one(&mut *tx)
                .await?;
        return Ok(if event_exists {
            BookingOutcome::AreaNotFound
        } else {
            BookingOutcome::EventNotFound
        });
    };
    if started {
        return Ok(BookingOutcome::EventStarted);
    }
    if r.quantity > max_per_booking as u32 {
        return Ok(BookingOutcome::TooMany {
            max: max_per_booking as u32,
        });
    }
    // Under the area's lock, in one statement: the buyer's places booked so far, and
    // whether the pass the booking came with has ended.
    let (booked, ended): (i64, bool) = sqlx::query_as(
        "select (select coalesce(sum(quantity), 0) from ga_booking
                  where event_id = $1 and area = $2 and user_id = $3 and status = 'confirmed'),
                exists (select 1 from pass_ended where event_id = $1 and ticket = $4)",
    )
    .bind(r.event.0)
    .bind(r.area)
    .bind(r.user.as_str())
    .bind(r.pass)
    .fetch_one(&mut *tx)
    .await?;
    if ended {
        return Ok(BookingOutcome::PassEnded);
    }
    if booked + i64::from(r.quantity) > i64::from(max_per_user) {
        return Ok(BookingOutcome::UserLimit {
            max: max_per_user as u32,
            booked: booked as u32,
        });
    }
    if (left as u32) < r.quantity {
        return Ok(BookingOutcome::SoldOut { left: left as u32 });
    }
    let quantity = r.quantity as i32;
    let updated = sqlx::query(
        "update ga_area set seats_left = seats_left - $3 where event_id = $1 and code = $2",
    )
    .bind(r.event.0)
    .bind(r.area)
    .bind(quantity)
    .execute(&mut *tx)
    .await;
    match updated {
        Ok(_) => {}
        // Unreachable while the lock above is taken; the schema says so regardless.
        Err(e) => match StoreError::from(e) {
            StoreError::Conflict {
                constraint: Constraint::PlacesLeft,
            } => return Ok(BookingOutcome::SoldOut { left: left as u32 }),
            other => return Err(other),
        },
    }
    let booking_id = Uuid::new_v4();
    let total_cents = price_cents * i64::from(r.quantity);
    let created_at: DateTime<Utc> = sqlx::query_scalar(
        "insert into ga_booking (event_id, booking_id, area, user_id, quantity, total_cents, currency)
         values ($1, $2, $3, $4, $5, $6, $7) returning created_at",
    )
    .bind(r.event.0)
    .bind(booking_id)
    .bind(r.area)
    .bind(r.user.as_str())
    .bind(quantity)
    .bind(total_cents)
    .bind(&currency)
    .fetch_one(&mut *tx)
    .await?;
    let booking = Booking {
        booking_id,
        event_id: r.event,
        area: r.area.to_owned(),
        user_id: r.user.to_string(),
        quantity: r.quantity,
        total_cents,
        currency,
        status: "confirmed".into(),
        created_at,
    };
    write_outbox(tx, "booking.created", &booking).await?;
    Ok(BookingOutcome::Booked(booking))
}

async fn write_outbox(
    tx: &mut PgConnection,
    topic: &str,
    booking: &Booking,
) -> Result<(), StoreError> {
    let payload = json!({
        "booking_id": booking.booking_id,
        "event_id": booking.event_id,
        "area": booking.area,
        "user_id": booking.user_id,
        "quantity": booking.quantity,
        "total_cents": booking.total_cents,
        "currency": booking.currency,
        "status": booking.status,
    });
    let change = crate::pg::outbox::Change {
        event_id: booking.event_id.0,
        topic,
        payload,
    };
    Ok(crate::pg::outbox::write(&mut *tx, &[change]).await?)
}

/// Places left in an area, by Postgres; `None` if the event has no such area.
pub async fn area_left(
    pool: &PgPool,
    event: EventId,
    area: &str,
) -> Result<Option<u32>, StoreError> {
    let left: Option<i32> =
        sqlx::query_scalar("select seats_left from ga_area where event_id = $1 and code = $2")
            .bind(event.0)
            .bind(area)
            .fetch_optional(pool)
            .await?;
    Ok(left.map(|l| l as u32))
}

/// What cancelling a booking came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BookingCancel {
    /// Cancelled by this call; its places are back in the area.
    Cancelled(Booking),
    /// Cancelled before; nothing changed.
    AlreadyCancelled(Booking),
    /// No such booking.
    NotFound,
    /// Another user's booking.
    Forbidden,
}

/// Cancels a booking and returns its places to the area, with its outbox row, in one
/// transaction. `by` acts: a buyer on their own booking only; staff with an entry in the
/// audit log.
pub async fn cancel_booking(
    pool: &PgPool,
    booking_id: Uuid,
    by: By<'_>,
) -> Result<BookingCancel, StoreError> {
    let mut tx = pool.begin().await?;
    // Lock the booking so two cancellations cannot both return its places.
    let Some(mut booking) = find_booking(&mut tx, booking_id, true).await? else {
        return Ok(BookingCancel::NotFound);
    };
    if by.buyer().is_some_and(|u| u.as_str() != booking.user_id) {
        return Ok(BookingCancel::Forbidden);
    }
    let (event_id, quantity) = (booking.event_id.0, booking.quantity as i32);
    if booking.status == "cancelled" {
        return Ok(BookingCancel::AlreadyCancelled(booking));
    }
    sqlx::query("update ga_booking set status = 'cancelled', cancelled_at = now() where event_id = $1 and booking_id = $2")
        .bind(event_id)
        .bind(booking_id)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "update ga_area set seats_left = seats_left + $3 where event_id = $1 and code = $2",
    )
    .bind(event_id)
    .bind(&booking.area)
    .bind(quantity)
    .execute(&mut *tx)
    .await?;
    let change = Change {
        action: "booking.cancelled",
        target_type: "booking",
        target_id: booking_id.to_string(),
        changes: serde_json::json!({ "status": [booking.status, "cancelled"] }),
    };
    by.record(&mut tx, &change).await?;
    booking.status = "cancelled".into();
    write_outbox(&mut tx, "booking.cancelled", &booking).await?;
    tx.commit().await?;
    Ok(BookingCancel::Cancelled(booking))
}

type BookingRow = (
    Uuid,
    String,
    String,
    i32,
    i64,
    String,
    String,
    DateTime<Utc>,
);

fn booking_of(booking_id: Uuid, row: BookingRow) -> Booking {
    let (event_id, area, user_id, quantity, total_cents, currency, status, created_at) = row;
    Booking {
        booking_id,
        event_id: EventId(event_id),
        area,
        user_id,
        quantity: quantity as u32,
        total_cents,
        currency,
        status,
        created_at,
    }
}

/// The booking, if there is one; with `lock`, locked for update until the transaction
/// ends.
async fn find_booking(
    tx: &mut PgConnection,
    booking_id: Uuid,
    lock: bool,
) -> Result<Option<Booking>, StoreError> {
    let query = format!(
        "select event_id, area, user_id, quantity, total_cents, currency, status, created_at
           from ga_booking where booking_id = $1{}",
        if lock { " for update" } else { "" }
    );
    let row: Option<BookingRow> = sqlx::query_as(AssertSqlSafe(query))
        .bind(booking_id)
        .fetch_optional(&mut *tx)
        .await?;
    Ok(row.map(|row| booking_of(booking_id, row)))
}
