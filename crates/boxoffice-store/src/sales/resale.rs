//! Resale: a buyer lists seats of their paid order, and any buyer holds and buys them as a
//! free seat, through the same claim (`sql/claim.sql` and the redis store's scripts see a
//! listed seat as free) and the same order writer, which takes a listed seat from its
//! seller's order for the buyer's ([`super::orders`]: `order.resold`). Until then the seat
//! is the seller's (their row, their ticket), and they may take the listing back while no
//! one holds the seat.

use boxoffice_core::ids::EventId;
use sqlx::PgPool;
use uuid::Uuid;

use super::changes::{lock_paid, Refused};
use super::SaleSeats;
use crate::error::retry_contention;
use crate::journal::audit::{Action, By, Change};
use crate::StoreError;

/// Lists `seats` of the paid order `order_id` (`by` acts: its buyer, or staff) for resale;
/// answers every seat of the order listed now. A seat listed already stays listed; a seat
/// whose ticket let someone in is refused.
pub async fn list(
    pool: &PgPool,
    store: &dyn SaleSeats,
    order_id: Uuid,
    seats: &[String],
    by: By<'_>,
) -> Result<Result<Vec<String>, Refused>, StoreError> {
    retry_contention(|| async move {
        let mut tx = pool.begin().await?;
        let order = match lock_paid(&mut tx, order_id, by).await? {
            Ok(order) => order,
            Err(refused) => return Ok(Err(refused)),
        };
        let missing: Vec<String> = seats
            .iter()
            .filter(|seat| !order.seats.iter().any(|s| &s.seat_id == *seat))
            .cloned()
            .collect();
        if !missing.is_empty() {
            return Ok(Err(Refused::NotInOrder(missing)));
        }
        let redeemed: Option<(chrono::DateTime<chrono::Utc>, Option<String>)> = sqlx::query_as(
            "select t.first_at, t.first_gate from order_seat s
               join ticket_entry t on t.event_id = s.event_id and t.ticket_id = s.ticket_id
              where s.event_id = $1 and s.order_id = $2 and s.seat_id = any($3)
              order by t.first_at limit 1",
        )
        .bind(order.event_id.0)
        .bind(order_id)
        .bind(seats)
        .fetch_optional(&mut *tx)
        .await?;
        if let Some((at, gate)) = redeemed {
            return Ok(Err(Refused::Redeemed { at, gate }));
        }
        // The hold store's part of the seats (step 2 of `super::seats`), then the listings.
        store.listed_in_tx(&mut tx, order.event_id, seats).await?;
        let listed: Vec<String> = sqlx::query_scalar(
            "insert into resale_listing (event_id, seat_id, order_id)
             select $1, seat, $2 from unnest($3::text[]) as seat
             on conflict do nothing
             returning seat_id",
        )
        .bind(order.event_id.0)
        .bind(order_id)
        .bind(seats)
        .fetch_all(&mut *tx)
        .await?;
        if !listed.is_empty() {
            let change = Change {
                action: Action::OrderListed,
                target_id: order_id.to_string(),
                changes: serde_json::json!({ "listed": [null, listed] }),
            };
            by.record(&mut tx, &change).await?;
        }
        let all = listed_of(&mut tx, order_id).await?;
        tx.commit().await?;
        store.listed(order.event_id, &listed).await;
        Ok(Ok(all))
    })
    .await
}

/// Takes the listing of `seat` by the order `order_id` back (`by` acts: its buyer, or
/// staff): the seat is the order's alone again, unless someone holds it now (then nothing
/// changes: [`Refused::Unavailable`]). A withdrawal and a hold at once: exactly one wins.
pub async fn withdraw(
    pool: &PgPool,
    store: &dyn SaleSeats,
    order_id: Uuid,
    seat: &str,
    by: By<'_>,
) -> Result<Result<EventId, Refused>, StoreError> {
    let mut tx = pool.begin().await?;
    let order = match lock_paid(&mut tx, order_id, by).await? {
        Ok(order) => order,
        Err(refused) => return Ok(Err(refused)),
    };
    let Some(sold) = order.seats.iter().find(|s| s.seat_id == seat) else {
        return Ok(Err(Refused::NotListed));
    };
    // Under the order's lock no other flow changes its listings: the listing locked, then
    // the hold store's part of the seat (step 2 of `super::seats`), then the listing ended.
    // Locked before the hold store marks the seat sold again: a load of the event's state
    // into the redis store reads the listings with `for share`, so one that begins after
    // that mark waits for this commit and never finds the seat listed and free.
    let listed: Option<i32> = sqlx::query_scalar(
        "select 1 from resale_listing
          where event_id = $1 and seat_id = $2 and order_id = $3
            for update",
    )
    .bind(order.event_id.0)
    .bind(seat)
    .bind(order_id)
    .fetch_optional(&mut *tx)
    .await?;
    if listed.is_none() {
        return Ok(Err(Refused::NotListed));
    }
    if !store.withdraw_in_tx(&mut tx, &order, sold).await? {
        return Ok(Err(Refused::Unavailable(vec![seat.to_owned()])));
    }
    sqlx::query(
        "delete from resale_listing where event_id = $1 and seat_id = $2 and order_id = $3",
    )
    .bind(order.event_id.0)
    .bind(seat)
    .bind(order_id)
    .execute(&mut *tx)
    .await?;
    let change = Change {
        action: Action::OrderUnlisted,
        target_id: order_id.to_string(),
        changes: serde_json::json!({ "listed": [[seat], null] }),
    };
    by.record(&mut tx, &change).await?;
    if let Err(e) = tx.commit().await {
        // The hold store took the seat back for the order: it is listed still.
        store.listed(order.event_id, &[seat.to_owned()]).await;
        return Err(e.into());
    }
    Ok(Ok(order.event_id))
}

/// The seats the order `order_id` lists for resale, by id.
pub async fn listed_of(
    conn: &mut sqlx::PgConnection,
    order_id: Uuid,
) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar(
        "select seat_id from resale_listing where order_id = $1 order by seat_id",
    )
    .bind(order_id)
    .fetch_all(&mut *conn)
    .await?)
}

/// Which of `seats` are listed for resale in `event`.
pub async fn listed_among(
    pool: &PgPool,
    event: EventId,
    seats: &[&str],
) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar(
        "select seat_id from resale_listing where event_id = $1 and seat_id = any($2)",
    )
    .bind(event.0)
    .bind(seats)
    .fetch_all(pool)
    .await?)
}
