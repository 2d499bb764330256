//! Sales of held seats, written in Postgres whichever store holds: checkout, payment,
//! cancellation and the waiting list's offers. (A long file: [`SaleSeats`], the one
//! interface every hold store answers in a sale, with the flows that call it.)
//!
//! Postgres decides what is sold: an order is written under the `order_seat_sold` unique
//! index in one transaction ([`orders`]), and a waiting-list offer is made by
//! `boxoffice_waitlist_offer` ([`waitlist`]). A hold store only keeps the seats out of
//! everyone else's reach around that transaction: [`SaleSeats`] is what it does at each
//! step, and the flows here ([`checkout`], [`pay`], [`cancel`], [`lapsing`] and
//! [`lapsing::pass_on_lapsed`]) call it in the one order every store shares.
//!
//! - [`orders`]: writing, reading, paying and cancelling orders, each with its outbox row.
//! - [`waitlist`]: the waiting list and its offers.
//! - [`lapsing`]: unpaid orders whose seats pass to the waiting list at their deadline.
//! - [`passes`]: the waiting-room passes a sale ends.
//! - [`seasons`]: season orders, their cancellation and their nights released.
//! - [`together`]: checkouts committed together, for either store.
//! - [`changes`]: sold seats moved, swapped, or a season night taken back.
//! - [`resale`]: sold seats listed by their buyer, and listings taken back.
//! - [`door`]: the scan that lets a ticket's holder in or out.
//! - [`seats`]: the one lock order of every flow that changes a sold seat, and the steps
//!   they share.

use async_trait::async_trait;
use boxoffice_core::hold::{CancelOutcome, CheckoutOutcome, ClaimedSeat, Offer, Order, PayOutcome};
use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::error::{retry_contention, Constraint};
use crate::journal::audit::{self, Action, Actor, By, Change};
use crate::StoreError;

pub mod changes;
pub mod door;
pub mod lapsing;
pub mod orders;
pub mod passes;
pub mod resale;
pub mod seasons;
pub mod seats;
pub mod together;
pub mod waitlist;

use orders::CancelStep;
use waitlist::Lapsed;

/// What a hold store answers when a checkout asks for the hold's seats.
pub enum Taken {
    /// The hold was live and these are its seats: they are the checkout's until the
    /// order's transaction `tx` ends ([`SaleSeats::ordered`] or [`SaleSeats::give_back`]).
    Seats {
        /// The hold's seats with their quotes, sorted by seat id.
        seats: Vec<ClaimedSeat>,
        /// The waiting-room pass the hold was made under, which the order ends.
        pass: Option<Uuid>,
        /// The order's transaction, begun by the store (see [`SaleSeats::take_for_order`]).
        tx: sqlx::Transaction<'static, sqlx::Postgres>,
    },
    /// The hold was live and these are its seats, kept out of everyone else's reach by a
    /// hold store outside Postgres until [`SaleSeats::ordered`] or
    /// [`SaleSeats::give_back`]: the flow writes the order, together with other checkouts
    /// ([`SaleSeats::taken_checkouts`]) or in a transaction of its own.
    Protected {
        /// The hold's seats with their quotes, sorted by seat id.
        seats: Vec<ClaimedSeat>,
        /// The waiting-room pass the hold was made under, which the order ends.
        pass: Option<Uuid>,
    },
    /// No live hold has this token (it lapsed, was released, or was checked out).
    NotLive,
    /// The hold is another buyer's.
    Forbidden,
}

/// Seats passing on from a sale that ended, to the waiting list and then to general sale.
#[derive(Clone, Copy, Debug)]
pub enum Passing<'a> {
    /// A cancelled order (paid, or pending until its deadline).
    Cancelled(&'a Order),
    /// A waiting-list offer whose deadline passed (or whose buyer left).
    LapsedOffer(&'a Lapsed),
    /// A pending order that lapsed unpaid while its seats were kept for the waiting list
    /// ([`lapsing`]).
    LapsedOrder(&'a Order),
}

impl Passing<'_> {
    /// The event the seats are in.
    pub fn event(&self) -> EventId {
        match self {
            Passing::Cancelled(order) | Passing::LapsedOrder(order) => order.event_id,
            Passing::LapsedOffer(lapsed) => lapsed.event,
        }
    }
}

/// Seats that changed hands between sold orders ([`changes`]), as a hold store is told.
#[derive(Clone, Copy, Debug)]
pub struct Changed<'a> {
    /// The event.
    pub event: EventId,
    /// The hold whose seats the change took for an order (a move, a night taken back):
    /// its token, buyer and seats.
    pub hold: Option<(Uuid, &'a UserId, &'a [ClaimedSeat])>,
    /// Seats now sold to another order: each order's hold token and buyer, and the seats.
    pub gained: &'a [(Uuid, UserId, Vec<String>)],
    /// Seats that left every order, free again (or offered to the waiting list in the
    /// change's transaction).
    pub freed: &'a [String],
}

/// What a hold store does around the Postgres transactions of a sale.
///
/// Each method is one step of a flow of this module; a transaction (`tx`) passed in is the
/// sale's own, not yet committed. A step after the commit ([`SaleSeats::ordered`],
/// [`SaleSeats::passed`], …) cannot undo it: when it fails, the hold store's own expiry
/// settles the seats, and it logs instead of answering an error.
#[async_trait]
pub trait SaleSeats: Send + Sync {
    /// Makes the seats of the live hold `token` of `user` the checkout's for the order
    /// `order_id`, all of them or none when any has lapsed, each store as it needs: the
    /// postgres store begins the order's transaction on `pool` and takes the rows in it
    /// ([`Taken::Seats`]); the redis store protects the seats in Redis and leaves the order
    /// to the flow ([`Taken::Protected`]), so that a hold cannot lapse while its checkout
    /// waits for a connection or a batch (the flow gives them back if the order is not
    /// written). With a payment window (`window_seconds` > 0) the seats stay held for the
    /// order until its deadline, and the hold's token no longer reaches them.
    async fn take_for_order(
        &self,
        pool: &PgPool,
        event: EventId,
        token: Uuid,
        user: &UserId,
        order_id: Uuid,
        window_seconds: u32,
    ) -> Result<Taken, StoreError>;

    /// The order's transaction did not commit: the hold is given back as it was, or
    /// dropped when Postgres refused the order because a seat is sold (`sold`).
    async fn give_back(
        &self,
        event: EventId,
        token: Uuid,
        user: &UserId,
        seats: &[ClaimedSeat],
        sold: bool,
    ) {
        let _ = (event, token, user, seats, sold);
    }

    /// The lanes that commit checkouts together, for a store whose holds are rows of the
    /// order's own transaction (the postgres store); `None` makes every checkout alone.
    fn checkouts(&self) -> Option<&together::Checkouts> {
        None
    }

    /// The lanes that write together the orders of checkouts this store answered
    /// [`Taken::Protected`]; `None` writes each in a transaction of its own.
    fn taken_checkouts(&self) -> Option<&together::TakenCheckouts> {
        None
    }

    /// `order` is committed, paid or pending (a checkout, a payment, or the repeat of a
    /// checkout whose first try may have stopped before this step): its seats are sold,
    /// or kept for it until its deadline. Doing it twice changes nothing.
    async fn ordered(&self, order: &Order) {
        let _ = order;
    }

    /// Makes the seats of the pending `order` (locked by the payment's transaction) the
    /// payment's, if they are still the order's and its deadline has not passed; whether
    /// they are.
    async fn take_for_payment(
        &self,
        tx: &mut PgConnection,
        order: &Order,
    ) -> Result<bool, StoreError>;

    /// The payment's transaction did not commit: the pending order's seats get their
    /// deadline back.
    async fn payment_failed(&self, order: &Order) {
        let _ = order;
    }

    /// Keeps the seats of the pending `order` held for it until `until`, past its `pay_by`,
    /// so that the waiting list can have them when the order lapses unpaid (see
    /// [`lapsing::keep_lapsing_orders`]); seats no longer the order's are left alone.
    /// Called while the caller's transaction has the order's row locked. The payment stays
    /// refused from `pay_by` on.
    async fn keep_pending(
        &self,
        tx: &mut PgConnection,
        order: &Order,
        until: DateTime<Utc>,
    ) -> Result<(), StoreError>;

    /// The seats of `passing` that are still its own, in the transaction that offers them
    /// to the waiting list, and the token they are held under (offers take them over from
    /// it). A store that keeps them in Postgres lets them go in this transaction.
    async fn seats_to_pass(
        &self,
        tx: &mut PgConnection,
        passing: Passing<'_>,
    ) -> Result<(Option<Uuid>, Vec<String>), StoreError>;

    /// Offers `seats`, free in the caller's transaction, to the event's waiting list
    /// (`waitlist::offer_in_tx`) and holds them for the offers before the transaction
    /// commits, taking them over from the hold `from` where they are still its.
    /// `Unavailable` when a seat is another hold's or `from` is being checked out: the
    /// caller then rolls back.
    async fn offer(
        &self,
        tx: &mut PgConnection,
        event: EventId,
        seats: &[String],
        from: Option<Uuid>,
    ) -> Result<Vec<Offer>, StoreError>;

    /// Sold seats change hands in `tx` ([`changes`]), before it commits: a store that keeps
    /// the sold seats' holds in Postgres gives them to their new orders there, and lets
    /// the freed ones go (before the waiting list is offered them).
    async fn changed_in_tx(
        &self,
        tx: &mut PgConnection,
        change: &Changed<'_>,
    ) -> Result<(), StoreError> {
        let _ = (tx, change);
        Ok(())
    }

    /// The transaction of `change` committed: a store outside Postgres marks the hold's
    /// seats sold and puts the freed ones on sale. Doing it twice changes nothing.
    async fn changed(&self, change: &Changed<'_>) {
        let _ = change;
    }

    /// `seats`, sold, are listed for resale in `tx`, before it commits: a store that keeps
    /// the sold seats' holds in Postgres lets them go, so a claim may hold them.
    async fn listed_in_tx(
        &self,
        tx: &mut PgConnection,
        event: EventId,
        seats: &[String],
    ) -> Result<(), StoreError> {
        let _ = (tx, event, seats);
        Ok(())
    }

    /// The listing of `seats` committed (or a withdrawal of them did not): a store outside
    /// Postgres takes them out of the event's sold seats, so a hold may have them.
    async fn listed(&self, event: EventId, seats: &[String]) {
        let _ = (event, seats);
    }

    /// `seat` of the paid `order` is taken back from resale in `tx`, before it commits:
    /// it is the order's alone again (sold, as in the store's view of sold seats) unless a
    /// hold has it now, in which case nothing changes and the answer is false. Of a
    /// withdrawal and a hold of the seat at once, exactly one wins.
    async fn withdraw_in_tx(
        &self,
        tx: &mut PgConnection,
        order: &Order,
        seat: &ClaimedSeat,
    ) -> Result<bool, StoreError>;

    /// `seat` of the paid `order`, listed for resale, is the order's alone again in `tx`,
    /// before it commits, because its ticket let its holder in: sold, as in the store's
    /// view of sold seats, whatever hold has it now. That hold ends whole, so its
    /// checkout finds it not live ([`seats`]: the door's step 2).
    async fn reclaimed_in_tx(
        &self,
        tx: &mut PgConnection,
        order: &Order,
        seat: &ClaimedSeat,
    ) -> Result<(), StoreError>;

    /// The transaction that passed on `passing`'s seats committed: what no offer took goes
    /// on general sale.
    async fn passed(&self, passing: Passing<'_>) {
        let _ = passing;
    }
}

/// The answer to a checkout whose token already made `order`.
fn existing(order: Order, user: &UserId) -> CheckoutOutcome {
    if &order.user_id == user {
        CheckoutOutcome::Existing(order)
    } else {
        CheckoutOutcome::Forbidden
    }
}

/// Turns a hold that is live when the checkout begins into an order, with its seats and
/// outbox row, in one Postgres transaction. A repeat finds the first order. A hold made
/// under a waiting-room pass ends that pass in the same transaction, before any later
/// claim can count without its seats. With a payment window (`window_seconds` > 0) the
/// order is pending: its seats stay held for it until its `pay_by`, and are sold only by
/// [`pay`].
pub async fn checkout(
    pool: &PgPool,
    seats: &dyn SaleSeats,
    event: EventId,
    token: Uuid,
    user: &UserId,
    window_seconds: u32,
) -> Result<CheckoutOutcome, StoreError> {
    if let Some(lanes) = seats.checkouts() {
        let checkout = together::Checkout {
            event,
            token,
            user: user.clone(),
            window_seconds,
        };
        if let together::Together::Ordered(order) = lanes.checkout(pool, checkout).await? {
            seats.ordered(&order).await;
            return Ok(CheckoutOutcome::Created(order));
        }
    }
    let attempt = || try_checkout(pool, seats, event, token, user, window_seconds);
    match retry_contention(attempt).await {
        // Two checkouts of one token that both found no order insert under the same
        // unique key; the loser finds the winner's order. The winner may have stopped
        // before telling its hold store (its instance killed, say, and this is the buyer
        // asking again), so this one tells it too.
        Err(StoreError::Conflict {
            constraint: Constraint::OrderOfToken,
        }) => {
            let mut conn = pool.acquire().await?;
            let Some(order) = orders::find_by_token(&mut conn, event, token).await? else {
                return Ok(CheckoutOutcome::NotLive);
            };
            let answer = existing(order, user);
            if let CheckoutOutcome::Existing(order) = &answer {
                seats.ordered(order).await;
            }
            Ok(answer)
        }
        other => other,
    }
}

async fn try_checkout(
    pool: &PgPool,
    store: &dyn SaleSeats,
    event: EventId,
    token: Uuid,
    user: &UserId,
    window_seconds: u32,
) -> Result<CheckoutOutcome, StoreError> {
    // Orders keep synchronous commit: success is answered only once the order is durable.
    let order_id = Uuid::new_v4();
    let taken = store
        .take_for_order(pool, event, token, user, order_id, window_seconds)
        .await?;
    let (seats, pass, mut tx) = match taken {
        Taken::Seats { seats, pass, tx } => (seats, pass, tx),
        Taken::Protected { seats, pass } => {
            if let Some(lanes) = store.taken_checkouts() {
                let placement = orders::Placement {
                    event,
                    token,
                    user: user.clone(),
                    order_id,
                    window_seconds,
                    seats: seats.clone(),
                    pass,
                    season: None,
                };
                match lanes.checkout(pool, placement).await {
                    Ok(together::Together::Ordered(order)) => {
                        store.ordered(&order).await;
                        return Ok(CheckoutOutcome::Created(order));
                    }
                    // Nothing was written for it: alone, below, it is told why.
                    Ok(together::Together::Again) => {}
                    Err(e) => {
                        store.give_back(event, token, user, &seats, false).await;
                        return Err(e);
                    }
                }
            }
            // Protected first, then the wait for a connection: the hold cannot lapse
            // meanwhile. Should no connection come, the hold is given back.
            match pool.begin().await {
                Ok(tx) => (seats, pass, tx),
                Err(e) => {
                    store.give_back(event, token, user, &seats, false).await;
                    return Err(e.into());
                }
            }
        }
        Taken::Forbidden => return Ok(CheckoutOutcome::Forbidden),
        Taken::NotLive => {
            // A checkout of the same token may have committed meanwhile.
            let mut conn = pool.acquire().await?;
            return Ok(
                match orders::find_by_token(&mut conn, event, token).await? {
                    Some(order) => existing(order, user),
                    None => CheckoutOutcome::NotLive,
                },
            );
        }
    };
    // Alone, a batch of one for the one order writer.
    let placement = orders::Placement {
        event,
        token,
        user: user.clone(),
        order_id,
        window_seconds,
        seats: seats.clone(),
        pass,
        season: None,
    };
    let committed = async {
        let order = match orders::write_orders(&mut tx, &[&placement]).await? {
            orders::Written::Orders(mut orders) if orders.len() == 1 => orders.remove(0),
            orders::Written::Orders(_) => {
                return Err(StoreError::Other(
                    "one order asked, another count written".into(),
                ))
            }
            orders::Written::OfferLapsed => {
                return Err(StoreError::Conflict {
                    constraint: Constraint::OfferLapsed,
                })
            }
        };
        tx.commit().await?;
        Ok::<_, StoreError>(order)
    };
    match committed.await {
        Ok(order) => {
            store.ordered(&order).await;
            Ok(CheckoutOutcome::Created(order))
        }
        // Handled by `checkout`: the order of the token stands, and the hold is its.
        Err(
            e @ StoreError::Conflict {
                constraint: Constraint::OrderOfToken,
            },
        ) => Err(e),
        // The hold store and the orders disagree (a seat is already in a live order):
        // Postgres decides, and this checkout does not happen.
        Err(StoreError::Conflict {
            constraint: Constraint::SeatSold,
        }) => {
            tracing::warn!(%event, %token, "a hold store held a seat postgres has sold");
            store.give_back(event, token, user, &seats, true).await;
            Ok(CheckoutOutcome::NotLive)
        }
        // A waiting-list offer past its deadline: its hold lives on only while the sweep
        // passes its seats to the next buyer in line.
        Err(StoreError::Conflict {
            constraint: Constraint::OfferLapsed,
        }) => {
            store.give_back(event, token, user, &seats, false).await;
            Ok(CheckoutOutcome::NotLive)
        }
        Err(e) => {
            store.give_back(event, token, user, &seats, false).await;
            Err(e)
        }
    }
}

/// Records the payment of a pending order: its seats are sold if they are still the
/// order's when the payment is made, before its `pay_by`; otherwise the order expired and
/// nothing is sold. A payment and a takeover of a seat at the deadline: exactly one
/// happens. Idempotent by `reference`. Staff record it (`actor`) with an entry in the audit
/// log; the demo's test payment page, as the buyer, with none.
pub async fn pay(
    pool: &PgPool,
    store: &dyn SaleSeats,
    order_id: Uuid,
    reference: &str,
    actor: Option<&Actor>,
) -> Result<PayOutcome, StoreError> {
    retry_contention(|| async move {
        let mut tx = pool.begin().await?;
        let order = match orders::lock_for_payment(&mut tx, order_id, reference).await? {
            Ok(order) => order,
            Err(answer) => return Ok(answer),
        };
        if !store.take_for_payment(&mut tx, &order).await? {
            tx.rollback().await?;
            return orders::record_expiry(pool, order_id, reference).await;
        }
        let paid = async {
            let paid = orders::pay_in_tx(&mut tx, order.clone(), reference).await?;
            let change = Change {
                action: Action::OrderPaid,
                target_id: order_id.to_string(),
                changes: serde_json::json!({
                    "status": [order.status, paid.status],
                    "payment_reference": [null, reference],
                }),
            };
            if let Some(actor) = actor {
                audit::write(&mut tx, actor, &change).await?;
            }
            tx.commit().await?;
            Ok::<_, StoreError>(paid)
        };
        match paid.await {
            Ok(paid) => {
                store.ordered(&paid).await;
                Ok(PayOutcome::Paid(paid))
            }
            Err(e) => {
                store.payment_failed(&order).await;
                Err(e)
            }
        }
    })
    .await
}

/// Cancels an order and puts its seats on sale again: offered first to the event's
/// waiting list, whose offers hold them before the cancellation commits (so they never
/// read available while anyone waits). `by` acts: a buyer on their own order only; staff
/// with an entry in the audit log.
pub async fn cancel(
    pool: &PgPool,
    store: &dyn SaleSeats,
    order_id: Uuid,
    by: By<'_>,
) -> Result<CancelOutcome, StoreError> {
    retry_contention(|| async move {
        let mut tx = pool.begin().await?;
        let step = orders::cancel_in_tx(&mut tx, order_id, by).await?;
        let CancelStep::Cancelled(order) = &step else {
            tx.commit().await?;
            return Ok(step.into_outcome(Vec::new()));
        };
        let (_, offers) = pass_on(tx, store, Passing::Cancelled(order)).await?;
        Ok(step.into_outcome(offers))
    })
    .await
}

/// Offers the seats of `passing` still its own to the waiting list in `tx`, commits it,
/// and lets the hold store put what no offer took on general sale: answers those seats and
/// the offers made.
pub(crate) async fn pass_on(
    mut tx: sqlx::Transaction<'_, sqlx::Postgres>,
    store: &dyn SaleSeats,
    passing: Passing<'_>,
) -> Result<(Vec<String>, Vec<Offer>), StoreError> {
    let (from, seats) = store.seats_to_pass(&mut tx, passing).await?;
    let offers = store.offer(&mut tx, passing.event(), &seats, from).await?;
    tx.commit().await?;
    store.passed(passing).await;
    Ok((seats, offers))
}
