//! Orders: written inside a hold store's checkout transaction, read, and cancelled. Every
//! change writes its outbox row in the same transaction. (A long file: an order's whole
//! life in Postgres, the same for both hold stores, read in one place.)

use boxoffice_core::hold::{CancelOutcome, ClaimedSeat, Order, OrderStatus, PayOutcome, Payment};
use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::AssertSqlSafe;
use sqlx::{PgConnection, PgExecutor};
use uuid::Uuid;

use super::seats;
use super::seats::seats_join_new_orders;
use crate::error::stored_user_id;
use crate::journal::audit::{Action, By, Change};
use crate::journal::outbox::{self, Topic};
use crate::StoreError;

/// An order's row as the read paths select it ([`ORDER_COLUMNS`]).
#[derive(sqlx::FromRow)]
pub(crate) struct OrderRow {
    pub(crate) order_id: Uuid,
    pub(crate) event_id: Uuid,
    pub(crate) user_id: String,
    pub(crate) hold_token: Uuid,
    pub(crate) total_cents: i64,
    pub(crate) currency: String,
    /// As read: a pending order past its deadline reads `expired` before the sweep
    /// records it.
    pub(crate) status: String,
    pub(crate) created_at: DateTime<Utc>,
    pub(crate) pay_by: Option<DateTime<Utc>>,
    pub(crate) paid_at: Option<DateTime<Utc>>,
    pub(crate) payment_reference: Option<String>,
}

/// The columns of an [`OrderRow`] from `ticket_order o`.
pub(crate) const ORDER_COLUMNS: &str =
    "o.order_id, o.event_id, o.user_id, o.hold_token, o.total_cents, o.currency,
     case when o.status = 'pending_payment' and o.pay_by <= now() then 'expired'
          else o.status end as status,
     o.created_at, o.pay_by, o.paid_at, o.payment_reference";

impl OrderRow {
    /// The order, with these seats.
    pub(crate) fn into_order(self, seats: Vec<ClaimedSeat>) -> Result<Order, StoreError> {
        Ok(Order {
            order_id: self.order_id,
            event_id: EventId(self.event_id),
            user_id: stored_user_id(&self.user_id)?,
            hold_token: self.hold_token,
            seats,
            total_cents: self.total_cents,
            currency: self.currency,
            status: stored_status(&self.status),
            created_at: self.created_at,
            payment: self.pay_by.map(|pay_by| Payment {
                pay_by,
                paid_at: self.paid_at,
                reference: self.payment_reference,
            }),
        })
    }
}

pub(crate) async fn with_seats(
    conn: &mut PgConnection,
    row: OrderRow,
) -> Result<Order, StoreError> {
    let seats = sqlx::query_as::<_, (String, String, i64)>(
        "select seat_id, ticket_type, price_cents from order_seat
          where event_id = $1 and order_id = $2 order by seat_id",
    )
    .bind(row.event_id)
    .bind(row.order_id)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|(seat_id, ticket_type, price_cents)| ClaimedSeat {
        seat_id,
        ticket_type,
        price_cents,
    })
    .collect();
    row.into_order(seats)
}

/// An order's status as `ticket_order.status` stores it (`confirmed` is paid).
pub(crate) fn stored_status(text: &str) -> OrderStatus {
    match text {
        "cancelled" => OrderStatus::Cancelled,
        "pending_payment" => OrderStatus::PendingPayment,
        "expired" => OrderStatus::Expired,
        _ => OrderStatus::Paid,
    }
}

/// How `ticket_order.status` stores `status`.
pub(crate) fn status_stored(status: OrderStatus) -> &'static str {
    match status {
        OrderStatus::Paid => "confirmed",
        other => other.as_str(),
    }
}

/// The order checked out from this hold token, if any.
pub async fn find_by_token(
    conn: &mut PgConnection,
    event: EventId,
    token: Uuid,
) -> Result<Option<Order>, StoreError> {
    let row: Option<OrderRow> = sqlx::query_as(AssertSqlSafe(format!(
        "select {ORDER_COLUMNS} from ticket_order o where o.event_id = $1 and o.hold_token = $2"
    )))
    .bind(event.0)
    .bind(token)
    .fetch_optional(&mut *conn)
    .await?;
    match row {
        Some(row) => Ok(Some(with_seats(conn, row).await?)),
        None => Ok(None),
    }
}

/// One order by id, on a connection of its own.
pub async fn load_order(pool: &sqlx::PgPool, order_id: Uuid) -> Result<Option<Order>, StoreError> {
    let mut conn = pool.acquire().await?;
    get_order(&mut conn, order_id).await
}

/// A buyer's orders, newest first (500 at most), each with the number of its valid tickets
/// (its seats sold and not released, once it is paid): of one event, or of every event.
pub async fn of_user(
    pool: &sqlx::PgPool,
    user: &UserId,
    event: Option<EventId>,
) -> Result<Vec<(Order, u32)>, StoreError> {
    let mut conn = pool.acquire().await?;
    let rows: Vec<OrderRow> = sqlx::query_as(AssertSqlSafe(format!(
        "select {ORDER_COLUMNS} from ticket_order o
          where o.user_id = $1 and ($2::uuid is null or o.event_id = $2)
          order by o.created_at desc, o.order_id
          limit 500"
    )))
    .bind(user.as_str())
    .bind(event.map(|e| e.0))
    .fetch_all(&mut *conn)
    .await?;
    let ids: Vec<Uuid> = rows.iter().map(|r| r.order_id).collect();
    let valid: std::collections::HashMap<Uuid, i64> = sqlx::query_as(
        "select s.order_id, count(*) from order_seat s
           join ticket_order o using (event_id, order_id)
          where s.order_id = any($1) and not s.released and o.status = 'confirmed'
          group by s.order_id",
    )
    .bind(&ids)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .collect();
    let mut orders = Vec::with_capacity(rows.len());
    for row in rows {
        let tickets = valid.get(&row.order_id).copied().unwrap_or(0) as u32;
        orders.push((with_seats(&mut conn, row).await?, tickets));
    }
    Ok(orders)
}

/// One order by id.
pub async fn get_order(
    conn: &mut PgConnection,
    order_id: Uuid,
) -> Result<Option<Order>, StoreError> {
    let row: Option<OrderRow> = sqlx::query_as(AssertSqlSafe(format!(
        "select {ORDER_COLUMNS} from ticket_order o where o.order_id = $1"
    )))
    .bind(order_id)
    .fetch_optional(&mut *conn)
    .await?;
    match row {
        Some(row) => Ok(Some(with_seats(conn, row).await?)),
        None => Ok(None),
    }
}

/// An order to write: a checkout's (whose hold's seats its store has taken for it), or one
/// night's of a season order.
#[derive(Clone, Debug)]
pub struct Placement {
    /// The event.
    pub event: EventId,
    /// The hold bought.
    pub token: Uuid,
    /// Its buyer.
    pub user: UserId,
    /// The order's id.
    pub order_id: Uuid,
    /// The event's payment window, 0 for none.
    pub window_seconds: u32,
    /// The hold's seats with their quotes (a season night's: its share of each price),
    /// sorted by seat id.
    pub seats: Vec<ClaimedSeat>,
    /// The waiting-room pass the hold was made under, which the order ends.
    pub pass: Option<Uuid>,
    /// For one night of a season order: that order, whose outbox row stands for it.
    pub season: Option<SeasonPart>,
}

/// What a night's order takes from its season order.
#[derive(Clone, Debug)]
pub struct SeasonPart {
    /// The season order.
    pub season_order_id: Uuid,
    /// Its currency.
    pub currency: String,
    /// When it was made.
    pub created_at: DateTime<Utc>,
}

/// What the order writer did.
pub(crate) enum Written {
    /// Every order, in the placements' order.
    Orders(Vec<Order>),
    /// Nothing: a hold offered from the waiting list was bought past the offer's deadline.
    OfferLapsed,
}

/// An order as the writer wrote it: its number among the placements, and what Postgres
/// gave it (nothing when no order was written).
#[derive(sqlx::FromRow)]
struct PlacedRow {
    n: i32,
    currency: Option<String>,
    created_at: Option<DateTime<Utc>>,
    pay_by: Option<DateTime<Utc>>,
    lapsed: bool,
}

/// The one writer of orders, inside the caller's transaction: for every placement, the
/// waiting-list offer its hold came from recorded bought, the order and its seats, the
/// pass it ends, and its outbox row, a statement each for all of them. A checkout alone is
/// a batch of one; a season order's nights are a batch of their own.
///
/// Without a payment window (`window_seconds` 0) an order is paid and its seats sold: the
/// partial unique index `order_seat_sold` refuses a seat already in a live order (Postgres'
/// error, whose constraint the caller reads: a checkout alone answers it, a batch goes
/// alone), whatever any hold store says; its outbox row is `order.created`. With one, the
/// order is pending until now + the window (Postgres' clock): its seats are written
/// released, not sold, until it is paid ([`pay_in_tx`]), and its outbox row is
/// `order.pending`. A night of a season order is paid, in the season's currency, with no
/// outbox row of its own. A hold offered from the waiting list is bought only before the
/// offer's deadline, judged by Postgres' clock, as every expiry is: past it no order is
/// written ([`Written::OfferLapsed`]), and the caller rolls back.
pub(crate) async fn write_orders(
    tx: &mut PgConnection,
    placements: &[&Placement],
) -> Result<Written, sqlx::Error> {
    let numbers: Vec<i32> = (1..).take(placements.len()).collect();
    let (s_numbers, s_seats, s_types, s_prices): (Vec<i32>, Vec<&str>, Vec<&str>, Vec<i64>) = {
        let mut out = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (&n, p) in numbers.iter().zip(placements) {
            for s in &p.seats {
                out.0.push(n);
                out.1.push(s.seat_id.as_str());
                out.2.push(s.ticket_type.as_str());
                out.3.push(s.price_cents);
            }
        }
        out
    };
    let total = |p: &Placement| -> i64 { p.seats.iter().map(|s| s.price_cents).sum() };
    // A pending order takes its listed seats from their sellers when it is paid.
    let sold_now: Vec<(EventId, Uuid, &[ClaimedSeat])> = placements
        .iter()
        .filter(|p| p.window_seconds == 0)
        .map(|p| (p.event, p.order_id, p.seats.as_slice()))
        .collect();
    let resold = seats::take_listed(&mut *tx, &sold_now).await?;
    let placed: Vec<PlacedRow> = sqlx::query_as(concat!(
        "with u as (
             select * from unnest($1::int4[], $2::uuid[], $3::uuid[], $4::text[], $5::uuid[],
                                  $6::float8[], $7::int8[], $12::uuid[], $13::text[],
                                  $14::timestamptz[])
                        as u (n, e, o, usr, t, w, total, so, cur, at)
         ), offer as (
             update waitlist_entry we set status = 'B', ended_at = now()
               from u
              where we.event_id = u.e and we.offer_token = u.t and we.status = 'O'
             returning we.offer_expires_at > now() as open
         ), placed as (
             insert into ticket_order (event_id, order_id, user_id, hold_token, total_cents,
                                       currency, status, pay_by, created_at, season_order_id)
             select u.e, u.o, u.usr, u.t, u.total,
                    coalesce(u.cur, (select currency from ticket_type tt where tt.event_id = u.e
                                      order by position limit 1)),
                    case when u.w > 0 then 'pending_payment' else 'confirmed' end,
                    case when u.w > 0
                         then date_trunc('milliseconds', now() + make_interval(secs => u.w)) end,
                    coalesce(u.at, now()), u.so
               from u
              where not exists (select 1 from offer where not open)
             returning order_id, currency, created_at, pay_by
         ), ",
        seats_join_new_orders!(),
        "
         select u.n, placed.currency, placed.created_at, placed.pay_by,
                exists (select 1 from offer where not open) as lapsed
           from u left join placed on placed.order_id = u.o
          order by u.n",
    ))
    .bind(&numbers)
    .bind(placements.iter().map(|p| p.event.0).collect::<Vec<_>>())
    .bind(placements.iter().map(|p| p.order_id).collect::<Vec<_>>())
    .bind(
        placements
            .iter()
            .map(|p| p.user.as_str())
            .collect::<Vec<_>>(),
    )
    .bind(placements.iter().map(|p| p.token).collect::<Vec<_>>())
    .bind(
        placements
            .iter()
            .map(|p| f64::from(p.window_seconds))
            .collect::<Vec<_>>(),
    )
    .bind(placements.iter().map(|p| total(p)).collect::<Vec<_>>())
    .bind(&s_numbers)
    .bind(&s_seats)
    .bind(&s_types)
    .bind(&s_prices)
    .bind(
        placements
            .iter()
            .map(|p| p.season.as_ref().map(|s| s.season_order_id))
            .collect::<Vec<_>>(),
    )
    .bind(
        placements
            .iter()
            .map(|p| p.season.as_ref().map(|s| s.currency.as_str()))
            .collect::<Vec<_>>(),
    )
    .bind(
        placements
            .iter()
            .map(|p| p.season.as_ref().map(|s| s.created_at))
            .collect::<Vec<_>>(),
    )
    .fetch_all(&mut *tx)
    .await?;
    if placed.iter().any(|row| row.lapsed) {
        return Ok(Written::OfferLapsed);
    }
    let mut orders = Vec::with_capacity(placements.len());
    for (row, p) in placed.into_iter().zip(placements) {
        let (Some(currency), Some(created_at)) = (row.currency, row.created_at) else {
            return Err(sqlx::Error::Protocol(format!(
                "order {} of a batch of {} was not written",
                row.n,
                placements.len()
            )));
        };
        orders.push(Order {
            order_id: p.order_id,
            event_id: p.event,
            user_id: p.user.clone(),
            hold_token: p.token,
            seats: p.seats.clone(),
            total_cents: total(p),
            currency,
            status: if row.pay_by.is_some() {
                OrderStatus::PendingPayment
            } else {
                OrderStatus::Paid
            },
            created_at,
            payment: row.pay_by.map(|pay_by| Payment {
                pay_by,
                paid_at: None,
                reference: None,
            }),
        });
    }
    if orders.len() != placements.len() {
        return Err(sqlx::Error::Protocol(format!(
            "{} orders written of {}",
            orders.len(),
            placements.len()
        )));
    }
    // The passes these orders end: a claim under one sees either its hold still held (and
    // counts it) or the pass ended (`sql/claim.sql`).
    let (pass_events, pass_tickets): (Vec<Uuid>, Vec<Uuid>) = placements
        .iter()
        .filter_map(|p| p.pass.map(|ticket| (p.event.0, ticket)))
        .unzip();
    if !pass_tickets.is_empty() {
        sqlx::query(
            "insert into pass_ended (event_id, ticket)
             select * from unnest($1::uuid[], $2::uuid[]) on conflict do nothing",
        )
        .bind(&pass_events)
        .bind(&pass_tickets)
        .execute(&mut *tx)
        .await?;
    }
    let mut changes: Vec<outbox::Change> = orders
        .iter()
        .zip(placements)
        .filter(|(_, p)| p.season.is_none())
        .map(|(o, _)| outbox::Change {
            event_id: o.event_id.0,
            topic: match o.status {
                OrderStatus::PendingPayment => Topic::OrderPending,
                _ => Topic::OrderCreated,
            },
            payload: payload(o),
        })
        .collect();
    changes.extend(seats::resold_changes(resold));
    outbox::write(&mut *tx, &changes).await?;
    Ok(Written::Orders(orders))
}

/// The row of the order `order_id`, locked for update in the caller's transaction.
async fn lock_order(tx: &mut PgConnection, order_id: Uuid) -> Result<Option<OrderRow>, StoreError> {
    Ok(sqlx::query_as(AssertSqlSafe(format!(
        "select {ORDER_COLUMNS} from ticket_order o where o.order_id = $1 for update"
    )))
    .bind(order_id)
    .fetch_optional(&mut *tx)
    .await?)
}

/// The order `order_id` with its seats, its row locked for update in the caller's
/// transaction.
pub(crate) async fn lock(
    tx: &mut PgConnection,
    order_id: Uuid,
) -> Result<Option<Order>, StoreError> {
    match lock_order(tx, order_id).await? {
        Some(row) => Ok(Some(with_seats(tx, row).await?)),
        None => Ok(None),
    }
}

/// The pending order `order_id`, locked for its payment: `Err` with the answer when it is
/// not pending (paid before, expired, cancelled, or no such order).
pub async fn lock_for_payment(
    tx: &mut PgConnection,
    order_id: Uuid,
    reference: &str,
) -> Result<Result<Order, PayOutcome>, StoreError> {
    let row = lock_order(tx, order_id).await?;
    let Some(row) = row else {
        return Ok(Err(PayOutcome::NotFound));
    };
    let order = with_seats(tx, row).await?;
    Ok(match order.status {
        OrderStatus::PendingPayment => Ok(order),
        OrderStatus::Paid => {
            let same =
                order.payment.as_ref().and_then(|p| p.reference.as_deref()) == Some(reference);
            Err(if same {
                PayOutcome::Repeated(order)
            } else {
                PayOutcome::AlreadyPaid(order)
            })
        }
        OrderStatus::Expired | OrderStatus::Cancelled => Err(PayOutcome::Closed(order)),
    })
}

/// Records the payment of the pending `order` (locked by [`lock_for_payment`]), whose hold
/// store has made its seats the order's for good: the order is paid, its seats sold (the
/// unique index counts them from now on), and its outbox row `order.paid` written.
pub async fn pay_in_tx(
    tx: &mut PgConnection,
    mut order: Order,
    reference: &str,
) -> Result<Order, StoreError> {
    let paid_at: DateTime<Utc> = sqlx::query_scalar(
        "update ticket_order set status = 'confirmed', paid_at = now(), payment_reference = $3
          where event_id = $1 and order_id = $2
         returning paid_at",
    )
    .bind(order.event_id.0)
    .bind(order.order_id)
    .bind(reference)
    .fetch_one(&mut *tx)
    .await?;
    let resold =
        seats::take_listed(&mut *tx, &[(order.event_id, order.order_id, &order.seats)]).await?;
    outbox::write(&mut *tx, &seats::resold_changes(resold).collect::<Vec<_>>()).await?;
    seats::rejoin(&mut *tx, order.event_id, order.order_id).await?;
    order.status = OrderStatus::Paid;
    if let Some(payment) = &mut order.payment {
        payment.paid_at = Some(paid_at);
        payment.reference = Some(reference.to_owned());
    }
    write_outbox(&mut *tx, order.event_id, Topic::OrderPaid, &order).await?;
    Ok(order)
}

/// Records that the window of the order `order_id` closed before its payment (if it is
/// still pending), as the answer to that payment.
pub async fn record_expiry(
    pool: &sqlx::PgPool,
    order_id: Uuid,
    reference: &str,
) -> Result<PayOutcome, StoreError> {
    let mut tx = pool.begin().await?;
    let answer = match lock_for_payment(&mut tx, order_id, reference).await? {
        Ok(order) => PayOutcome::Closed(expire_in_tx(&mut tx, order).await?),
        Err(answer) => answer,
    };
    tx.commit().await?;
    Ok(answer)
}

/// Records that the pending `order` (locked by [`lock_for_payment`]) expired: the answer
/// to a payment that came too late, and what the sweep does at each deadline.
pub async fn expire_in_tx(tx: &mut PgConnection, mut order: Order) -> Result<Order, StoreError> {
    sqlx::query(
        "update ticket_order set status = 'expired'
          where event_id = $1 and order_id = $2 and status = 'pending_payment'",
    )
    .bind(order.event_id.0)
    .bind(order.order_id)
    .execute(&mut *tx)
    .await?;
    order.status = OrderStatus::Expired;
    write_outbox(&mut *tx, order.event_id, Topic::OrderExpired, &order).await?;
    Ok(order)
}

/// What [`cancel_in_tx`] found.
pub enum CancelStep {
    /// The order was confirmed and is now cancelled; these seats were released.
    Cancelled(Order),
    /// The order was cancelled before, or expired unpaid; nothing changed.
    AlreadyCancelled(Order),
    /// No such order.
    NotFound,
    /// Another user's order.
    Forbidden,
}

impl CancelStep {
    /// The answer to the caller, once the store has done its part of a new cancellation
    /// (and offered its seats to the waiting list: `offers`).
    pub fn into_outcome(self, offers: Vec<boxoffice_core::hold::Offer>) -> CancelOutcome {
        match self {
            CancelStep::Cancelled(order) => CancelOutcome::Cancelled(order, offers),
            CancelStep::AlreadyCancelled(order) => CancelOutcome::Cancelled(order, Vec::new()),
            CancelStep::NotFound => CancelOutcome::NotFound,
            CancelStep::Forbidden => CancelOutcome::Forbidden,
        }
    }
}

/// Cancels an order inside the caller's transaction: the order, its seats (released, so the
/// unique index no longer counts them), its outbox row, and staff's audit entry. `by` acts:
/// a buyer on their own order only.
pub async fn cancel_in_tx(
    tx: &mut PgConnection,
    order_id: Uuid,
    by: By<'_>,
) -> Result<CancelStep, StoreError> {
    // Lock the order row so two cancellations cannot both release and both write outbox rows.
    let row = lock_order(tx, order_id).await?;
    let Some(row) = row else {
        return Ok(CancelStep::NotFound);
    };
    if by.buyer().is_some_and(|u| u.as_str() != row.user_id) {
        return Ok(CancelStep::Forbidden);
    }
    let mut order = with_seats(tx, row).await?;
    if matches!(order.status, OrderStatus::Cancelled | OrderStatus::Expired) {
        return Ok(CancelStep::AlreadyCancelled(order));
    }
    let change = Change {
        action: Action::OrderCancelled,
        target_id: order_id.to_string(),
        changes: serde_json::json!({ "status": [order.status, OrderStatus::Cancelled] }),
    };
    by.record(&mut *tx, &change).await?;
    seats::cancel(&mut *tx, &[(order.event_id, order_id)], false).await?;
    order.status = OrderStatus::Cancelled;
    write_outbox(&mut *tx, order.event_id, Topic::OrderCancelled, &order).await?;
    Ok(CancelStep::Cancelled(order))
}

/// Pending orders recorded expired per transaction at most.
const EXPIRE_AT_ONCE: i64 = 1000;

/// Records the expiry of pending orders whose deadline has passed, oldest deadline first,
/// a batch per transaction, each with its outbox row `order.expired`; answers how many.
/// Their seats went back on sale at the deadline already (reads compose it); this records
/// it and tells downstream systems. An order a payment holds locked is skipped: the
/// payment decides it. So is one kept for the waiting list, until its `kept_until` (see
/// [`crate::sales::lapsing`]).
pub async fn expire_pending(pool: &sqlx::PgPool) -> Result<u64, StoreError> {
    let mut expired = 0;
    loop {
        let mut tx = pool.begin().await?;
        let rows: Vec<OrderRow> = sqlx::query_as(AssertSqlSafe(format!(
            "update ticket_order o set status = 'expired'
              where (o.event_id, o.order_id) in
                    (select event_id, order_id from ticket_order
                      where status = 'pending_payment' and pay_by <= now()
                        and (kept_until is null or kept_until <= now())
                      order by pay_by
                      limit $1
                        for update skip locked)
             returning {ORDER_COLUMNS}"
        )))
        .bind(EXPIRE_AT_ONCE)
        .fetch_all(&mut *tx)
        .await?;
        let n = rows.len();
        // By (event, order): the primary key's order, one index probe per order.
        let events: Vec<Uuid> = rows.iter().map(|r| r.event_id).collect();
        let ids: Vec<Uuid> = rows.iter().map(|r| r.order_id).collect();
        let seats: Vec<(Uuid, String, String, i64)> = sqlx::query_as(
            "select s.order_id, s.seat_id, s.ticket_type, s.price_cents
               from unnest($1::uuid[], $2::uuid[]) as u (event_id, order_id)
               join order_seat s on s.event_id = u.event_id and s.order_id = u.order_id
              order by s.order_id, s.seat_id",
        )
        .bind(&events)
        .bind(&ids)
        .fetch_all(&mut *tx)
        .await?;
        let mut changes = Vec::with_capacity(n);
        for row in rows {
            let id = row.order_id;
            let order = row.into_order(
                seats
                    .iter()
                    .filter(|s| s.0 == id)
                    .map(|(_, seat_id, ticket_type, price_cents)| ClaimedSeat {
                        seat_id: seat_id.clone(),
                        ticket_type: ticket_type.clone(),
                        price_cents: *price_cents,
                    })
                    .collect(),
            )?;
            changes.push(outbox::Change {
                event_id: order.event_id.0,
                topic: Topic::OrderExpired,
                payload: payload(&order),
            });
        }
        outbox::write(&mut *tx, &changes).await?;
        tx.commit().await?;
        expired += n as u64;
        if n < EXPIRE_AT_ONCE as usize {
            return Ok(expired);
        }
    }
}

/// What an order's outbox row says of it.
pub(super) fn payload(order: &Order) -> serde_json::Value {
    let payment = order.payment.as_ref();
    json!({
        "order_id": order.order_id,
        "event_id": order.event_id,
        "user_id": order.user_id,
        "status": order.status,
        "seats": order.seats.iter().map(|s| json!({
            "id": s.seat_id, "ticket_type": s.ticket_type, "price_cents": s.price_cents,
        })).collect::<Vec<_>>(),
        "total_cents": order.total_cents,
        "currency": order.currency,
        "pay_by": payment.map(|p| p.pay_by),
        "paid_at": payment.and_then(|p| p.paid_at),
        "payment_reference": payment.and_then(|p| p.reference.as_deref()),
    })
}

async fn write_outbox<'e>(
    executor: impl PgExecutor<'e>,
    event: EventId,
    topic: Topic,
    order: &Order,
) -> Result<(), StoreError> {
    let change = outbox::Change {
        event_id: event.0,
        topic,
        payload: payload(order),
    };
    Ok(outbox::write(executor, &[change]).await?)
}
