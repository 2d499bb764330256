//! Orders: written inside a hold store's checkout transaction, read, and cancelled. Every
//! change writes its outbox row in the same transaction.

use boxoffice_core::hold::{CancelOutcome, ClaimedSeat, Order, OrderStatus};
use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::{PgConnection, PgExecutor};
use uuid::Uuid;

use crate::error::stored_user_id;
use crate::StoreError;

type OrderRow = (Uuid, Uuid, String, Uuid, i64, String, String, DateTime<Utc>);

const ORDER_COLUMNS: &str =
    "order_id, event_id, user_id, hold_token, total_cents, currency, status, created_at";

async fn with_seats(conn: &mut PgConnection, row: OrderRow) -> Result<Order, StoreError> {
    let (order_id, event_id, user_id, hold_token, total_cents, currency, status, created_at) = row;
    let seats = sqlx::query_as::<_, (String, String, i64)>(
        "select seat_id, ticket_type, price_cents from order_seat
          where event_id = $1 and order_id = $2 order by seat_id",
    )
    .bind(event_id)
    .bind(order_id)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|(seat_id, ticket_type, price_cents)| ClaimedSeat {
        seat_id,
        ticket_type,
        price_cents,
    })
    .collect();
    Ok(Order {
        order_id,
        event_id: EventId(event_id),
        user_id: stored_user_id(&user_id)?,
        hold_token,
        seats,
        total_cents,
        currency,
        status: stored_status(&status),
        created_at,
    })
}

/// An order's status as `ticket_order.status` stores it.
pub(crate) fn stored_status(text: &str) -> OrderStatus {
    if text == "cancelled" {
        OrderStatus::Cancelled
    } else {
        OrderStatus::Confirmed
    }
}

/// The order checked out from this hold token, if any.
pub async fn find_by_token(
    conn: &mut PgConnection,
    event: EventId,
    token: Uuid,
) -> Result<Option<Order>, StoreError> {
    let row: Option<OrderRow> = sqlx::query_as(&format!(
        "select {ORDER_COLUMNS} from ticket_order where event_id = $1 and hold_token = $2"
    ))
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

/// One order by id.
pub async fn get_order(
    conn: &mut PgConnection,
    order_id: Uuid,
) -> Result<Option<Order>, StoreError> {
    let row: Option<OrderRow> = sqlx::query_as(&format!(
        "select {ORDER_COLUMNS} from ticket_order where order_id = $1"
    ))
    .bind(order_id)
    .fetch_optional(&mut *conn)
    .await?;
    match row {
        Some(row) => Ok(Some(with_seats(conn, row).await?)),
        None => Ok(None),
    }
}

/// Writes an order for `seats`, its seats and its outbox row, inside the caller's
/// transaction. The partial unique index `order_seat_sold` refuses a seat that is already
/// in a live order (a `Conflict` on that constraint), whatever any hold store says.
pub async fn insert_order(
    tx: &mut PgConnection,
    event: EventId,
    user: &UserId,
    token: Uuid,
    seats: &[ClaimedSeat],
) -> Result<Order, StoreError> {
    let order_id = Uuid::new_v4();
    let total_cents: i64 = seats.iter().map(|s| s.price_cents).sum();
    let (currency, created_at): (String, DateTime<Utc>) = sqlx::query_as(
        "insert into ticket_order (event_id, order_id, user_id, hold_token, total_cents, currency)
         values ($1, $2, $3, $4, $5,
                 (select currency from ticket_type where event_id = $1 order by position limit 1))
         returning currency, created_at",
    )
    .bind(event.0)
    .bind(order_id)
    .bind(user.as_str())
    .bind(token)
    .bind(total_cents)
    .fetch_one(&mut *tx)
    .await?;
    sqlx::query(
        "insert into order_seat (event_id, order_id, seat_id, ticket_type, price_cents)
         select $1, $2, * from unnest($3::text[], $4::text[], $5::int8[])",
    )
    .bind(event.0)
    .bind(order_id)
    .bind(seats.iter().map(|s| s.seat_id.as_str()).collect::<Vec<_>>())
    .bind(
        seats
            .iter()
            .map(|s| s.ticket_type.as_str())
            .collect::<Vec<_>>(),
    )
    .bind(seats.iter().map(|s| s.price_cents).collect::<Vec<_>>())
    .execute(&mut *tx)
    .await?;
    let order = Order {
        order_id,
        event_id: event,
        user_id: user.clone(),
        hold_token: token,
        seats: seats.to_vec(),
        total_cents,
        currency,
        status: OrderStatus::Confirmed,
        created_at,
    };
    write_outbox(&mut *tx, event, "order.created", &order).await?;
    Ok(order)
}

/// What [`cancel_in_tx`] found.
pub enum CancelStep {
    /// The order was confirmed and is now cancelled; these seats were released.
    Cancelled(Order),
    /// The order was cancelled before; nothing changed.
    AlreadyCancelled(Order),
    /// No such order.
    NotFound,
    /// Another user's order.
    Forbidden,
}

impl CancelStep {
    /// The answer to the caller, once the store has done its part of a new cancellation.
    pub fn into_outcome(self) -> CancelOutcome {
        match self {
            CancelStep::Cancelled(order) | CancelStep::AlreadyCancelled(order) => {
                CancelOutcome::Cancelled(order)
            }
            CancelStep::NotFound => CancelOutcome::NotFound,
            CancelStep::Forbidden => CancelOutcome::Forbidden,
        }
    }
}

/// Cancels an order inside the caller's transaction: the order, its seats (released, so the
/// unique index no longer counts them) and its outbox row. `by` is the acting user, or
/// `None` for an admin.
pub async fn cancel_in_tx(
    tx: &mut PgConnection,
    order_id: Uuid,
    by: Option<&UserId>,
) -> Result<CancelStep, StoreError> {
    // Lock the order row so two cancellations cannot both release and both write outbox rows.
    let row: Option<OrderRow> = sqlx::query_as(&format!(
        "select {ORDER_COLUMNS} from ticket_order where order_id = $1 for update"
    ))
    .bind(order_id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(row) = row else {
        return Ok(CancelStep::NotFound);
    };
    if by.is_some_and(|u| u.as_str() != row.2) {
        return Ok(CancelStep::Forbidden);
    }
    let already = row.6 == "cancelled";
    let mut order = with_seats(tx, row).await?;
    if already {
        return Ok(CancelStep::AlreadyCancelled(order));
    }
    sqlx::query("update ticket_order set status = 'cancelled', cancelled_at = now() where event_id = $1 and order_id = $2")
        .bind(order.event_id.0)
        .bind(order_id)
        .execute(&mut *tx)
        .await?;
    sqlx::query("update order_seat set released = true where event_id = $1 and order_id = $2")
        .bind(order.event_id.0)
        .bind(order_id)
        .execute(&mut *tx)
        .await?;
    order.status = OrderStatus::Cancelled;
    write_outbox(&mut *tx, order.event_id, "order.cancelled", &order).await?;
    Ok(CancelStep::Cancelled(order))
}

async fn write_outbox<'e>(
    executor: impl PgExecutor<'e>,
    event: EventId,
    topic: &str,
    order: &Order,
) -> Result<(), StoreError> {
    let payload = json!({
        "order_id": order.order_id,
        "event_id": order.event_id,
        "user_id": order.user_id,
        "status": order.status,
        "seats": order.seats.iter().map(|s| json!({
            "id": s.seat_id, "ticket_type": s.ticket_type, "price_cents": s.price_cents,
        })).collect::<Vec<_>>(),
        "total_cents": order.total_cents,
        "currency": order.currency,
    });
    sqlx::query("insert into outbox (event_id, topic, payload) values ($1, $2, $3::jsonb)")
        .bind(event.0)
        .bind(topic)
        .bind(payload.to_string())
        .execute(executor)
        .await?;
    Ok(())
}
