//! General-admission bookings (docs/design/general-admission.md): places sold by quantity
//! from one row per area.
//!
//! A long file, on purpose: everything that changes an area's places (a booking with its
//! idempotent answer, a payment, a cancellation, the expiry of an unpaid booking) lives
//! here, so the one lock order on an area (its row, then the booking's) is kept in one place.

use boxoffice_core::hold::OrderStatus;
use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use sqlx::AssertSqlSafe;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::error::Constraint;
use crate::journal::audit::{self, Action, Actor, By, Change};
use crate::journal::outbox::{self, Topic};
use crate::sales::orders::stored_status;
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
    /// Paid (at once, in an event without a payment window), pending payment until
    /// `pay_by`, expired past it unpaid, or cancelled.
    pub status: OrderStatus,
    /// When it was committed.
    pub created_at: DateTime<Utc>,
    /// In an event with a payment window: when it must be paid by.
    pub pay_by: Option<DateTime<Utc>>,
    /// When it was paid, under a payment window.
    pub paid_at: Option<DateTime<Utc>>,
    /// The payment provider's reference, under a payment window.
    pub payment_reference: Option<String>,
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
///
/// In an event with a payment window the booking is pending until its `pay_by`; the
/// area's pending bookings past theirs are recorded expired first, under the same lock,
/// and their places counted back in. Besides the outcome it answers how many places came
/// back that way (0 when nothing was committed).
pub async fn book(
    pool: &PgPool,
    request: &BookingRequest<'_>,
) -> Result<(BookingOutcome, u32), StoreError> {
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
                return Ok((BookingOutcome::KeyReused, 0));
            }
            let body: Value =
                serde_json::from_str(&body).map_err(|e| StoreError::Other(Box::new(e)))?;
            let first = remembered(&mut tx, status, &body).await?;
            return Ok((BookingOutcome::Replay(Box::new(first)), 0));
        }
    }

    let (outcome, returned) = take_places(&mut tx, request).await?;
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
        // Nothing changed; an answer not worth keeping releases the key with the rest (and
        // the expiries recorded on the way: the sweep records them again).
        _ => {
            tx.rollback().await?;
            return Ok((outcome, 0));
        }
    }
    Ok((outcome, returned))
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
) -> Result<(BookingOutcome, u32), StoreError> {
    type Area = (i32, i32, i32, i64, String, bool, i32);
    // The lock that makes "read the places left, then write" safe (docs/design/general-admission.md).
    let area: Option<Area> = sqlx::query_as(
        "select a.seats_left, a.max_per_booking, coalesce(a.max_per_user, a.max_per_booking),
                a.price_cents, a.currency, e.starts_at <= now(), e.payment_window_seconds
           from ga_area a join event e on e.event_id = a.event_id
          where a.event_id = $1 and a.code = $2
            for update of a",
    )
    .bind(r.event.0)
    .bind(r.area)
    .fetch_optional(&mut *tx)
    .await?;
    let Some((left, max_per_booking, max_per_user, price_cents, currency, started, window)) = area
    else {
        let event_exists: bool =
            sqlx::query_scalar("select exists (select 1 from event where event_id = $1)")
                .bind(r.event.0)
                .fetch_one(&mut *tx)
                .await?;
        let outcome = if event_exists {
            BookingOutcome::AreaNotFound
        } else {
            BookingOutcome::EventNotFound
        };
        return Ok((outcome, 0));
    };
    if started {
        return Ok((BookingOutcome::EventStarted, 0));
    }
    if r.quantity > max_per_booking as u32 {
        let max = max_per_booking as u32;
        return Ok((BookingOutcome::TooMany { max }, 0));
    }
    // Pending bookings past their deadline give their places back first (the area is
    // locked, as [`lapse_in_area`] needs).
    let returned = if window > 0 {
        lapse_in_area(tx, r.event, r.area).await?
    } else {
        0
    };
    let left = left as u32 + returned;
    // Under the area's lock, in one statement: the buyer's places booked so far (paid, or
    // pending and so still theirs), and whether the pass the booking came with has ended.
    let (booked, ended): (i64, bool) = sqlx::query_as(
        "select (select coalesce(sum(quantity), 0) from ga_booking
                  where event_id = $1 and area = $2 and user_id = $3
                    and status in ('confirmed', 'pending_payment')),
                exists (select 1 from pass_ended where event_id = $1 and ticket = $4)",
    )
    .bind(r.event.0)
    .bind(r.area)
    .bind(r.user.as_str())
    .bind(r.pass)
    .fetch_one(&mut *tx)
    .await?;
    if ended {
        return Ok((BookingOutcome::PassEnded, returned));
    }
    if booked + i64::from(r.quantity) > i64::from(max_per_user) {
        let (max, booked) = (max_per_user as u32, booked as u32);
        return Ok((BookingOutcome::UserLimit { max, booked }, returned));
    }
    if left < r.quantity {
        return Ok((BookingOutcome::SoldOut { left }, returned));
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
            } => return Ok((BookingOutcome::SoldOut { left }, returned)),
            other => return Err(other),
        },
    }
    let booking_id = Uuid::new_v4();
    let total_cents = price_cents * i64::from(r.quantity);
    let pending = window > 0;
    let (created_at, pay_by): (DateTime<Utc>, Option<DateTime<Utc>>) = sqlx::query_as(
        "insert into ga_booking (event_id, booking_id, area, user_id, quantity, total_cents,
                                 currency, status, pay_by)
         values ($1, $2, $3, $4, $5, $6, $7,
                 case when $8 > 0 then 'pending_payment' else 'confirmed' end,
                 case when $8 > 0 then now() + make_interval(secs => $8) end)
         returning created_at, pay_by",
    )
    .bind(r.event.0)
    .bind(booking_id)
    .bind(r.area)
    .bind(r.user.as_str())
    .bind(quantity)
    .bind(total_cents)
    .bind(&currency)
    .bind(window)
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
        status: if pending {
            OrderStatus::PendingPayment
        } else {
            OrderStatus::Paid
        },
        created_at,
        pay_by,
        paid_at: None,
        payment_reference: None,
    };
    write_outbox(tx, Topic::BookingCreated, &booking).await?;
    Ok((BookingOutcome::Booked(booking), returned))
}

/// Records every pending booking of the area whose `pay_by` has passed as expired (each
/// with its outbox row `booking.expired`) and returns their places to the area; answers
/// how many places came back. The caller holds the area row's lock.
async fn lapse_in_area(
    tx: &mut PgConnection,
    event: EventId,
    area: &str,
) -> Result<u32, StoreError> {
    let rows: Vec<BookingRow> = sqlx::query_as(AssertSqlSafe(format!(
        "update ga_booking set status = 'expired'
          where event_id = $1 and area = $2 and status = 'pending_payment' and pay_by <= now()
         returning {BOOKING_COLUMNS}"
    )))
    .bind(event.0)
    .bind(area)
    .fetch_all(&mut *tx)
    .await?;
    if rows.is_empty() {
        return Ok(0);
    }
    let mut returned = 0;
    for row in rows {
        let booking = booking_of(row);
        returned += booking.quantity;
        write_outbox(tx, Topic::BookingExpired, &booking).await?;
    }
    sqlx::query(
        "update ga_area set seats_left = seats_left + $3 where event_id = $1 and code = $2",
    )
    .bind(event.0)
    .bind(area)
    .bind(returned as i32)
    .execute(&mut *tx)
    .await?;
    Ok(returned)
}

/// Pending bookings' areas recorded expired per call at most; the rest wait for the next.
const LAPSE_AREAS_AT_ONCE: i64 = 100;

/// Records the pending bookings whose `pay_by` has passed as expired and returns their
/// places to their areas, an area a transaction; answers the places that came back in each
/// `(event, area)`. A booking or a payment in the area meanwhile may have done it first.
pub async fn expire_pending(pool: &PgPool) -> Result<Vec<(EventId, String, u32)>, StoreError> {
    let areas: Vec<(Uuid, String)> = sqlx::query_as(
        "select distinct event_id, area from ga_booking
          where status = 'pending_payment' and pay_by <= now()
          limit $1",
    )
    .bind(LAPSE_AREAS_AT_ONCE)
    .fetch_all(pool)
    .await?;
    let mut done = Vec::new();
    for (event, area) in areas {
        let event = EventId(event);
        let mut tx = pool.begin().await?;
        lock_area(&mut tx, event, &area).await?;
        let returned = lapse_in_area(&mut tx, event, &area).await?;
        tx.commit().await?;
        if returned > 0 {
            done.push((event, area, returned));
        }
    }
    Ok(done)
}

/// Locks the area's row until the transaction ends: the first lock of anything that
/// changes its places (a booking, a payment, a cancellation, an expiry).
async fn lock_area(tx: &mut PgConnection, event: EventId, area: &str) -> Result<(), StoreError> {
    sqlx::query("select 1 from ga_area where event_id = $1 and code = $2 for update")
        .bind(event.0)
        .bind(area)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

/// Locks the booking `booking_id` the one way (its area's row first, then the booking
/// row) and answers it as it is once locked, its lapse recorded if its `pay_by` passed;
/// with the places of its area's lapsed bookings that came back so.
async fn lock_booking(
    tx: &mut PgConnection,
    booking_id: Uuid,
) -> Result<(Option<Booking>, u32), StoreError> {
    let Some(found) = find_booking(tx, booking_id, false).await? else {
        return Ok((None, 0));
    };
    lock_area(tx, found.event_id, &found.area).await?;
    let returned = if found.status == OrderStatus::Expired {
        lapse_in_area(tx, found.event_id, &found.area).await?
    } else {
        0
    };
    Ok((find_booking(tx, booking_id, true).await?, returned))
}

async fn write_outbox(
    tx: &mut PgConnection,
    topic: Topic,
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
        "pay_by": booking.pay_by,
        "paid_at": booking.paid_at,
        "payment_reference": booking.payment_reference,
    });
    let change = outbox::Change {
        event_id: booking.event_id.0,
        topic,
        payload,
    };
    Ok(outbox::write(&mut *tx, &[change]).await?)
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
/// audit log. A booking that expired unpaid is answered as it is. Besides the answer, the
/// places of lapsed bookings of its area that came back on the way.
pub async fn cancel_booking(
    pool: &PgPool,
    booking_id: Uuid,
    by: By<'_>,
) -> Result<(BookingCancel, u32), StoreError> {
    let mut tx = pool.begin().await?;
    // Locked, so two cancellations cannot both return its places.
    let (booking, returned) = lock_booking(&mut tx, booking_id).await?;
    let Some(mut booking) = booking else {
        return Ok((BookingCancel::NotFound, 0));
    };
    if by.buyer().is_some_and(|u| u.as_str() != booking.user_id) {
        return Ok((BookingCancel::Forbidden, 0));
    }
    let (event_id, quantity) = (booking.event_id.0, booking.quantity as i32);
    if matches!(
        booking.status,
        OrderStatus::Cancelled | OrderStatus::Expired
    ) {
        tx.commit().await?;
        return Ok((BookingCancel::AlreadyCancelled(booking), returned));
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
        action: Action::BookingCancelled,
        target_id: booking_id.to_string(),
        changes: serde_json::json!({ "status": [booking.status, OrderStatus::Cancelled] }),
    };
    by.record(&mut tx, &change).await?;
    booking.status = OrderStatus::Cancelled;
    write_outbox(&mut tx, Topic::BookingCancelled, &booking).await?;
    tx.commit().await?;
    Ok((BookingCancel::Cancelled(booking), returned))
}

/// What recording a booking's payment came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BookingPayment {
    /// Paid now: its tickets are issued.
    Paid(Booking),
    /// Paid before with this same reference; nothing changed.
    Repeated(Booking),
    /// Paid before with another reference, or at once (no payment window).
    AlreadyPaid(Booking),
    /// Its window closed first: it expired unpaid (recorded now if it had not been), or it
    /// was cancelled.
    Closed(Booking),
    /// No such booking.
    NotFound,
}

/// Records the payment of a pending booking before its `pay_by`, in one transaction: the
/// booking paid (its tickets issued by the trigger of migration 0030), its outbox row
/// `booking.paid`, and the audit entry of `actor` (staff). Locked the one way (area, then
/// booking), so a payment and the expiry at the deadline never both happen: at or past
/// `pay_by` the booking is recorded expired and its places go back. Besides the answer,
/// the places of lapsed bookings of its area that came back on the way.
pub async fn pay_booking(
    pool: &PgPool,
    booking_id: Uuid,
    reference: &str,
    actor: Option<&Actor>,
) -> Result<(BookingPayment, u32), StoreError> {
    let mut tx = pool.begin().await?;
    let (booking, returned) = lock_booking(&mut tx, booking_id).await?;
    let Some(mut booking) = booking else {
        return Ok((BookingPayment::NotFound, 0));
    };
    let answer = match booking.status {
        OrderStatus::Paid if booking.payment_reference.as_deref() == Some(reference) => {
            BookingPayment::Repeated(booking)
        }
        OrderStatus::Paid => BookingPayment::AlreadyPaid(booking),
        OrderStatus::Expired | OrderStatus::Cancelled => BookingPayment::Closed(booking),
        OrderStatus::PendingPayment => {
            let paid_at: DateTime<Utc> = sqlx::query_scalar(
                "update ga_booking set status = 'confirmed', paid_at = now(), payment_reference = $3
                  where event_id = $1 and booking_id = $2
                 returning paid_at",
            )
            .bind(booking.event_id.0)
            .bind(booking_id)
            .bind(reference)
            .fetch_one(&mut *tx)
            .await?;
            let change = Change {
                action: Action::BookingPaid,
                target_id: booking_id.to_string(),
                changes: serde_json::json!({
                    "status": [booking.status, OrderStatus::Paid],
                    "payment_reference": [null, reference],
                }),
            };
            if let Some(actor) = actor {
                audit::write(&mut tx, actor, &change).await?;
            }
            booking.status = OrderStatus::Paid;
            booking.paid_at = Some(paid_at);
            booking.payment_reference = Some(reference.to_owned());
            write_outbox(&mut tx, Topic::BookingPaid, &booking).await?;
            BookingPayment::Paid(booking)
        }
    };
    tx.commit().await?;
    Ok((answer, returned))
}

/// The booking, if there is one.
pub async fn get_booking(pool: &PgPool, booking_id: Uuid) -> Result<Option<Booking>, StoreError> {
    let mut conn = pool.acquire().await?;
    find_booking(&mut conn, booking_id, false).await
}

/// The buyer's bookings, newest first: of one event, or of every event.
pub async fn of_user(
    pool: &PgPool,
    user: &UserId,
    event: Option<EventId>,
) -> Result<Vec<Booking>, StoreError> {
    let rows: Vec<BookingRow> = sqlx::query_as(AssertSqlSafe(format!(
        "select {BOOKING_COLUMNS} from ga_booking
          where user_id = $1 and ($2::uuid is null or event_id = $2)
          order by created_at desc, booking_id
          limit 500"
    )))
    .bind(user.as_str())
    .bind(event.map(|e| e.0))
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(booking_of).collect())
}

/// A booking's columns as [`BookingRow`] reads them, its status as of now (a pending
/// booking past its `pay_by` is expired, recorded or not).
const BOOKING_COLUMNS: &str = "booking_id, event_id, area, user_id, quantity, total_cents,
    currency, created_at, pay_by, paid_at, payment_reference,
    case when status = 'pending_payment' and pay_by <= now() then 'expired' else status end
        as status";

#[derive(sqlx::FromRow)]
struct BookingRow {
    booking_id: Uuid,
    event_id: Uuid,
    area: String,
    user_id: String,
    quantity: i32,
    total_cents: i64,
    currency: String,
    status: String,
    created_at: DateTime<Utc>,
    pay_by: Option<DateTime<Utc>>,
    paid_at: Option<DateTime<Utc>>,
    payment_reference: Option<String>,
}

fn booking_of(row: BookingRow) -> Booking {
    Booking {
        booking_id: row.booking_id,
        event_id: EventId(row.event_id),
        area: row.area,
        user_id: row.user_id,
        quantity: row.quantity as u32,
        total_cents: row.total_cents,
        currency: row.currency,
        status: stored_status(&row.status),
        created_at: row.created_at,
        pay_by: row.pay_by,
        paid_at: row.paid_at,
        payment_reference: row.payment_reference,
    }
}

/// The booking, if there is one; with `lock`, locked for update until the transaction
/// ends (after its area's row: [`lock_booking`]).
async fn find_booking(
    tx: &mut PgConnection,
    booking_id: Uuid,
    lock: bool,
) -> Result<Option<Booking>, StoreError> {
    let query = format!(
        "select {BOOKING_COLUMNS} from ga_booking where booking_id = $1{}",
        if lock { " for update" } else { "" }
    );
    let row: Option<BookingRow> = sqlx::query_as(AssertSqlSafe(query))
        .bind(booking_id)
        .fetch_optional(&mut *tx)
        .await?;
    Ok(row.map(booking_of))
}
