//! Changing sold seats: a paid order's seats moved to others, two orders' seats swapped,
//! and a season night released earlier taken back. Each is one Postgres transaction that
//! locks the orders it changes; the seats an order gains are taken as a checkout takes a
//! hold's ([`SaleSeats::take_for_order`]), so the claim (`sql/claim.sql`) decides who may
//! have them, and the order's rows are written under the `order_seat_sold` unique index.
//! A seat leaves its order as its row: a trigger revokes its ticket, and a row written for
//! a seat gained is a new ticket. (A long file: the three changes share the locking, the
//! taking of a hold and the writing of rows, and read best side by side.)

use boxoffice_core::hold::{ClaimedSeat, Offer, Order, OrderStatus};
use boxoffice_core::ids::{EventId, UserId};
use serde_json::json;
use sqlx::{PgConnection, PgPool, Postgres, Transaction};
use uuid::Uuid;

use super::orders::{self, payload};
use super::seats;
use super::{Changed, SaleSeats, Taken};
use crate::error::{retry_contention, Constraint};
use crate::journal::audit::{Action, By, Change};
use crate::journal::outbox::{self, Topic};
use crate::StoreError;

/// One seat of an order moved to another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Move {
    /// The order's seat.
    pub from: String,
    /// The seat it moves to.
    pub to: String,
}

/// Why a change of sold seats did not happen (and nothing changed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refused {
    /// No such order (or the season order covers no such night).
    NotFound,
    /// Another buyer's order.
    Forbidden,
    /// The order is not paid (pending, cancelled or expired): its seats do not move.
    NotPaid(OrderStatus),
    /// These seats are not the order's.
    NotInOrder(Vec<String>),
    /// These seats are not free to the order (taken meanwhile, or listed for resale).
    Unavailable(Vec<String>),
    /// The two seats of a swap are in one order, or in two events.
    NotSwappable(&'static str),
    /// The night was not released (or the season order was cancelled).
    NotReleased,
    /// The seat's ticket let someone in already (when, through which gate): it is not
    /// listed.
    Redeemed {
        /// When it went in.
        at: chrono::DateTime<chrono::Utc>,
        /// Through which gate.
        gate: Option<String>,
    },
    /// The seat is not listed by this order.
    NotListed,
}

/// A change of sold seats that committed: each order as it is now, with its seats before,
/// the seats no order has any more (already offered to the waiting list: `offers`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Done {
    /// Each order changed, now, with its seats before the change.
    pub orders: Vec<(Order, Vec<ClaimedSeat>)>,
    /// Seats that left every order.
    pub freed: Vec<String>,
    /// The waiting list's offers made of them.
    pub offers: Vec<Offer>,
}

/// A paid order, locked in the caller's transaction, if `by` may change it.
pub(super) async fn lock_paid(
    tx: &mut PgConnection,
    order_id: Uuid,
    by: By<'_>,
) -> Result<Result<Order, Refused>, StoreError> {
    let Some(order) = orders::lock(tx, order_id).await? else {
        return Ok(Err(Refused::NotFound));
    };
    if by.buyer().is_some_and(|u| u != &order.user_id) {
        return Ok(Err(Refused::Forbidden));
    }
    if order.status != OrderStatus::Paid {
        return Ok(Err(Refused::NotPaid(order.status)));
    }
    Ok(Ok(order))
}

/// Moves seats of the paid `order` (as the caller read it; it is locked and read again in
/// the move's transaction; `by` acts: its buyer, or staff) to the seats
/// of the live hold `token` of the order's buyer, which the caller made of every move's
/// `to`: all of them or none. The seats left go to the waiting list first, then on sale.
/// The caller releases the hold when the move does not happen.
pub async fn move_seats(
    pool: &PgPool,
    store: &dyn SaleSeats,
    order: &Order,
    token: Uuid,
    moves: &[Move],
    by: By<'_>,
) -> Result<Result<Done, Refused>, StoreError> {
    let (order_id, event, user) = (order.order_id, order.event_id, order.user_id.clone());
    let to: Vec<String> = moves.iter().map(|m| m.to.clone()).collect();
    let (seats, mut tx) = match take(pool, store, (event, token, &user), order_id).await? {
        Some(taken) => taken,
        None => return Ok(Err(Refused::Unavailable(to))),
    };
    let written = async {
        let order = match lock_paid(&mut tx, order_id, by).await? {
            Ok(order) => order,
            Err(refused) => return Ok(Err(refused)),
        };
        let missing: Vec<String> = moves
            .iter()
            .filter(|m| !order.seats.iter().any(|s| s.seat_id == m.from))
            .map(|m| m.from.clone())
            .collect();
        if !missing.is_empty() {
            return Ok(Err(Refused::NotInOrder(missing)));
        }
        let from: Vec<String> = moves.iter().map(|m| m.from.clone()).collect();
        // A seat listed for resale moves as any other: its listing goes with it. Should an
        // order have bought it meanwhile (its listing and row went first), it is not this
        // order's to move any more.
        seats::unlist(&mut tx, &order, &from).await?;
        let left = seats::leave(&mut tx, &order, &from).await?;
        if left.len() < from.len() {
            let resold = from.iter().filter(|s| !left.contains(s)).cloned().collect();
            return Ok(Err(Refused::NotInOrder(resold)));
        }
        seats::join(&mut tx, &order, &seats).await?;
        let after = orders::lock(&mut tx, order_id)
            .await?
            .ok_or(StoreError::Other("the order moved went".into()))?;
        let after = seats::retotal(&mut tx, after).await?;
        let change = Changed {
            event,
            hold: Some((token, &user, &seats)),
            gained: &[(order.hold_token, user.clone(), to.clone())],
            freed: &from,
        };
        store.changed_in_tx(&mut tx, &change).await?;
        let offers = store.offer(&mut tx, event, &from, None).await?;
        record(&mut tx, by, &after, &order.seats).await?;
        Ok(Ok((after, order.seats, from, offers)))
    };
    let outcome = written.await;
    let hold = (event, token, &user);
    let (after, before, freed, offers) =
        match commit_or_give_back(tx, store, hold, &seats, &to, outcome).await? {
            Ok(done) => done,
            Err(refused) => return Ok(Err(refused)),
        };
    let change = Changed {
        event,
        hold: Some((token, &user, &seats)),
        gained: &[(after.hold_token, user.clone(), to)],
        freed: &freed,
    };
    store.changed(&change).await;
    Ok(Ok(Done {
        orders: vec![(after, before)],
        freed,
        offers,
    }))
}

/// Swaps `a`'s seat of order `a` with `b`'s seat of order `b` (both paid, of `event`, and
/// two orders), in one transaction: each order has the other's seat, with the ticket type
/// and price of that seat's row.
pub async fn swap(
    pool: &PgPool,
    store: &dyn SaleSeats,
    event: EventId,
    a: (Uuid, &str),
    b: (Uuid, &str),
    by: By<'_>,
) -> Result<Result<Done, Refused>, StoreError> {
    if a.0 == b.0 {
        return Ok(Err(Refused::NotSwappable("the two seats are in one order")));
    }
    retry_contention(|| async move {
        let mut tx = pool.begin().await?;
        // By id: two swaps of the same orders lock them in one order.
        let (first, second) = if a.0 < b.0 { (a, b) } else { (b, a) };
        let mut locked = Vec::with_capacity(2);
        for (id, _) in [first, second] {
            match lock_paid(&mut tx, id, by).await? {
                Ok(order) => locked.push(order),
                Err(refused) => return Ok(Err(refused)),
            }
        }
        let second_order = locked.pop().expect("two orders locked");
        let first_order = locked.pop().expect("two orders locked");
        let (order_a, order_b) = if a.0 < b.0 {
            (first_order, second_order)
        } else {
            (second_order, first_order)
        };
        if order_a.event_id != event || order_b.event_id != event {
            return Ok(Err(Refused::NotSwappable(
                "both orders must be of this event",
            )));
        }
        let seat_of =
            |order: &Order, seat: &str| order.seats.iter().find(|s| s.seat_id == seat).cloned();
        let (Some(seat_a), Some(seat_b)) = (seat_of(&order_a, a.1), seat_of(&order_b, b.1)) else {
            let missing = [(&order_a, a.1), (&order_b, b.1)]
                .into_iter()
                .filter(|(o, s)| seat_of(o, s).is_none())
                .map(|(_, s)| s.to_owned())
                .collect();
            return Ok(Err(Refused::NotInOrder(missing)));
        };
        // A seat listed for resale is offered to buyers: its seller takes it back first.
        let listed: Vec<String> = sqlx::query_scalar(
            "select seat_id from resale_listing where event_id = $1 and seat_id = any($2)",
        )
        .bind(event.0)
        .bind([seat_a.seat_id.as_str(), seat_b.seat_id.as_str()])
        .fetch_all(&mut *tx)
        .await?;
        if !listed.is_empty() {
            return Ok(Err(Refused::Unavailable(listed)));
        }
        seats::leave(&mut tx, &order_a, std::slice::from_ref(&seat_a.seat_id)).await?;
        seats::leave(&mut tx, &order_b, std::slice::from_ref(&seat_b.seat_id)).await?;
        seats::join(&mut tx, &order_a, std::slice::from_ref(&seat_b)).await?;
        seats::join(&mut tx, &order_b, std::slice::from_ref(&seat_a)).await?;
        let mut done = Vec::with_capacity(2);
        for before in [&order_a, &order_b] {
            let after = orders::lock(&mut tx, before.order_id)
                .await?
                .ok_or(StoreError::Other("a swapped order went".into()))?;
            let after = seats::retotal(&mut tx, after).await?;
            record(&mut tx, by, &after, &before.seats).await?;
            done.push((after, before.seats.clone()));
        }
        let change = Changed {
            event,
            hold: None,
            gained: &[
                (
                    order_a.hold_token,
                    order_a.user_id.clone(),
                    vec![seat_b.seat_id.clone()],
                ),
                (
                    order_b.hold_token,
                    order_b.user_id.clone(),
                    vec![seat_a.seat_id.clone()],
                ),
            ],
            freed: &[],
        };
        store.changed_in_tx(&mut tx, &change).await?;
        tx.commit().await?;
        store.changed(&change).await;
        Ok(Ok(Done {
            orders: done,
            freed: Vec::new(),
            offers: Vec::new(),
        }))
    })
    .await
}

/// The night of `event` of the season order `season_order_id`, released before, taken
/// back with the seats of the live hold `token` (which the caller made of that night's
/// seats, for the season's buyer): the night's order is paid again, its seats sold (new
/// tickets), and the season order covers the night again. The caller releases the hold
/// when it is not taken back.
pub async fn reclaim(
    pool: &PgPool,
    store: &dyn SaleSeats,
    night: &Order,
    season_order_id: Uuid,
    token: Uuid,
    by: By<'_>,
) -> Result<Result<Done, Refused>, StoreError> {
    let (event, user) = (night.event_id, night.user_id.clone());
    let wanted: Vec<String> = night.seats.iter().map(|s| s.seat_id.clone()).collect();
    let (seats, mut tx) = match take(pool, store, (event, token, &user), night.order_id).await? {
        Some(taken) => taken,
        None => return Ok(Err(Refused::Unavailable(wanted))),
    };
    let written = async {
        let season: Option<(String, String)> = sqlx::query_as(
            "select status, user_id from season_order where season_order_id = $1 for update",
        )
        .bind(season_order_id)
        .fetch_optional(&mut *tx)
        .await?;
        match season {
            None => return Ok(Err(Refused::NotFound)),
            Some((_, owner)) if by.buyer().is_some_and(|u| u.as_str() != owner) => {
                return Ok(Err(Refused::Forbidden))
            }
            Some((status, _)) if status == "cancelled" => return Ok(Err(Refused::NotReleased)),
            Some(_) => {}
        }
        let taken_back: Option<Uuid> = sqlx::query_scalar(
            "update ticket_order set status = 'confirmed', cancelled_at = null, released_at = null
              where event_id = $1 and order_id = $2 and season_order_id = $3
                and released_at is not null
             returning order_id",
        )
        .bind(event.0)
        .bind(night.order_id)
        .bind(season_order_id)
        .fetch_optional(&mut *tx)
        .await?;
        if taken_back.is_none() {
            return Ok(Err(Refused::NotReleased));
        }
        let mut got: Vec<&str> = seats.iter().map(|s| s.seat_id.as_str()).collect();
        got.sort_unstable();
        if got != wanted.iter().map(String::as_str).collect::<Vec<_>>() {
            return Ok(Err(Refused::Unavailable(wanted.clone())));
        }
        // Sold again: the trigger gives each row a new ticket.
        seats::rejoin(&mut tx, event, night.order_id).await?;
        let after = orders::lock(&mut tx, night.order_id)
            .await?
            .ok_or(StoreError::Other("the night's order went".into()))?;
        let change = Change {
            action: Action::OrderNightReclaimed,
            target_id: season_order_id.to_string(),
            changes: json!({ "released": [event, null] }),
        };
        by.record(&mut tx, &change).await?;
        let mut body = payload(&after);
        body["season_order_id"] = json!(season_order_id);
        outbox::write(
            &mut *tx,
            &[outbox::Change {
                event_id: event.0,
                topic: Topic::SeasonOrderReclaimed,
                payload: body,
            }],
        )
        .await?;
        let change = Changed {
            event,
            hold: Some((token, &user, &seats)),
            gained: &[(after.hold_token, user.clone(), wanted.clone())],
            freed: &[],
        };
        store.changed_in_tx(&mut tx, &change).await?;
        Ok(Ok(after))
    };
    let outcome = written.await;
    let hold = (event, token, &user);
    let after = match commit_or_give_back(tx, store, hold, &seats, &wanted, outcome).await? {
        Ok(after) => after,
        Err(refused) => return Ok(Err(refused)),
    };
    let change = Changed {
        event,
        hold: Some((token, &user, &seats)),
        gained: &[(after.hold_token, user.clone(), wanted)],
        freed: &[],
    };
    store.changed(&change).await;
    Ok(Ok(Done {
        orders: vec![(after, night.seats.clone())],
        freed: Vec::new(),
        offers: Vec::new(),
    }))
}

/// Takes the seats of the live hold `token` of `user` in `event` for the order `order_id`
/// as a checkout does, in a transaction begun for the change; `None` when the hold is not
/// live (or not the buyer's).
async fn take(
    pool: &PgPool,
    store: &dyn SaleSeats,
    (event, token, user): (EventId, Uuid, &UserId),
    order_id: Uuid,
) -> Result<Option<(Vec<ClaimedSeat>, Transaction<'static, Postgres>)>, StoreError> {
    match store
        .take_for_order(pool, event, token, user, order_id, 0)
        .await?
    {
        Taken::Seats { seats, tx, .. } => Ok(Some((seats, tx))),
        Taken::Protected { seats, .. } => match pool.begin().await {
            Ok(tx) => Ok(Some((seats, tx))),
            Err(e) => {
                store.give_back(event, token, user, &seats, false).await;
                Err(e.into())
            }
        },
        Taken::NotLive | Taken::Forbidden => Ok(None),
    }
}

/// Commits the change's transaction when its `outcome` is done; else rolls it back and
/// gives the hold its seats back (the caller releases it), answering the refusal: a seat
/// Postgres finds sold makes every one `wanted` unavailable.
async fn commit_or_give_back<T>(
    tx: Transaction<'static, Postgres>,
    store: &dyn SaleSeats,
    (event, token, user): (EventId, Uuid, &UserId),
    seats: &[ClaimedSeat],
    wanted: &[String],
    outcome: Result<Result<T, Refused>, StoreError>,
) -> Result<Result<T, Refused>, StoreError> {
    match outcome {
        Ok(Ok(done)) => {
            tx.commit().await?;
            Ok(Ok(done))
        }
        Ok(Err(refused)) => {
            drop(tx);
            store.give_back(event, token, user, seats, false).await;
            Ok(Err(refused))
        }
        Err(e) => {
            drop(tx);
            let sold = matches!(
                e,
                StoreError::Conflict {
                    constraint: Constraint::SeatSold
                }
            );
            store.give_back(event, token, user, seats, sold).await;
            if sold {
                Ok(Err(Refused::Unavailable(wanted.to_vec())))
            } else {
                Err(e)
            }
        }
    }
}

/// The outbox row `order.changed` (the order now, its seats before and the difference in
/// price) and staff's audit entry.
async fn record(
    tx: &mut PgConnection,
    by: By<'_>,
    after: &Order,
    before: &[ClaimedSeat],
) -> Result<(), StoreError> {
    let before_total: i64 = before.iter().map(|s| s.price_cents).sum();
    let ids = |seats: &[ClaimedSeat]| seats.iter().map(|s| s.seat_id.clone()).collect::<Vec<_>>();
    let change = Change {
        action: Action::OrderChanged,
        target_id: after.order_id.to_string(),
        changes: json!({ "seats": [ids(before), ids(&after.seats)] }),
    };
    by.record(&mut *tx, &change).await?;
    let mut body = payload(after);
    body["seats_before"] = json!(before
        .iter()
        .map(
            |s| json!({"id": s.seat_id, "ticket_type": s.ticket_type, "price_cents": s.price_cents})
        )
        .collect::<Vec<_>>());
    body["price_difference_cents"] = json!(after.total_cents - before_total);
    outbox::write(
        &mut *tx,
        &[outbox::Change {
            event_id: after.event_id.0,
            topic: Topic::OrderChanged,
            payload: body,
        }],
    )
    .await?;
    Ok(())
}

/// The sales channel `order` was bought in, as its seats tell: the channel of its first
/// seat allocated to one; none when every seat is on general sale.
pub async fn order_channel(pool: &PgPool, order: &Order) -> Result<Option<String>, StoreError> {
    let seats: Vec<&str> = order.seats.iter().map(|s| s.seat_id.as_str()).collect();
    Ok(sqlx::query_scalar(
        "select channel from seat_allocation
          where event_id = $1 and seat_id = any($2) and channel is not null
          order by seat_id limit 1",
    )
    .bind(order.event_id.0)
    .bind(&seats)
    .fetch_optional(pool)
    .await?)
}
