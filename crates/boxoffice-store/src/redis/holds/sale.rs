//! The redis store's part in a sale ([`SaleSeats`]): Redis protects the hold's seats while
//! Postgres commits the order, where the unique indexes decide; then the seats are marked
//! sold (or kept for a pending order) in Redis, or the hold is given back as it was.

use async_trait::async_trait;
use boxoffice_core::hold::{ClaimedSeat, Offer, Order, OrderStatus};
use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use super::*;
use crate::sales::{waitlist, Changed, Passing, SaleSeats, Taken};

#[async_trait]
impl SaleSeats for RedisHoldStore {
    fn taken_checkouts(&self) -> Option<&crate::sales::together::TakenCheckouts> {
        Some(&self.checkouts)
    }

    async fn take_for_order(
        &self,
        _pool: &PgPool,
        event: EventId,
        token: Uuid,
        user: &UserId,
        _order_id: Uuid,
        _window_seconds: u32,
    ) -> Result<Taken, StoreError> {
        // A token already checked out has no hold left in Redis (or, if the last step of
        // its checkout never reached Redis, a protected one whose order Postgres refuses
        // to write twice): either way the flow finds the order in Postgres.
        let mut conn = self.conn().await?;
        for _ in 0..CHANGED_ATTEMPTS {
            let Some(hold) = self.stored(&mut conn, event, token).await? else {
                return Ok(Taken::NotLive);
            };
            if hold.user != user.as_str() {
                return Ok(Taken::Forbidden);
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
            match nth::<i64>(&reply, 0)? {
                1 => {
                    let seats = decode_seats(&nth::<String>(&reply, 2)?)?;
                    return Ok(Taken::Protected {
                        seats,
                        pass: hold.pass,
                    });
                }
                -1 => return Ok(Taken::Forbidden),
                // The buyer added or took out a seat since the hold was read.
                -2 => continue,
                _ => return Ok(Taken::NotLive),
            }
        }
        Err(still_changing())
    }

    async fn give_back(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
        seats: &[ClaimedSeat],
        sold: bool,
    ) {
        // Postgres knows a seat is sold that Redis did not: the hold goes, and the event's
        // sold seats are loaded again before the next hold.
        if sold {
            self.missed_sales.fetch_add(1, Ordering::Relaxed);
        }
        let head = [
            keys::held(event),
            keys::user(event, user.as_str()),
            keys::sync(event),
        ];
        let args = [if sold { "1" } else { "0" }.to_owned()];
        let result = self
            .run_hold_script(&self.scripts.restore, event, token, &head, &args, seats)
            .await;
        if let Err(e) = result {
            tracing::warn!(%event, %token, error = %e, "could not end a checkout's protection in redis; it lapses by itself");
        }
    }

    async fn ordered(&self, order: &Order) {
        match (&order.status, &order.payment) {
            (OrderStatus::PendingPayment, Some(payment)) => {
                let result = self.pending(order, Pending::Keep(payment.pay_by)).await;
                if let Err(e) = result {
                    tracing::warn!(order = %order.order_id, error = %e, "could not keep a pending order's seats in redis; they lapse when the checkout's protection does");
                }
            }
            (OrderStatus::Paid, _) => self.finish_sold(order).await,
            // Cancelled or expired since: its seats are not the order's any more.
            _ => {}
        }
    }

    async fn take_for_payment(
        &self,
        _tx: &mut PgConnection,
        order: &Order,
    ) -> Result<bool, StoreError> {
        Ok(self.pending(order, Pending::Pay).await? == 1)
    }

    async fn payment_failed(&self, order: &Order) {
        let Some(pay_by) = order.payment.as_ref().map(|p| p.pay_by) else {
            return;
        };
        // The seats' deadline again: pay_by, or later when the sweep kept them for the
        // waiting list.
        let kept: Option<DateTime<Utc>> =
            sqlx::query_scalar("select kept_until from ticket_order where order_id = $1")
                .bind(order.order_id)
                .fetch_optional(&self.pool)
                .await
                .ok()
                .flatten()
                .flatten();
        let until = kept.map_or(pay_by, |kept| kept.max(pay_by));
        if let Err(e) = self.pending(order, Pending::Restore(until)).await {
            tracing::warn!(order = %order.order_id, error = %e, "could not give a pending order's seats their deadline back in redis; their protection lapses by itself");
        }
    }

    async fn keep_pending(
        &self,
        _tx: &mut PgConnection,
        order: &Order,
        until: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        self.pending(order, Pending::Keep(until)).await.map(drop)
    }

    async fn seats_to_pass(
        &self,
        _tx: &mut PgConnection,
        passing: Passing<'_>,
    ) -> Result<(Option<Uuid>, Vec<String>), StoreError> {
        Ok(match passing {
            // A paid order's seats are still sold in Redis, a pending one's still its
            // hold's, until the offers take them over.
            Passing::Cancelled(order) => {
                let pending = order.payment.as_ref().is_some_and(|p| p.paid_at.is_none());
                let seats = order.seats.iter().map(|s| s.seat_id.clone()).collect();
                (pending.then_some(order.hold_token), seats)
            }
            Passing::LapsedOffer(lapsed) => {
                let seats = self
                    .get(lapsed.event, lapsed.token)
                    .await?
                    .map(|hold| hold.seats.into_iter().map(|s| s.seat_id).collect())
                    .unwrap_or_default();
                (Some(lapsed.token), seats)
            }
            Passing::LapsedOrder(order) => (Some(order.hold_token), self.kept_seats(order).await?),
        })
    }

    async fn offer(
        &self,
        tx: &mut PgConnection,
        event: EventId,
        seats: &[String],
        from: Option<Uuid>,
    ) -> Result<Vec<Offer>, StoreError> {
        let offers = waitlist::offer_in_tx(tx, event, seats, false).await?;
        self.write_offers(&offers, from).await?;
        Ok(offers)
    }

    async fn changed(&self, change: &Changed<'_>) {
        // Seats that only changed orders stay sold.
        if let Some((token, user, seats)) = change.hold {
            self.mark_sold(change.event, token, user, seats).await;
        }
        if !change.freed.is_empty() {
            if let Err(e) = self.unsell_seats(change.event, change.freed).await {
                tracing::warn!(event = %change.event, error = %e, "could not return seats moved away from to sale in redis");
            }
        }
    }

    async fn listed(&self, event: EventId, seats: &[String]) {
        if seats.is_empty() {
            return;
        }
        if let Err(e) = self.unsell_seats(event, seats).await {
            tracing::warn!(%event, error = %e, "could not put listed seats on sale in redis; they are refused until the event's next load from postgres");
        }
    }

    async fn withdraw_in_tx(
        &self,
        _tx: &mut PgConnection,
        order: &Order,
        seat: &ClaimedSeat,
    ) -> Result<bool, StoreError> {
        // Redis decides between the withdrawal and a hold, in one script: the seat is sold
        // again only if no hold has it.
        let mut conn = self.conn().await?;
        let taken: i64 = resold_seat(&self.scripts.withdraw, order.event_id, &seat.seat_id)
            .invoke_async(&mut conn)
            .await
            .map_err(redis_error)?;
        Ok(taken == 1)
    }

    async fn reclaimed_in_tx(
        &self,
        _tx: &mut PgConnection,
        order: &Order,
        seat: &ClaimedSeat,
    ) -> Result<(), StoreError> {
        // Sold again in one script, so no hold takes it from now on; then the hold that had
        // it ends whole. A hold being checked out is not released here: Postgres refuses its
        // order (the seat is the seller's), and the checkout drops it.
        let event = order.event_id;
        let mut conn = self.conn().await?;
        let holder: Option<String> = resold_seat(&self.scripts.reclaim, event, &seat.seat_id)
            .invoke_async(&mut conn)
            .await
            .map_err(redis_error)?;
        let Some(token) = holder.and_then(|t| t.parse::<Uuid>().ok()) else {
            return Ok(());
        };
        if let Some(hold) = self.stored(&mut conn, event, token).await? {
            let user = stored_user_id(&hold.user)?;
            self.release(event, token, &user).await?;
        }
        Ok(())
    }

    async fn passed(&self, passing: Passing<'_>) {
        match passing {
            Passing::Cancelled(order) => self.unsell(order).await,
            // The seats no entry took: what the lapsed offer's token still holds.
            Passing::LapsedOffer(lapsed) => {
                let released = self.release(lapsed.event, lapsed.token, &lapsed.user).await;
                if let Err(error) = released {
                    tracing::warn!(event = %lapsed.event, %error, "could not free a lapsed offer's seats; they lapse with its hold");
                }
            }
            Passing::LapsedOrder(order) if order.payment.is_some() => {
                if let Err(error) = self.pending(order, Pending::Free).await {
                    tracing::warn!(event = %order.event_id, %error, "could not free a lapsed order's seats; they lapse when they were kept until");
                }
            }
            Passing::LapsedOrder(_) => {}
        }
    }
}

/// What `order_pending.lua` does with a pending order's seats.
pub(super) enum Pending {
    /// Its seats are its own until then (and its hold is gone).
    Keep(DateTime<Utc>),
    /// A payment begins: its seats are protected while Postgres commits, if before pay_by.
    Pay,
    /// A payment failed: its seats are its own until then again.
    Restore(DateTime<Utc>),
    /// It was cancelled or lapsed: its seats go.
    Free,
}

impl RedisHoldStore {
    /// Runs `order_pending.lua` on `order`'s seats (`mode` as it says); answers its number.
    pub(super) async fn pending(&self, order: &Order, mode: Pending) -> Result<i64, StoreError> {
        let Some(pay_by) = order.payment.as_ref().map(|p| p.pay_by) else {
            return Err(StoreError::Other("a pending order without pay_by".into()));
        };
        let (name, time) = match mode {
            Pending::Keep(until) => ("keep", until.timestamp_millis() as u64),
            Pending::Pay => ("pay", CHECKOUT_PROTECTION.as_millis() as u64),
            Pending::Restore(until) => ("restore", until.timestamp_millis() as u64),
            Pending::Free => ("free", 0),
        };
        let event = order.event_id;
        let head = [
            keys::held(event),
            keys::user(event, order.user_id.as_str()),
            keys::hold(event, order.hold_token),
            keys::sold(event),
            keys::sold_new(event),
            keys::sync(event),
            keys::loading(event),
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
            .arg(name)
            .arg(pay_by.timestamp_millis())
            .arg(time);
        for seat in &order.seats {
            call.arg(&seat.seat_id);
        }
        call.invoke_async(&mut conn).await.map_err(redis_error)
    }

    /// The seats of `order` whose keys still hold its hold's token: what the expiry sweep
    /// kept for it past its deadline (order_pending.lua's `keep` mode, with a later time).
    async fn kept_seats(&self, order: &Order) -> Result<Vec<String>, StoreError> {
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

    /// Marks the paid order's seats sold in Redis and ends the hold. The order is
    /// committed either way: if Redis cannot be reached, the seats stay protected until the
    /// checkout's protection lapses, and the event's next load from Postgres (within
    /// [`SYNC_TTL`]) refuses them; a hold taken on one meanwhile fails at checkout, where
    /// Postgres decides.
    async fn finish_sold(&self, order: &Order) {
        self.mark_sold(
            order.event_id,
            order.hold_token,
            &order.user_id,
            &order.seats,
        )
        .await;
    }

    /// Marks `seats` of `user`'s hold `token` sold in `event` and ends the hold (see
    /// [`RedisHoldStore::finish_sold`]).
    pub(super) async fn mark_sold(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
        seats: &[ClaimedSeat],
    ) {
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

    /// Puts a cancelled order's seats on sale in Redis, after Postgres did: a pending
    /// order's were only kept for it and go (should Redis be away, they lapse at the
    /// order's deadline); a paid order's are no longer sold (should Redis be away, it
    /// refuses them until the event's next load from Postgres).
    async fn unsell(&self, order: &Order) {
        if order.payment.as_ref().is_some_and(|p| p.paid_at.is_none()) {
            if let Err(e) = self.pending(order, Pending::Free).await {
                tracing::warn!(order = %order.order_id, error = %e, "could not free a cancelled pending order's seats in redis; they lapse at its deadline");
            }
            return;
        }
        let seats: Vec<String> = order.seats.iter().map(|s| s.seat_id.clone()).collect();
        if let Err(e) = self.unsell_seats(order.event_id, &seats).await {
            tracing::warn!(order = %order.order_id, error = %e, "could not return cancelled seats to sale in redis");
        }
    }

    /// Takes `seats` out of the event's sold seats in Redis, after Postgres freed them.
    /// Should Redis be away, it refuses them until the event's next load from Postgres.
    pub(super) async fn unsell_seats(
        &self,
        event: EventId,
        seats: &[String],
    ) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        let mut call = self.scripts.unsell.key(keys::sold(event));
        call.key(keys::sold_new(event))
            .key(keys::sync(event))
            .key(keys::loading(event));
        for seat in seats {
            call.arg(seat);
        }
        call.invoke_async::<i64>(&mut conn)
            .await
            .map_err(redis_error)
            .map(drop)
    }

    /// Holds the seats of `offers` in Redis for them, taking each seat over from the hold
    /// `from` where it is still its. `Unavailable` when a seat is another hold's or `from`
    /// is being checked out.
    async fn write_offers(&self, offers: &[Offer], from: Option<Uuid>) -> Result<(), StoreError> {
        if offers.is_empty() {
            return Ok(());
        }
        let mut conn = self.conn().await?;
        for offer in offers {
            let hold = &offer.hold;
            let event = hold.event_id;
            let mut call = self.scripts.offer.key(keys::hold(event, hold.token));
            call.key(keys::held(event))
                .key(keys::user(event, hold.user_id.as_str()))
                .key(keys::hold(event, from.unwrap_or(hold.token)));
            for seat in &hold.seats {
                call.key(keys::seat(event, &seat.seat_id));
            }
            call.arg(hold.token.to_string())
                .arg(hold.user_id.as_str())
                .arg(hold.created_at.timestamp_millis())
                .arg(hold.expires_at.timestamp_millis())
                .arg(encode_seats(&hold.seats))
                .arg(from.map_or_else(String::new, |t| t.to_string()));
            for seat in &hold.seats {
                call.arg(&seat.seat_id);
            }
            let reply: Vec<Value> = call.invoke_async(&mut conn).await.map_err(redis_error)?;
            let what: String = nth(&reply, 0)?;
            if what != "held" {
                return Err(StoreError::unavailable(format!(
                    "a waiting-list offer could not be held in redis ({what})"
                )));
            }
        }
        Ok(())
    }
}

/// A call of a script that takes a seat listed for resale back into its seller's order
/// (`resale_withdraw.lua`, `resale_reclaim.lua`: the same keys and arguments).
fn resold_seat<'a>(script: &'a Script, event: EventId, seat: &str) -> redis::ScriptInvocation<'a> {
    let mut call = script.key(keys::sold(event));
    call.key(keys::sold_new(event))
        .key(keys::seat(event, seat))
        .arg((2 * SYNC_TTL.as_millis()).to_string())
        .arg(seat);
    call
}
