//! The postgres store's part in a sale ([`SaleSeats`]): the hold's rows are the sale's, in
//! the sale's own transaction, so there is nothing to give back when it does not commit.

use async_trait::async_trait;
use boxoffice_core::hold::{ClaimedSeat, Offer, Order};
use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use sqlx::AssertSqlSafe;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use super::PgHoldStore;
use crate::sales::seats::SELLERS_LOCKED;
use crate::sales::together::Checkout;
use crate::sales::{waitlist, Changed, Passing, SaleSeats, Taken};
use crate::StoreError;

#[async_trait]
impl SaleSeats for PgHoldStore {
    fn checkouts(&self) -> Option<&crate::sales::together::Checkouts> {
        Some(&self.checkouts)
    }

    async fn take_for_order(
        &self,
        pool: &PgPool,
        event: EventId,
        token: Uuid,
        user: &UserId,
        order_id: Uuid,
        window_seconds: u32,
    ) -> Result<Taken, StoreError> {
        // The rows are taken in the order's own transaction, as a batch of one.
        let mut tx = pool.begin().await?;
        let checkout = Checkout {
            event,
            token,
            user: user.clone(),
            window_seconds,
        };
        let taken = take_rows(&mut tx, &[(&checkout, order_id)]).await?;
        match taken.into_iter().next() {
            Some(Rows::Taken { seats, pass }) => Ok(Taken::Seats { seats, pass, tx }),
            Some(Rows::Partly) => Ok(Taken::NotLive),
            Some(Rows::None) | None => {
                Ok(if Self::held_by_other(&mut tx, event, token, user).await? {
                    Taken::Forbidden
                } else {
                    Taken::NotLive
                })
            }
        }
    }

    async fn take_for_payment(
        &self,
        tx: &mut PgConnection,
        order: &Order,
    ) -> Result<bool, StoreError> {
        // The order's seats are still its holds and live at this statement's start, and its
        // deadline (the order's, whatever the sweep kept the rows for) has not passed, or it
        // has: under each row's lock, so a claim taking a row over after the deadline
        // either committed first (and the row is no longer the order's) or waits and finds
        // the row reserved.
        let kept: Vec<String> = sqlx::query_scalar(
            "update reservation set status = 'R'
              where event_id = $1 and hold_token = $2 and status = 'H'
                and expires_at > statement_timestamp() and $3 > statement_timestamp()
             returning seat_id",
        )
        .bind(order.event_id.0)
        .bind(order.order_id)
        .bind(order.payment.as_ref().map(|p| p.pay_by))
        .fetch_all(&mut *tx)
        .await?;
        Ok(kept.len() == order.seats.len())
    }

    async fn keep_pending(
        &self,
        tx: &mut PgConnection,
        order: &Order,
        until: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        // A pending order's rows carry its id as their token; a row some hold took over
        // carries that hold's and stays as it is.
        sqlx::query(
            "update reservation set expires_at = $3
              where event_id = $1 and hold_token = $2 and boxoffice_live_hold(status, expires_at)",
        )
        .bind(order.event_id.0)
        .bind(order.order_id)
        .bind(until)
        .execute(&mut *tx)
        .await?;
        Ok(())
    }

    async fn seats_to_pass(
        &self,
        tx: &mut PgConnection,
        passing: Passing<'_>,
    ) -> Result<(Option<Uuid>, Vec<String>), StoreError> {
        // The rows go in this transaction, so the offers can take the seats. A row some
        // other hold took over (after a deadline) carries that hold's token and stays.
        let (statement, tokens) = match passing {
            // The reserved rows go with the sale (a pending order's held ones with the
            // order).
            Passing::Cancelled(order) => (
                "delete from reservation where event_id = $1 and hold_token = any($2)
                 returning seat_id",
                vec![order.hold_token, order.order_id],
            ),
            Passing::LapsedOffer(lapsed) => (
                "delete from reservation
                  where event_id = $1 and hold_token = any($2) and status = 'H'
                 returning seat_id",
                vec![lapsed.token],
            ),
            // The rows a lapsed order kept for the waiting list carry the order's id.
            Passing::LapsedOrder(order) => (
                "delete from reservation
                  where event_id = $1 and hold_token = any($2) and boxoffice_live_hold(status, expires_at)
                 returning seat_id",
                vec![order.order_id],
            ),
        };
        let seats = sqlx::query_scalar(statement)
            .bind(passing.event().0)
            .bind(&tokens)
            .fetch_all(&mut *tx)
            .await?;
        Ok((tokens.last().copied(), seats))
    }

    async fn changed_in_tx(
        &self,
        tx: &mut PgConnection,
        change: &Changed<'_>,
    ) -> Result<(), StoreError> {
        // A sold seat's row is reserved under its order's hold token (or the order's id,
        // paid after a window), which a cancellation lets go of: a seat gained carries its
        // new order's from now on, and a seat freed has no row.
        let (mut seats, mut tokens, mut users) = (Vec::new(), Vec::new(), Vec::new());
        for (token, user, gained) in change.gained {
            for seat in gained {
                seats.push(seat.as_str());
                tokens.push(*token);
                users.push(user.as_str());
            }
        }
        sqlx::query(
            "update reservation r set hold_token = g.t, user_id = g.u
               from unnest($2::text[], $3::uuid[], $4::text[]) as g (seat, t, u)
              where r.event_id = $1 and r.seat_id = g.seat and r.status = 'R'",
        )
        .bind(change.event.0)
        .bind(&seats)
        .bind(&tokens)
        .bind(&users)
        .execute(&mut *tx)
        .await?;
        if !change.freed.is_empty() {
            sqlx::query(
                "delete from reservation where event_id = $1 and seat_id = any($2) and status = 'R'",
            )
            .bind(change.event.0)
            .bind(change.freed)
            .execute(&mut *tx)
            .await?;
        }
        Ok(())
    }

    async fn listed_in_tx(
        &self,
        tx: &mut PgConnection,
        event: EventId,
        seats: &[String],
    ) -> Result<(), StoreError> {
        // A listed seat has no reserved row: a claim may take it as it takes a free one.
        sqlx::query(
            "delete from reservation where event_id = $1 and seat_id = any($2) and status = 'R'",
        )
        .bind(event.0)
        .bind(seats)
        .execute(&mut *tx)
        .await?;
        Ok(())
    }

    async fn withdraw_in_tx(
        &self,
        tx: &mut PgConnection,
        order: &Order,
        seat: &ClaimedSeat,
    ) -> Result<bool, StoreError> {
        // The seat's row reserved for the order again, as a claim takes a row: over none or
        // a lapsed hold only. A claim of the seat at once waits on the row, then finds it
        // reserved; a live hold makes this come back empty.
        reserve_for(
            tx,
            order,
            seat,
            "where boxoffice_lapsed(reservation.status, reservation.expires_at)",
        )
        .await
    }

    async fn reclaimed_in_tx(
        &self,
        tx: &mut PgConnection,
        order: &Order,
        seat: &ClaimedSeat,
    ) -> Result<(), StoreError> {
        // The hold that has the seat ends whole (its other seats go), and the seat's row is
        // reserved for the order again over whatever it was: a checkout of that hold
        // waits for the seller's order row (taken first, `sales::seats`), then finds no
        // row of its token held.
        sqlx::query(
            "delete from reservation r using reservation h
              where h.event_id = $1 and h.seat_id = $2 and h.status = 'H'
                and r.event_id = h.event_id and r.hold_token = h.hold_token
                and r.status = 'H' and r.seat_id <> h.seat_id",
        )
        .bind(order.event_id.0)
        .bind(&seat.seat_id)
        .execute(&mut *tx)
        .await?;
        reserve_for(tx, order, seat, "").await?;
        Ok(())
    }

    async fn offer(
        &self,
        tx: &mut PgConnection,
        event: EventId,
        seats: &[String],
        _from: Option<Uuid>,
    ) -> Result<Vec<Offer>, StoreError> {
        // The offers' holds are reservation rows, written by `boxoffice_waitlist_offer`.
        waitlist::offer_in_tx(tx, event, seats, true).await
    }
}

/// What a checkout found of its hold's rows.
pub(super) enum Rows {
    /// Every row the hold had, each live and its buyer's: the seats, sorted, and the pass
    /// the hold was made under.
    Taken {
        /// The seats with their quotes, by seat id.
        seats: Vec<ClaimedSeat>,
        /// The waiting-room pass of the hold.
        pass: Option<Uuid>,
    },
    /// No live row of the hold was its buyer's (expired, another buyer's, already bought).
    None,
    /// Some rows, while others the hold still has were not live: the checkout must not
    /// happen (its transaction is rolled back).
    Partly,
}

/// Reserves `seat`'s row for the paid `order` again, as a sold seat's: over no row, or over
/// the row there when it matches `over` (a `where` on `reservation`'s row; empty: whatever
/// it is). Whether it was reserved.
async fn reserve_for(
    tx: &mut PgConnection,
    order: &Order,
    seat: &ClaimedSeat,
    over: &str,
) -> Result<bool, StoreError> {
    let reserved: Option<String> = sqlx::query_scalar(AssertSqlSafe(format!(
        "insert into reservation (event_id, seat_id, hold_token, user_id, status, ticket_type,
                                  price_cents, created_at, expires_at)
         values ($1, $2, $3, $4, 'R', $5, $6, now(), now())
         on conflict on constraint reservation_pkey do update
            set hold_token = excluded.hold_token, user_id = excluded.user_id, status = 'R',
                ticket_type = excluded.ticket_type, price_cents = excluded.price_cents,
                created_at = excluded.created_at, expires_at = excluded.expires_at,
                pass_ticket = null
          {over}
         returning seat_id"
    )))
    .bind(order.event_id.0)
    .bind(&seat.seat_id)
    .bind(order.hold_token)
    .bind(order.user_id.as_str())
    .bind(&seat.ticket_type)
    .bind(seat.price_cents)
    .fetch_optional(&mut *tx)
    .await?;
    Ok(reserved.is_some())
}

/// Takes the rows of each checkout's hold for its order (`takes`: each checkout, of a
/// distinct hold, with its order's id), in the caller's transaction: the one statement a
/// checkout takes a hold with on the postgres store, alone (a batch of one) or together.
///
/// Every precondition is in the WHERE: still a hold, this token, this user, and live at the
/// statement's start. A row another writer changes meanwhile is re-checked against these
/// conditions once that writer commits; a hold that had expired when this statement began
/// matches nothing, so a checkout racing its own expiry can never sell a seat someone else
/// has just taken over. With a payment window the rows stay holds, of the order (its id as
/// their token) until its deadline; else they are reserved for the sale. All of a hold or
/// nothing: a hold whose token still has a held row after the statement is taken only in
/// part ([`Rows::Partly`]).
pub(super) async fn take_rows(
    tx: &mut PgConnection,
    takes: &[(&Checkout, Uuid)],
) -> Result<Vec<Rows>, sqlx::Error> {
    let events: Vec<Uuid> = takes.iter().map(|(c, _)| c.event.0).collect();
    let tokens: Vec<Uuid> = takes.iter().map(|(c, _)| c.token).collect();
    // The orders selling seats of these holds that are listed for resale are locked first
    // (`sales::seats`, step 1), then the holds' rows.
    let taken: Vec<(i64, String, String, i64, Option<Uuid>)> = sqlx::query_as(AssertSqlSafe(format!(
        "with {SELLERS_LOCKED}
         update reservation r
            set status = case when u.w > 0 then 'H' else 'R' end,
                hold_token = case when u.w > 0 then u.o else r.hold_token end,
                expires_at = case when u.w > 0
                                  then date_trunc('milliseconds', now() + make_interval(secs => u.w))
                                  else r.expires_at end
           from unnest($1::uuid[], $2::uuid[], $3::text[], $4::uuid[], $5::float8[])
                with ordinality as u (e, t, usr, o, w, n)
          where r.event_id = u.e and r.hold_token = u.t and r.user_id = u.usr
            and r.status = 'H' and r.expires_at > statement_timestamp()
            and (select count(*) from sellers) >= 0
         returning u.n, r.seat_id, r.ticket_type, r.price_cents, r.pass_ticket",
    )))
    .bind(&events)
    .bind(&tokens)
    .bind(takes.iter().map(|(c, _)| c.user.as_str()).collect::<Vec<_>>())
    .bind(takes.iter().map(|(_, order)| *order).collect::<Vec<_>>())
    .bind(
        takes
            .iter()
            .map(|(c, _)| f64::from(c.window_seconds))
            .collect::<Vec<_>>(),
    )
    .fetch_all(&mut *tx)
    .await?;
    let mut rows: Vec<(Vec<ClaimedSeat>, Option<Uuid>)> =
        takes.iter().map(|_| (Vec::new(), None)).collect();
    for (n, seat_id, ticket_type, price_cents, pass) in taken {
        let Some((seats, passed)) = usize::try_from(n - 1).ok().and_then(|i| rows.get_mut(i))
        else {
            return Err(sqlx::Error::Protocol(format!("a taken row of hold {n}")));
        };
        *passed = passed.or(pass);
        seats.push(ClaimedSeat {
            seat_id,
            ticket_type,
            price_cents,
        });
    }
    // Rows the holds taken still have, held: each was not live.
    let left: Vec<i64> = sqlx::query_scalar(
        "select distinct u.n from reservation r
           join unnest($1::uuid[], $2::uuid[]) with ordinality as u (e, t, n)
             on r.event_id = u.e and r.hold_token = u.t
          where r.status = 'H'",
    )
    .bind(&events)
    .bind(&tokens)
    .fetch_all(&mut *tx)
    .await?;
    Ok(rows
        .into_iter()
        .enumerate()
        .map(|(i, (mut seats, pass))| {
            if seats.is_empty() {
                Rows::None
            } else if left.contains(&(i as i64 + 1)) {
                Rows::Partly
            } else {
                seats.sort_by(|a, b| a.seat_id.cmp(&b.seat_id));
                Rows::Taken { seats, pass }
            }
        })
        .collect())
}
