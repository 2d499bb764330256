//! Checkout on the redis store: Redis protects the hold's seats while Postgres commits the
//! order, where the unique indexes decide; then the seats are marked sold in Redis, or the
//! hold is given back as it was.

use boxoffice_core::hold::{CheckoutOutcome, ClaimedSeat, Order, OrderStatus, PayOutcome};
use boxoffice_core::ids::{EventId, UserId};
use uuid::Uuid;

use super::*;
use crate::error::Constraint;

impl RedisHoldStore {
    pub(super) async fn checkout_hold(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
        window_seconds: u32,
    ) -> Result<CheckoutOutcome, StoreError> {
        // A token already checked out has no hold left in Redis (or, if the last step of
        // its checkout never reached Redis, a protected one whose order Postgres refuses
        // to write twice): either way Postgres has the order, so it is looked up only then.
        let mut conn = self.conn().await?;
        let mut attempts = 0;
        let (hold, reply) = loop {
            let Some(hold) = self.stored(&mut conn, event, token).await? else {
                return Ok(self
                    .existing_order(event, token, user)
                    .await?
                    .unwrap_or(CheckoutOutcome::NotLive));
            };
            if hold.user != user.as_str() {
                return Ok(CheckoutOutcome::Forbidden);
            }
            // Check the token still owns every seat, and protect them for the commit.
            let protect = [
                user.as_str().to_owned(),
                CHECKOUT_PROTECTION.as_millis().to_string(),
                hold.seats_json.clone(),
            ];
            let reply: Vec<Value> = Self::hold_invocation(
                &self.scripts.checkout,
                event,
                token,
                &[keys::held(event), keys::pass_ended(event, hold.pass)],
                &protect,
                &hold.seats,
            )
            .invoke_async(&mut conn)
            .await
            .map_err(redis_error)?;
            match decode::<i64>(reply.first().unwrap_or(&Value::Nil))? {
                1 => break (hold, reply),
                -1 => return Ok(CheckoutOutcome::Forbidden),
                // The buyer added or took out a seat since the hold was read.
                -2 if attempts + 1 < CHANGED_ATTEMPTS => attempts += 1,
                -2 => return Err(still_changing()),
                _ => {
                    return Ok(self
                        .existing_order(event, token, user)
                        .await?
                        .unwrap_or(CheckoutOutcome::NotLive))
                }
            }
        };
        let seats = decode_seats(&decode::<String>(&reply[2])?)?;
        match self
            .commit_order(event, token, user, &seats, hold.pass, window_seconds)
            .await
        {
            Ok(order) => {
                self.finish(&order).await;
                Ok(CheckoutOutcome::Created(order))
            }
            // Another checkout of the same token committed first: its order stands. That
            // checkout may have died before marking the seats sold (or kept for the pending
            // order) in Redis (its instance killed, say, and this is the buyer asking again),
            // so this one does it too; doing it twice changes nothing.
            Err(StoreError::Conflict {
                constraint: Constraint::OrderOfToken,
            }) => {
                let existing = self.existing_order(event, token, user).await?;
                if let Some(CheckoutOutcome::Existing(order)) = &existing {
                    self.finish(order).await;
                }
                Ok(existing.unwrap_or(CheckoutOutcome::NotLive))
            }
            // Postgres knows a seat is sold that Redis did not: Postgres decides. The hold
            // goes, and the event's sold seats are loaded again before the next hold.
            Err(StoreError::Conflict {
                constraint: Constraint::SeatSold,
            }) => {
                self.missed_sales.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(%event, %token, "redis held a seat postgres has sold; reloading the event's sold seats");
                self.restore(event, token, user, &seats, true).await;
                Ok(CheckoutOutcome::NotLive)
            }
            // A waiting-list offer past its deadline: the hold is given back as it was,
            // for the sweep to pass its seats to the next buyer in line.
            Err(StoreError::Conflict {
                constraint: Constraint::OfferLapsed,
            }) => {
                self.restore(event, token, user, &seats, false).await;
                Ok(CheckoutOutcome::NotLive)
            }
            Err(e) => {
                self.restore(event, token, user, &seats, false).await;
                Err(e)
            }
        }
    }

    /// What Redis does once Postgres committed `order`: a paid order's seats are marked
    /// sold; a pending order's are kept for it until its deadline.
    async fn finish(&self, order: &Order) {
        match &order.payment {
            Some(payment) if order.status == OrderStatus::PendingPayment => {
                let result = self.pending(order, "keep", payment.pay_by).await;
                if let Err(e) = result {
                    tracing::warn!(order = %order.order_id, error = %e, "could not keep a pending order's seats in redis; they lapse when the checkout's protection does");
                }
            }
            _ => {
                self.finish_sold(
                    order.event_id,
                    order.hold_token,
                    &order.user_id,
                    &order.seats,
                )
                .await
            }
        }
    }

    /// Runs `order_pending.lua` on `order`'s seats (`mode` as it says); answers its number.
    pub(super) async fn pending(
        &self,
        order: &Order,
        mode: &str,
        pay_by: chrono::DateTime<chrono::Utc>,
    ) -> Result<i64, StoreError> {
        let event = order.event_id;
        let head = [
            keys::held(event),
            keys::user(event, order.user_id.as_str()),
            keys::hold(event, order.hold_token),
        ];
        let mut conn = self.conn().await?;
        let mut call = self.scripts.pending.prepare_invoke();
        for key in &head {
            call.key(key);
        }
        for seat in &order.seats {
            call.key(keys::seat(event, &seat.seat_id));
        }
        call.arg(order.hold_token.to_string())
            .arg(mode)
            .arg(pay_by.timestamp_millis())
            .arg(CHECKOUT_PROTECTION.as_millis() as u64);
        for seat in &order.seats {
            call.arg(&seat.seat_id);
        }
        call.invoke_async(&mut conn).await.map_err(redis_error)
    }

    /// The seats of `order` whose keys still hold its hold's token: what the expiry sweep
    /// kept for it past its deadline (order_pending.lua's `keep` mode, with a later time).
    pub(super) async fn kept_seats(&self, order: &Order) -> Result<Vec<String>, StoreError> {
        if order.seats.is_empty() {
            return Ok(Vec::new());
        }
        let mut conn = self.conn().await?;
        let mut get = redis::cmd("MGET");
        for seat in &order.seats {
            get.arg(keys::seat(order.event_id, &seat.seat_id));
        }
        let holders: Vec<Option<String>> = get.query_async(&mut conn).await.map_err(redis_error)?;
        let token = order.hold_token.to_string();
        Ok(order
            .seats
            .iter()
            .zip(holders)
            .filter(|(_, holder)| holder.as_deref() == Some(token.as_str()))
            .map(|(seat, _)| seat.seat_id.clone())
            .collect())
    }

    /// Records the payment of a pending order: Redis checks the order's seats are still its
    /// own before the deadline and protects them, Postgres sells them (or, past it, records
    /// the expiry), and Redis marks them sold (or gives them back their deadline).
    pub(super) async fn pay_order(
        &self,
        order_id: Uuid,
        reference: &str,
    ) -> Result<PayOutcome, StoreError> {
        let mut tx = self.pool.begin().await?;
        let order = match orders::lock_for_payment(&mut tx, order_id, reference).await? {
            Ok(order) => order,
            Err(answer) => return Ok(answer),
        };
        let Some(pay_by) = order.payment.as_ref().map(|p| p.pay_by) else {
            return Err(StoreError::Other("a pending order without pay_by".into()));
        };
        if self.pending(&order, "pay", pay_by).await? != 1 {
            drop(tx);
            return orders::record_expiry(&self.pool, order_id, reference).await;
        }
        let paid = async {
            let paid = orders::pay_in_tx(&mut tx, order.clone(), reference).await?;
            tx.commit().await?;
            Ok::<_, StoreError>(paid)
        };
        match paid.await {
            Ok(paid) => {
                self.finish_sold(paid.event_id, paid.hold_token, &paid.user_id, &paid.seats)
                    .await;
                Ok(PayOutcome::Paid(paid))
            }
            Err(e) => {
                // The seats' deadline again: pay_by, or later when the sweep kept them for
                // the waiting list.
                let kept: Option<chrono::DateTime<chrono::Utc>> =
                    sqlx::query_scalar("select kept_until from ticket_order where order_id = $1")
                        .bind(order.order_id)
                        .fetch_optional(&self.pool)
                        .await
                        .ok()
                        .flatten()
                        .flatten();
                let until = kept.map_or(pay_by, |kept| kept.max(pay_by));
                if let Err(e) = self.pending(&order, "restore", until).await {
                    tracing::warn!(order = %order.order_id, error = %e, "could not give a pending order's seats their deadline back in redis; their protection lapses by itself");
                }
                Err(e)
            }
        }
    }

    /// Marks the order's seats sold in Redis and ends the hold. The order is committed
    /// either way: if Redis cannot be reached, the seats stay protected until the checkout's
    /// protection lapses, and the event's next load from Postgres (within [`SYNC_TTL`])
    /// refuses them; a hold taken on one meanwhile fails at checkout, where Postgres
    /// decides.
    async fn finish_sold(&self, event: EventId, token: Uuid, user: &UserId, seats: &[ClaimedSeat]) {
        let head = [
            keys::held(event),
            keys::user(event, user.as_str()),
            keys::sold(event),
            keys::sold_new(event),
        ];
        let keep = [(2 * SYNC_TTL.as_millis()).to_string()];
        let result = self
            .run_hold_script(&self.scripts.sold, event, token, &head, &keep, seats)
            .await;
        if let Err(e) = result {
            tracing::warn!(%event, %token, error = %e, "could not mark sold seats in redis; postgres has the order, and the event's next load from postgres will refuse them");
        }
    }

    /// Ends a checkout that did not sell: the hold gets its own expiry back, or is dropped
    /// (and the event's sold seats reloaded) when Postgres refused the order.
    async fn restore(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
        seats: &[ClaimedSeat],
        drop: bool,
    ) {
        let head = [
            keys::held(event),
            keys::user(event, user.as_str()),
            keys::sync(event),
        ];
        let args = [if drop { "1" } else { "0" }.to_owned()];
        let result = self
            .run_hold_script(&self.scripts.restore, event, token, &head, &args, seats)
            .await;
        if let Err(e) = result {
            tracing::warn!(%event, %token, error = %e, "could not end a checkout's protection in redis; it lapses by itself");
        }
    }

    /// The order already made from `token`, as the answer to a checkout.
    async fn existing_order(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
    ) -> Result<Option<CheckoutOutcome>, StoreError> {
        let mut conn = self.pool.acquire().await?;
        Ok(orders::find_by_token(&mut conn, event, token)
            .await?
            .map(|order| existing(order, user)))
    }

    /// Writes the order in Postgres: the unique indexes decide.
    async fn commit_order(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
        seats: &[ClaimedSeat],
        pass: Option<Uuid>,
        window_seconds: u32,
    ) -> Result<Order, StoreError> {
        // Orders keep synchronous commit: success is answered only once the order is durable.
        let mut tx = self.pool.begin().await?;
        let order = orders::insert_order(
            &mut tx,
            event,
            user,
            token,
            seats,
            Uuid::new_v4(),
            window_seconds,
        )
        .await?;
        // Redis ended the pass as the checkout began (holds look there); general-admission
        // bookings look in Postgres.
        if let Some(ticket) = pass {
            crate::pg::holds::end_pass(&mut tx, event, ticket).await?;
        }
        tx.commit().await?;
        Ok(order)
    }
}
