//! General-admission bookings (seed 002): places sold by quantity from one row per area.

use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::error::Constraint;
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
    /// The idempotency key was used before for this same request: its first answer.
    Replay {
        /// HTTP status of the first answer.
        status: u16,
        /// Body of the first answer.
        body: Value,
    },
    /// The idempotency key was used before for a different request.
    KeyReused,
}

/// Books places, or answers why not. `remember` turns an outcome into the answer to keep
/// for the idempotency key (`None`: keep nothing, as for invalid requests; a booking must
/// always be remembered).
///
/// Why it never oversells: the area row is locked (`for update`) before its places are
/// read, so concurrent bookings of one area take turns and each sees the places the one
/// before it left; the decrement is relative to the row; and `ga_area_seats_left_check`
/// refuses a negative count even if a path forgot the lock.
pub async fn book(
    pool: &PgPool,
    request: &BookingRequest<'_>,
    remember: impl Fn(&BookingOutcome) -> Option<(u16, Value)> + Send,
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
            "insert into idempotency (user_id, key, fingerprint, status, body)
             values ($1, $2, $3, 0, 'null') on conflict do nothing",
        )
        .bind(request.user.as_str())
        .bind(key)
        .bind(&fingerprint)
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
        if !claimed {
            let (stored, status, body): (String, i16, String) = sqlx::query_as(
                "select fingerprint, status, body::text from idempotency where user_id = $1 and key = $2",
            )
            .bind(request.user.as_str())
            .bind(key)
            .fetch_one(&mut *tx)
            .await?;
            return Ok(if stored != fingerprint {
                BookingOutcome::KeyReused
            } else {
                BookingOutcome::Replay {
                    status: status as u16,
                    body: serde_json::from_str(&body)
                        .map_err(|e| StoreError::Other(Box::new(e)))?,
                }
            });
        }
    }

    let outcome = take_places(&mut tx, request).await?;
    let answer = remember(&outcome);
    match (request.idempotency_key, answer) {
        (Some(key), Some((status, body))) => {
            sqlx::query("update idempotency set status = $3, body = $4::jsonb where user_id = $1 and key = $2")
                .bind(request.user.as_str())
                .bind(key)
                .bind(status as i16)
                .bind(body.to_string())
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
        }
        (None, _) if matches!(outcome, BookingOutcome::Booked(_)) => tx.commit().await?,
        (Some(_), None) if matches!(outcome, BookingOutcome::Booked(_)) => {
            return Err(StoreError::Other(
                "a booking must leave an answer for its idempotency key".into(),
            ));
        }
        // Nothing changed; an answer not worth keeping releases the key with the rest.
        _ => tx.rollback().await?,
    }
    Ok(outcome)
}

async fn take_places(
    tx: &mut PgConnection,
    r: &BookingRequest<'_>,
) -> Result<BookingOutcome, StoreError> {
    type Area = (i32, i32, i64, String, bool);
    // The lock that makes "read the places left, then write" safe (seed 002).
    let area: Option<Area> = sqlx::query_as(
        "select a.seats_left, a.max_per_booking, a.price_cents, a.currency, e.starts_at <= now()
           from ga_area a join event e on e.event_id = a.event_id
          where a.event_id = $1 and a.code = $2
            for update of a",
    )
    .bind(r.event.0)
    .bind(r.area)
    .fetch_optional(&mut *tx)
    .await?;
    let Some((left, max_per_booking, price_cents, currency, started)) = area else {
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
    sqlx::query("insert into outbox (event_id, topic, payload) values ($1, $2, $3::jsonb)")
        .bind(booking.event_id.0)
        .bind(topic)
        .bind(payload.to_string())
        .execute(&mut *tx)
        .await?;
    Ok(())
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
/// transaction. `by` is the acting user, or `None` for an admin.
pub async fn cancel_booking(
    pool: &PgPool,
    booking_id: Uuid,
    by: Option<&UserId>,
) -> Result<BookingCancel, StoreError> {
    type Row = (
        Uuid,
        String,
        String,
        i32,
        i64,
        String,
        String,
        DateTime<Utc>,
    );
    let mut tx = pool.begin().await?;
    // Lock the booking so two cancellations cannot both return its places.
    let row: Option<Row> = sqlx::query_as(
        "select event_id, area, user_id, quantity, total_cents, currency, status, created_at
           from ga_booking where booking_id = $1 for update",
    )
    .bind(booking_id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some((event_id, area, user_id, quantity, total_cents, currency, status, created_at)) = row
    else {
        return Ok(BookingCancel::NotFound);
    };
    if by.is_some_and(|u| u.as_str() != user_id) {
        return Ok(BookingCancel::Forbidden);
    }
    let mut booking = Booking {
        booking_id,
        event_id: EventId(event_id),
        area,
        user_id,
        quantity: quantity as u32,
        total_cents,
        currency,
        status,
        created_at,
    };
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
    booking.status = "cancelled".into();
    write_outbox(&mut tx, "booking.cancelled", &booking).await?;
    tx.commit().await?;
    Ok(BookingCancel::Cancelled(booking))
}
