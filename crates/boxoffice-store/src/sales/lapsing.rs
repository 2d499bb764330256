//! What lapses while anyone waits: a waiting-list offer whose deadline passed
//! ([`pass_on_lapsed`]) and an unpaid order's payment window (migration 0018). Their seats
//! pass to the next entries of the waiting list, never reading available to anyone first.
//!
//! A pending order's seats are held for it until its `pay_by`, and would read available
//! at that instant, before any server could hand them on. So shortly before the deadline
//! of an order whose event has anyone waiting, the sweep keeps its seats held a little
//! longer (until `kept_until`, under the order's row lock, so never during its payment);
//! once the deadline has passed it records the order expired and offers the seats still
//! kept to the waiting list in one transaction, as a cancellation does. The seats no entry
//! can take go on general sale. A payment is refused from `pay_by` on either way.

use std::time::Duration;

use boxoffice_core::ids::EventId;
use chrono::{DateTime, Utc};
use sqlx::AssertSqlSafe;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::sales::orders::{expire_in_tx, with_seats, OrderRow, ORDER_COLUMNS};
use crate::sales::waitlist::{end_lapsed, PassedOn, OFFER_GRACE_SECONDS};
use crate::sales::{pass_on, Passing, SaleSeats};
use crate::StoreError;

/// How long past its deadline a kept order's seats stay held: the sweep's time to pass them
/// on (it runs every few seconds).
pub const KEPT_SECONDS: f64 = OFFER_GRACE_SECONDS;

/// Orders kept per transaction at most.
const KEEP_AT_ONCE: i64 = 100;

/// Lapsed orders (or offers) passed on per call at most; the rest wait for the next.
const PASS_ON_AT_ONCE: usize = 200;

/// Keeps the seats of every pending order whose deadline falls within `within` from now,
/// in an event where anyone waits, held until [`KEPT_SECONDS`] past that deadline; answers
/// what it kept. An order being paid (its row locked) is skipped: if the payment fails,
/// the next call finds it.
pub async fn keep_lapsing_orders(
    pool: &PgPool,
    holds: &dyn SaleSeats,
    within: Duration,
) -> Result<Vec<Kept>, StoreError> {
    let mut kept = Vec::new();
    loop {
        let mut tx = pool.begin().await?;
        let rows: Vec<OrderRow> = sqlx::query_as(AssertSqlSafe(format!(
            "select {ORDER_COLUMNS} from ticket_order o
              where o.status = 'pending_payment' and o.kept_until is null
                and o.pay_by > now() and o.pay_by <= now() + make_interval(secs => $1)
                and exists (select 1 from waitlist_entry w
                             where w.event_id = o.event_id and w.status = 'W')
              order by o.pay_by
              limit $2
                for update of o skip locked"
        )))
        .bind(within.as_secs_f64())
        .bind(KEEP_AT_ONCE)
        .fetch_all(&mut *tx)
        .await?;
        let n = rows.len();
        kept.extend(keep(&mut tx, holds, rows).await?);
        tx.commit().await?;
        if n < KEEP_AT_ONCE as usize {
            return Ok(kept);
        }
    }
}

/// Keeps the seats of the pending order `order_id` past its deadline now, if anyone waits
/// in its event's line (see [`keep_lapsing_orders`]); answers what it kept. A checkout
/// calls it, so that a window shorter than the expiry rounds' look-ahead feeds the list
/// too.
pub async fn keep_if_waiting(
    pool: &PgPool,
    holds: &dyn SaleSeats,
    event: EventId,
    order_id: Uuid,
) -> Result<Option<Kept>, StoreError> {
    let mut tx = pool.begin().await?;
    let rows: Vec<OrderRow> = sqlx::query_as(AssertSqlSafe(format!(
        "select {ORDER_COLUMNS} from ticket_order o
          where o.event_id = $1 and o.order_id = $2
            and o.status = 'pending_payment' and o.kept_until is null and o.pay_by > now()
            and exists (select 1 from waitlist_entry w
                         where w.event_id = o.event_id and w.status = 'W')
            for update of o skip locked"
    )))
    .bind(event.0)
    .bind(order_id)
    .fetch_all(&mut *tx)
    .await?;
    let kept = keep(&mut tx, holds, rows).await?;
    tx.commit().await?;
    Ok(kept.into_iter().next())
}

/// A pending order whose seats are kept past its deadline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kept {
    /// The event.
    pub event: EventId,
    /// The order's seats.
    pub seats: Vec<String>,
    /// Until when they are held now.
    pub until: DateTime<Utc>,
}

/// Keeps these pending orders' seats (their rows locked by the caller's transaction) held
/// until [`KEPT_SECONDS`] past their deadlines, and records it.
async fn keep(
    tx: &mut PgConnection,
    holds: &dyn SaleSeats,
    rows: Vec<OrderRow>,
) -> Result<Vec<Kept>, StoreError> {
    let mut kept = Vec::with_capacity(rows.len());
    for row in rows {
        let order = with_seats(&mut *tx, row).await?;
        let Some(pay_by) = order.payment.as_ref().map(|p| p.pay_by) else {
            continue;
        };
        let until = pay_by + chrono::Duration::milliseconds((KEPT_SECONDS * 1000.0) as i64);
        holds.keep_pending(&mut *tx, &order, until).await?;
        sqlx::query(
            "update ticket_order set kept_until = $3 where event_id = $1 and order_id = $2",
        )
        .bind(order.event_id.0)
        .bind(order.order_id)
        .bind(until)
        .execute(&mut *tx)
        .await?;
        kept.push(Kept {
            event: order.event_id,
            seats: order.seats.iter().map(|s| s.seat_id.clone()).collect(),
            until,
        });
    }
    Ok(kept)
}

/// Records every kept order whose deadline has passed unpaid as expired (with its outbox
/// row `order.expired`), each in a transaction of its own that offers the seats still kept
/// for it to the waiting list (their holds written before it commits, taking the seats
/// over from the order's); the rest go on general sale. An order that cannot be passed on
/// now (its hold store is away) stays pending and is tried again on the next call; once
/// its `kept_until` has passed too, [`crate::sales::orders::expire_pending`] records it.
pub async fn pass_on_lapsed_orders(
    pool: &PgPool,
    holds: &dyn SaleSeats,
) -> Result<Vec<PassedOn>, StoreError> {
    let mut done = Vec::new();
    while done.len() < PASS_ON_AT_ONCE {
        let mut tx = pool.begin().await?;
        let row: Option<OrderRow> = sqlx::query_as(AssertSqlSafe(format!(
            "select {ORDER_COLUMNS} from ticket_order o
              where o.status = 'pending_payment' and o.pay_by <= now()
                and o.kept_until > now()
              order by o.pay_by
              limit 1
                for update skip locked"
        )))
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else {
            break;
        };
        let order = with_seats(&mut tx, row).await?;
        let order = expire_in_tx(&mut tx, order).await?;
        let event = order.event_id;
        let (seats, offers) = pass_on(tx, holds, Passing::LapsedOrder(&order)).await?;
        done.push(PassedOn::new(event, seats, offers));
    }
    Ok(done)
}

/// Ends the offers whose deadline has passed (or whose buyer left), each in a transaction
/// of its own: the seats still held under the offer go to the next entries they can serve
/// (their holds written before the transaction commits, taking the seats over from the
/// lapsed offer's), and the rest on general sale. An offer whose seats cannot be passed
/// on now (its hold store is away, or it is being checked out) stays as it is and is
/// tried again on the next call.
pub async fn pass_on_lapsed(
    pool: &PgPool,
    holds: &dyn SaleSeats,
) -> Result<Vec<PassedOn>, StoreError> {
    let mut done = Vec::new();
    while done.len() < PASS_ON_AT_ONCE {
        let mut tx = pool.begin().await?;
        let Some(lapsed) = end_lapsed(&mut tx, 1).await?.pop() else {
            break;
        };
        let event = lapsed.event;
        let (seats, offers) = pass_on(tx, holds, Passing::LapsedOffer(&lapsed)).await?;
        done.push(PassedOn::new(event, seats, offers));
    }
    Ok(done)
}
