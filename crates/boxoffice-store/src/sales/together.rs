//! Checkouts committed together. Under load, many checkouts wait for a connection at
//! once; a few lanes each take every checkout waiting (up to [`MOST`]) and make them in
//! one transaction, a statement each for all of them, then one commit. With nothing else
//! waiting, a checkout goes in a batch of its own, as soon as a lane is free. Two kinds:
//!
//! - [`Checkouts`], for the postgres store, whose holds are rows: its batch
//!   (`pg::holds::checkouts`, in the store's own room) takes the holds' rows with the
//!   statement a checkout alone takes them with, then writes the orders with [`place`].
//! - [`TakenCheckouts`], for a store that keeps holds outside Postgres (the redis store):
//!   each checkout has already taken its hold's seats there, and the batch writes the
//!   orders.
//!
//! Writing the orders is the same for both, and the same as a checkout alone and a
//! season order's nights: the one order writer, `orders::write_orders` (the offer checks,
//! the orders and their seats, the ended passes and the outbox rows).
//!
//! A batch commits whole or not at all, and only its plain cases: a checkout whose hold
//! has no live row left for it (expired, another buyer's, already bought), or whose hold
//! another checkout of the batch buys already, wrote nothing and comes back as
//! [`Together::Again`], to be made alone, where it is told why; so does every checkout of
//! a batch that met anything else (a hold taken only in part, an offer past its deadline,
//! a seat Postgres has sold, a lock waited on too long), once the batch rolled back, so
//! that one checkout's trouble never answers for the others.

use boxoffice_core::hold::Order;
use boxoffice_core::ids::{EventId, UserId};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use super::orders::{self, Placement, Written};
use crate::error::is_connection_failure;
use crate::lanes::{copy, Answers, Batch, Lanes};
use crate::StoreError;

/// Most checkouts in one batch.
const MOST: usize = 32;

/// One checkout: `checkout`'s arguments.
pub struct Checkout {
    /// The event.
    pub event: EventId,
    /// The hold to buy.
    pub token: Uuid,
    /// Its buyer.
    pub user: UserId,
    /// The event's payment window, 0 for none.
    pub window_seconds: u32,
}

/// What became of a checkout sent together.
pub enum Together {
    /// Its order, committed.
    Ordered(Order),
    /// Nothing was written for it: make it alone.
    Again,
}

/// The lanes of one store.
#[derive(Debug)]
pub struct Checkouts {
    lanes: Lanes<Checkout, Together>,
}

impl Checkouts {
    /// Lanes that commit checkouts with `batch`: the hold store's, which takes its holds'
    /// rows and writes the orders with [`place`].
    pub(crate) fn new(batch: Batch<Checkout, Together>) -> Self {
        Self {
            lanes: Lanes::new(MOST, batch, "checkout"),
        }
    }

    /// Makes `checkout` in the next batch a lane commits on `pool`.
    pub async fn checkout(
        &self,
        pool: &PgPool,
        checkout: Checkout,
    ) -> Result<Together, StoreError> {
        self.lanes.send(pool, checkout).await
    }

    /// How many checkouts wait for a lane.
    pub fn waiting(&self) -> usize {
        self.lanes.waiting()
    }
}

/// The lanes that write the orders of checkouts whose seats a hold store outside Postgres
/// has taken (the redis store's).
#[derive(Debug)]
pub struct TakenCheckouts {
    lanes: Lanes<Placement, Together>,
}

impl Default for TakenCheckouts {
    fn default() -> Self {
        Self {
            lanes: Lanes::new(MOST, place_batch, "checkout"),
        }
    }
}

impl TakenCheckouts {
    /// Writes `placement`'s order in the next batch a lane commits on `pool`.
    pub async fn checkout(
        &self,
        pool: &PgPool,
        placement: Placement,
    ) -> Result<Together, StoreError> {
        self.lanes.send(pool, placement).await
    }

    /// How many checkouts wait for a lane.
    pub fn waiting(&self) -> usize {
        self.lanes.waiting()
    }
}

fn place_batch(pool: PgPool, placements: Vec<Placement>) -> Answers<Together> {
    Box::pin(async move {
        // A hold asked for twice in one batch goes in once; the repeat is made alone,
        // which finds the order.
        let mut seen = std::collections::HashSet::new();
        let first: Vec<bool> = placements
            .iter()
            .map(|p| seen.insert((p.event, p.token)))
            .collect();
        let placing: Vec<&Placement> = placements
            .iter()
            .zip(&first)
            .filter_map(|(p, &first)| first.then_some(p))
            .collect();
        let committed = async {
            let mut tx = pool.begin().await?;
            let orders = place(&mut tx, &placing).await?;
            tx.commit().await?;
            Ok::<_, Failed>(orders)
        };
        match committed.await {
            Ok(orders) => {
                let mut orders = orders.into_iter();
                first
                    .iter()
                    .map(|&first| {
                        Ok(match first.then(|| orders.next()).flatten() {
                            Some(order) => Together::Ordered(order),
                            None => Together::Again,
                        })
                    })
                    .collect()
            }
            Err(Failed::Store(error)) => placements.iter().map(|_| Err(copy(&error))).collect(),
            Err(Failed::Batch) => placements.iter().map(|_| Ok(Together::Again)).collect(),
        }
    })
}

/// Why a batch wrote nothing.
pub(crate) enum Failed {
    /// The batch rolled back for something one of its checkouts met: each goes alone.
    Batch,
    /// The database could not be reached.
    Store(StoreError),
}

impl From<sqlx::Error> for Failed {
    fn from(error: sqlx::Error) -> Self {
        if is_connection_failure(&error) {
            Failed::Store(StoreError::from(error))
        } else {
            Failed::Batch
        }
    }
}

/// Writes the orders of `placements` in `tx` with the one order writer
/// ([`orders::write_orders`]). An offer past its deadline writes no order: the batch
/// fails, and each goes alone.
pub(crate) async fn place(
    tx: &mut PgConnection,
    placements: &[&Placement],
) -> Result<Vec<Order>, Failed> {
    match orders::write_orders(tx, placements).await? {
        Written::Orders(orders) => Ok(orders),
        Written::OfferLapsed => Err(Failed::Batch),
    }
}
