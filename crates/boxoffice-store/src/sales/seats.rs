//! Where a seat joins or leaves an order: the one lock order of every flow that changes a
//! sold seat-night, and the steps they share. A seat joins an order (a checkout's, with
//! [`seats_join_new_orders`] in the order writer's one statement; [`join`] for a move or a
//! swap; [`rejoin`] for a payment or a night taken back) and leaves it ([`leave`],
//! [`take_listed`] for a resale, [`cancel`] for a cancellation alone or of a season's
//! nights), ending its listing ([`unlist`]) and, through the triggers of migration 0027,
//! revoking its ticket; the order's total follows ([`retotal`]). The door keeps a listed
//! seat for its holder ([`kept_by_holder`]).
//!
//! # The lock order
//!
//! Every flow that changes a sold seat of an event (a checkout that buys a seat listed for
//! resale, a listing and its withdrawal, the door's scan, a move or a swap, a cancellation,
//! a season night released or taken back) takes its locks in this order, and none waits
//! for an earlier step's lock while holding a later one:
//!
//! 1. **The orders** the seat is in or leaves: their `ticket_order` rows `for update`, in
//!    `order_id` order when there are several (a GA place: its `ga_booking` row). A
//!    checkout takes its sellers' orders ([`SELLERS_LOCKED`]) before anything of the
//!    buyer's hold.
//! 2. **The hold store's part** of the seat: its `reservation` row on the postgres store
//!    (the hold, or the sold seat's reserved row); on the redis store its keys, which one
//!    script at a time changes, so nothing there waits.
//! 3. **The seat's own rows**: its listing (`resale_listing`), its `order_seat` row and
//!    ticket, its entry (`ticket_entry`, `checkin`).
//!
//! One exception, and why it cannot close a circle: a move and a night taken back take the
//! rows of their own new hold (seats that were free, held by the order's buyer) before the
//! order's row. The only flow that waits on such a row while holding an order's lock is
//! the door taking a listed seat back for its seller, and that lock is the seller's: a
//! circle needs the seller moving another of their seats onto the very listed seat whose
//! ticket is being scanned, and Postgres' deadlock detector breaks it (one of the two
//! changes nothing and answers 503).
//!
//! **The listing before the hold store.** A withdrawal and the door taking a listed seat
//! back lock the listing row (step 3) before the hold store's step, because on the redis
//! store that step marks the seat sold before Postgres commits, and a load of the event's
//! state into Redis that begins in between (emptying `soldnew`) must not read the listing
//! as still there: the load reads listings `for share`, so it waits for the commit. Every
//! flow that locks a listing row holds its order's row (step 1) first, and the load holds
//! nothing a step-2 flow waits on (the event row `for share`), so this closes no circle.
//!
//! So two flows on one seat never deadlock and never both win: the second waits on the
//! order's row, then reads (a statement after the lock sees what the first committed)
//! and decides on what is there now. A resale sale and the seller's scan: the sale
//! commits first and the scan finds the ticket revoked, or the scan commits first, the
//! listing is gone and the seat the seller's again in the hold store, and the buyer's
//! checkout finds no live hold. A listing and a scan: the listing sees the ticket inside
//! and is refused, or the scan ends the listing.

use boxoffice_core::hold::{ClaimedSeat, Order};
use boxoffice_core::ids::EventId;
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use super::SaleSeats;
use crate::journal::outbox::{self, Topic};
use crate::StoreError;

/// The seats of a batch of new orders join them: a `sold` query of the order writer's one
/// statement ([`super::orders`]), after its `u` (the orders: `n`, event `e`, order `o`,
/// payment window `w`) and `placed` (the orders written; none when an offer lapsed), with
/// `$8`–`$11` each seat's order number, seat, ticket type and price. A seat of a pending
/// order joins it released (no ticket) until the payment rejoins it ([`rejoin`]);
/// Postgres' unique index refuses a seat another live order has.
macro_rules! seats_join_new_orders {
    () => {
        "sold as (
             insert into order_seat (event_id, order_id, seat_id, ticket_type, price_cents, released)
             select u.e, u.o, s.seat, s.ty, s.price, u.w > 0
               from unnest($8::int4[], $9::text[], $10::text[], $11::int8[]) as s (n, seat, ty, price)
               join u on u.n = s.n
              where exists (select 1 from placed)
         )"
    };
}
pub(crate) use seats_join_new_orders;

/// The SQL of step 1 for a checkout, as a one-time condition (`(select count(*) from
/// sellers) >= 0`, true once it has run) of the statement that then takes the hold: a
/// `sellers` query that locks the orders selling seats that are listed for resale and held
/// by the checkouts' tokens, `$1` their events and `$2` their tokens, before any row of
/// the holds. Postgres runs a condition that names no row of the statement once, before
/// its first row.
pub(crate) const SELLERS_LOCKED: &str = "sellers as (
        select o.order_id from ticket_order o
         where (o.event_id, o.order_id) in (
                   select l.event_id, l.order_id
                     from unnest($1::uuid[], $2::uuid[]) as k (e, t)
                     join reservation r on r.event_id = k.e and r.hold_token = k.t
                     join resale_listing l on l.event_id = r.event_id
                                          and l.seat_id = r.seat_id
                    where r.status = 'H')
         order by o.order_id
           for update of o)";

/// Step 1 for the door: locks the order the ticket `ticket_id` of `event` is in (a GA
/// place: its booking), if it is a ticket of the event still in one.
pub(crate) async fn lock_ticket(
    tx: &mut PgConnection,
    event: EventId,
    ticket_id: Uuid,
) -> Result<(), StoreError> {
    sqlx::query(
        "with seat as (
             select o.order_id from order_seat s
               join ticket_order o using (event_id, order_id)
              where s.event_id = $1 and s.ticket_id = $2
                for update of o
         ), place as (
             select b.booking_id from ga_ticket g
               join ga_booking b using (event_id, booking_id)
              where g.event_id = $1 and g.ticket_id = $2
                for update of b
         )
         select (select count(*) from seat) + (select count(*) from place)",
    )
    .bind(event.0)
    .bind(ticket_id)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// The seat `seat_id` of the order `order_id` (locked), if the order lists it for resale:
/// as the order has it, its listing locked (see "The listing before the hold store").
pub(crate) async fn listed(
    tx: &mut PgConnection,
    order_id: Uuid,
    seat_id: &str,
) -> Result<Option<ClaimedSeat>, StoreError> {
    let listed: Option<(String, i64)> = sqlx::query_as(
        "select s.ticket_type, s.price_cents
           from resale_listing l
           join order_seat s on s.event_id = l.event_id and s.order_id = l.order_id
                            and s.seat_id = l.seat_id and not s.released
          where l.order_id = $1 and l.seat_id = $2
            for update of l",
    )
    .bind(order_id)
    .bind(seat_id)
    .fetch_optional(&mut *tx)
    .await?;
    Ok(listed.map(|(ticket_type, price_cents)| ClaimedSeat {
        seat_id: seat_id.to_owned(),
        ticket_type,
        price_cents,
    }))
}

/// Steps 2 and 3 for a listed `seat` of `order` (locked) whose ticket just let its holder
/// in: it is the order's alone again in the hold store, whatever hold has it (that hold
/// ends, so its checkout finds it not live), and listed no longer.
pub(crate) async fn kept_by_holder(
    tx: &mut PgConnection,
    store: &dyn SaleSeats,
    order: &Order,
    seat: &ClaimedSeat,
) -> Result<(), StoreError> {
    store.reclaimed_in_tx(tx, order, seat).await?;
    unlist(tx, order, std::slice::from_ref(&seat.seat_id)).await
}

/// The orders `orders` (event, order), locked, are cancelled together, a batch of one for
/// an order alone or every night of a season: each its status (with `released_at` for a
/// season night released), and every seat of each leaves it: released (the unique index
/// no longer counts it, the trigger revokes its ticket) and listed no longer.
pub(crate) async fn cancel(
    tx: &mut PgConnection,
    orders: &[(EventId, Uuid)],
    night_released: bool,
) -> Result<(), StoreError> {
    let events: Vec<Uuid> = orders.iter().map(|(e, _)| e.0).collect();
    let ids: Vec<Uuid> = orders.iter().map(|(_, o)| *o).collect();
    sqlx::query(
        "with u as (
             select * from unnest($1::uuid[], $2::uuid[]) as u (e, o)
         ), cancelled as (
             update ticket_order o
                set status = 'cancelled', cancelled_at = now(),
                    released_at = case when $3 then now() end
               from u where o.event_id = u.e and o.order_id = u.o
         ), released as (
             update order_seat s set released = true
               from u where s.event_id = u.e and s.order_id = u.o
         )
         delete from resale_listing l using u where l.event_id = u.e and l.order_id = u.o",
    )
    .bind(&events)
    .bind(&ids)
    .bind(night_released)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// The released seats of the order `order_id` join it again, sold (a payment, a season
/// night taken back): the trigger issues each a new ticket.
pub(crate) async fn rejoin(
    tx: &mut PgConnection,
    event: EventId,
    order_id: Uuid,
) -> Result<(), StoreError> {
    sqlx::query("update order_seat set released = false where event_id = $1 and order_id = $2")
        .bind(event.0)
        .bind(order_id)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

/// Takes `seats` out of `order`: their rows go (the trigger revokes their tickets).
/// Answers the seats that were the order's.
pub(crate) async fn leave(
    tx: &mut PgConnection,
    order: &Order,
    seats: &[String],
) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar(
        "delete from order_seat
          where event_id = $1 and order_id = $2 and seat_id = any($3) and not released
         returning seat_id",
    )
    .bind(order.event_id.0)
    .bind(order.order_id)
    .bind(seats)
    .fetch_all(&mut *tx)
    .await?)
}

/// The listings of `seats` by `order` go, waiting for an order buying one of them.
pub(crate) async fn unlist(
    tx: &mut PgConnection,
    order: &Order,
    seats: &[String],
) -> Result<(), StoreError> {
    sqlx::query(
        "delete from resale_listing where event_id = $1 and order_id = $2 and seat_id = any($3)",
    )
    .bind(order.event_id.0)
    .bind(order.order_id)
    .bind(seats)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// Writes `seats` into `order`, sold, each a new ticket issued now; Postgres' unique index
/// refuses a seat another live order has (`Constraint::SeatSold`).
pub(crate) async fn join(
    tx: &mut PgConnection,
    order: &Order,
    seats: &[ClaimedSeat],
) -> Result<(), StoreError> {
    sqlx::query(
        "insert into order_seat (event_id, order_id, seat_id, ticket_type, price_cents, released,
                                 issued_at)
         select $1, $2, s.seat, s.ty, s.price, false, now()
           from unnest($3::text[], $4::text[], $5::int8[]) as s (seat, ty, price)",
    )
    .bind(order.event_id.0)
    .bind(order.order_id)
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
    Ok(())
}

/// The order's total made the sum of its seats now; the order as it is.
pub(crate) async fn retotal(tx: &mut PgConnection, mut order: Order) -> Result<Order, StoreError> {
    let total: i64 = order.seats.iter().map(|s| s.price_cents).sum();
    if total != order.total_cents {
        sqlx::query(
            "update ticket_order set total_cents = $3 where event_id = $1 and order_id = $2",
        )
        .bind(order.event_id.0)
        .bind(order.order_id)
        .bind(total)
        .execute(&mut *tx)
        .await?;
        order.total_cents = total;
    }
    Ok(order)
}

/// A seat listed for resale that an order bought, taken from its seller's order.
#[derive(sqlx::FromRow)]
pub(crate) struct Resold {
    event_id: Uuid,
    /// The seller's order.
    order_id: Uuid,
    seat_id: String,
    ticket_type: String,
    /// What the seller paid for it.
    price_cents: i64,
    /// The order that bought it.
    buyer_order_id: Uuid,
}

/// The seats `sold` (each with its event and the order buying it) that are listed for
/// resale leave their sellers' orders, in one statement before the buyers' rows are sold
/// under the unique index (but a seat whose seller came in with its ticket, which stays
/// theirs: the buyer's row then meets the seller's, and Postgres refuses the sale): each listing
/// goes, the seller's row goes (its ticket revoked by the trigger) and the seller's total
/// loses the seat's price. The caller writes `order.resold` for each ([`resold_changes`]),
/// so the platform refunds the seller. The sellers' orders are locked first (step 1):
/// a scan of a seller's ticket either committed before (its
/// listing is gone, and the buyer's row meets the seller's) or waits for this sale and finds
/// the ticket revoked.
pub(crate) async fn take_listed(
    tx: &mut PgConnection,
    sold: &[(EventId, Uuid, &[ClaimedSeat])],
) -> Result<Vec<Resold>, sqlx::Error> {
    let (mut events, mut seats, mut buyers) = (Vec::new(), Vec::new(), Vec::new());
    for (event, order_id, sold) in sold {
        for s in *sold {
            events.push(event.0);
            seats.push(s.seat_id.as_str());
            buyers.push(*order_id);
        }
    }
    if seats.is_empty() {
        return Ok(Vec::new());
    }
    sqlx::query_as(
        "with u as (
             select * from unnest($1::uuid[], $2::text[], $3::uuid[]) as u (e, seat, buyer)
         ), sellers as (
             select o.order_id from ticket_order o
              where (o.event_id, o.order_id) in (
                        select l.event_id, l.order_id from resale_listing l
                          join u on l.event_id = u.e and l.seat_id = u.seat)
              order by o.order_id
                for update of o
         ), listed as (
             delete from resale_listing l using u
              where l.event_id = u.e and l.seat_id = u.seat
                and (select count(*) from sellers) >= 0
                and not exists (select 1 from order_seat s
                                  join ticket_entry t on t.event_id = s.event_id
                                                     and t.ticket_id = s.ticket_id
                                 where s.event_id = l.event_id and s.order_id = l.order_id
                                   and s.seat_id = l.seat_id)
             returning l.event_id, l.seat_id, l.order_id, u.buyer
         ), gone as (
             delete from order_seat s using listed l
              where s.event_id = l.event_id and s.order_id = l.order_id
                and s.seat_id = l.seat_id and not s.released
             returning s.event_id, s.order_id, s.seat_id, s.ticket_type, s.price_cents
         ), totals as (
             update ticket_order o set total_cents = o.total_cents - g.paid
               from (select event_id, order_id, sum(price_cents)::int8 as paid
                       from gone group by event_id, order_id) g
              where o.event_id = g.event_id and o.order_id = g.order_id
         )
         select g.event_id, g.order_id, g.seat_id, g.ticket_type, g.price_cents,
                l.buyer as buyer_order_id
           from gone g join listed l using (event_id, seat_id)",
    )
    .bind(&events)
    .bind(&seats)
    .bind(&buyers)
    .fetch_all(&mut *tx)
    .await
}

/// The outbox rows `order.resold`: the seller's order, the seat with what they paid for
/// it, and the order that bought it.
pub(crate) fn resold_changes(resold: Vec<Resold>) -> impl Iterator<Item = outbox::Change> {
    resold.into_iter().map(|r| outbox::Change {
        event_id: r.event_id,
        topic: Topic::OrderResold,
        payload: json!({
            "order_id": r.order_id,
            "event_id": r.event_id,
            "seat": {"id": r.seat_id, "ticket_type": r.ticket_type, "price_cents": r.price_cents},
            "resold_to": r.buyer_order_id,
        }),
    })
}
