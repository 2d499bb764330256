//! The postgres store's part in a sale ([`SaleSeats`]): the hold's rows are the sale's, in
//! the sale's own transaction, so there is nothing to give back when it does not commit.

use async_trait::async_trait;
use boxoffice_core::hold::{ClaimedSeat, Offer, Order};
use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use super::PgHoldStore;
use crate::sales::{waitlist, Passing, SaleSeats, Taken};
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
        // Every precondition is in the WHERE: still a hold, this token, this user, and live
        // at the statement's start. A row another writer changes meanwhile is re-checked
        // against these conditions once that writer commits; a hold that had expired when
        // this statement began matches nothing, so a checkout racing its own expiry can
        // never sell a seat someone else has just taken over. With a payment window the rows
        // stay holds, of the order (its id as their token) until its deadline; else they are
        // reserved for the sale. The rows are taken in the order's own transaction.
        let mut tx = pool.begin().await?;
        let reserved: Vec<(String, String, i64, Option<Uuid>)> = sqlx::query_as(
            "update reservation
                set status = case when $5 > 0 then 'H' else 'R' end,
                    hold_token = case when $5 > 0 then $4 else hold_token end,
                    expires_at = case when $5 > 0
                                      then date_trunc('milliseconds', now() + make_interval(secs => $5))
                                      else expires_at end
              where event_id = $1 and hold_token = $2 and user_id = $3
                and status = 'H' and expires_at > statement_timestamp()
             returning seat_id, ticket_type, price_cents, pass_ticket",
        )
        .bind(event.0)
        .bind(token)
        .bind(user.as_str())
        .bind(order_id)
        .bind(f64::from(window_seconds))
        .fetch_all(&mut *tx)
        .await?;
        if reserved.is_empty() {
            return Ok(if Self::held_by_other(&mut tx, event, token, user).await? {
                Taken::Forbidden
            } else {
                Taken::NotLive
            });
        }
        // All of the hold or nothing: every row this token still has must have been live.
        let left: i64 = sqlx::query_scalar(
            "select count(*) from reservation
              where event_id = $1 and hold_token = $2 and status = 'H'",
        )
        .bind(event.0)
        .bind(token)
        .fetch_one(&mut *tx)
        .await?;
        if left > 0 {
            return Ok(Taken::NotLive);
        }
        let pass = reserved.iter().find_map(|(.., pass)| *pass);
        let mut seats: Vec<ClaimedSeat> = reserved
            .into_iter()
            .map(|(seat_id, ticket_type, price_cents, _)| ClaimedSeat {
                seat_id,
                ticket_type,
                price_cents,
            })
            .collect();
        seats.sort_by(|a, b| a.seat_id.cmp(&b.seat_id));
        Ok(Taken::Seats { seats, pass, tx })
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
