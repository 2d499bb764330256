//! Checkouts committed together. Under load, many checkouts wait for a connection at
//! once; a few lanes each take every checkout waiting (up to [`MOST`]) and make them in
//! one transaction, a statement each for all of them, then one commit. With nothing else
//! waiting, a checkout goes in a batch of its own, as soon as a lane is free. Two kinds:
//!
//! - [`Checkouts`], for the postgres store, whose holds are rows: the batch takes the
//!   holds' rows too, then writes the orders.
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

use boxoffice_core::hold::{ClaimedSeat, Order};
use boxoffice_core::ids::{EventId, UserId};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use super::orders::{self, Placement, Written};
use crate::error::is_connection_failure;
use crate::lanes::{copy, Answers, Lanes};
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

impl Default for Checkouts {
    fn default() -> Self {
        Self {
            lanes: Lanes::new(MOST, batch, "checkout"),
        }
    }
}

impl Checkouts {
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

fn batch(pool: PgPool, checkouts: Vec<Checkout>) -> Answers<Together> {
    Box::pin(async move {
        let batch: Vec<&Checkout> = checkouts.iter().collect();
        match commit(&pool, &batch).await {
            Ok(answers) => answers.into_iter().map(Ok).collect(),
            // The database could not serve the batch at all: alone, each would fare the
            // same.
            Err(Failed::Store(error)) => batch.iter().map(|_| Err(copy(&error))).collect(),
            Err(Failed::Batch) => batch.iter().map(|_| Ok(Together::Again)).collect(),
        }
    })
}

enum Failed {
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

/// A row the batch took for an order: its checkout's number, then the seat.
#[derive(sqlx::FromRow)]
struct TakenRow {
    n: i32,
    seat_id: String,
    ticket_type: String,
    price_cents: i64,
    pass_ticket: Option<Uuid>,
}

/// Commits `checkouts` in one transaction: each answered with its order, or `Again` when
/// nothing was written for it.
async fn commit(pool: &PgPool, checkouts: &[&Checkout]) -> Result<Vec<Together>, Failed> {
    let mut tx = pool.begin().await?;
    let answers = write(&mut tx, checkouts).await?;
    tx.commit().await?;
    Ok(answers)
}

async fn write(tx: &mut PgConnection, checkouts: &[&Checkout]) -> Result<Vec<Together>, Failed> {
    // A hold asked for twice in one batch goes in once; the repeat is made alone, which
    // finds the order.
    let mut seen = std::collections::HashSet::new();
    let first: Vec<bool> = checkouts
        .iter()
        .map(|c| seen.insert((c.event, c.token)))
        .collect();
    let numbers: Vec<i32> = (1..)
        .take(checkouts.len())
        .zip(&first)
        .map(|(n, first)| if *first { n } else { 0 })
        .collect();
    let events: Vec<Uuid> = checkouts.iter().map(|c| c.event.0).collect();
    let tokens: Vec<Uuid> = checkouts.iter().map(|c| c.token).collect();
    let users: Vec<&str> = checkouts.iter().map(|c| c.user.as_str()).collect();
    let order_ids: Vec<Uuid> = checkouts.iter().map(|_| Uuid::new_v4()).collect();
    let windows: Vec<f64> = checkouts
        .iter()
        .map(|c| f64::from(c.window_seconds))
        .collect();
    // The rows of every hold, each live at this statement's start and its buyer's, as a
    // checkout alone takes them (`SaleSeats::take_for_order` of the postgres store).
    let taken: Vec<TakenRow> = sqlx::query_as(
        "update reservation r
            set status = case when u.w > 0 then 'H' else 'R' end,
                hold_token = case when u.w > 0 then u.o else r.hold_token end,
                expires_at = case when u.w > 0
                                  then date_trunc('milliseconds', now() + make_interval(secs => u.w))
                                  else r.expires_at end
           from unnest($1::int4[], $2::uuid[], $3::uuid[], $4::text[], $5::uuid[], $6::float8[])
                as u (n, e, t, usr, o, w)
          where u.n > 0 and r.event_id = u.e and r.hold_token = u.t and r.user_id = u.usr
            and r.status = 'H' and r.expires_at > statement_timestamp()
         returning u.n, r.seat_id, r.ticket_type, r.price_cents, r.pass_ticket",
    )
    .bind(&numbers)
    .bind(&events)
    .bind(&tokens)
    .bind(&users)
    .bind(&order_ids)
    .bind(&windows)
    .fetch_all(&mut *tx)
    .await?;
    let mut seats: Vec<Vec<ClaimedSeat>> = checkouts.iter().map(|_| Vec::new()).collect();
    let mut passes: Vec<Option<Uuid>> = checkouts.iter().map(|_| None).collect();
    for row in taken {
        let Some(i) = index(row.n, checkouts.len()) else {
            return Err(Failed::Batch);
        };
        passes[i] = passes[i].or(row.pass_ticket);
        seats[i].push(ClaimedSeat {
            seat_id: row.seat_id,
            ticket_type: row.ticket_type,
            price_cents: row.price_cents,
        });
    }
    for s in &mut seats {
        s.sort_by(|a, b| a.seat_id.cmp(&b.seat_id));
    }
    let placing: Vec<usize> = (0..checkouts.len())
        .filter(|&i| !seats[i].is_empty())
        .collect();
    if placing.is_empty() {
        return Ok(checkouts.iter().map(|_| Together::Again).collect());
    }
    // All of a hold or nothing: a hold taken with a row left that was not live is made
    // alone, which refuses it, so the batch does not happen.
    let left: i64 = sqlx::query_scalar(
        "select count(*) from reservation r
           join unnest($1::uuid[], $2::uuid[]) as u (e, t) on r.event_id = u.e and r.hold_token = u.t
          where r.status = 'H'",
    )
    .bind(placing.iter().map(|&i| events[i]).collect::<Vec<_>>())
    .bind(placing.iter().map(|&i| tokens[i]).collect::<Vec<_>>())
    .fetch_one(&mut *tx)
    .await?;
    if left > 0 {
        return Err(Failed::Batch);
    }
    let placements: Vec<Placement> = placing
        .iter()
        .map(|&i| {
            let c = checkouts[i];
            Placement {
                event: c.event,
                token: c.token,
                user: c.user.clone(),
                order_id: order_ids[i],
                window_seconds: c.window_seconds,
                seats: std::mem::take(&mut seats[i]),
                pass: passes[i],
                season: None,
            }
        })
        .collect();
    let mut placed = place(tx, &placements.iter().collect::<Vec<_>>())
        .await?
        .into_iter();
    let mut orders: Vec<Option<Order>> = checkouts.iter().map(|_| None).collect();
    for &i in &placing {
        orders[i] = placed.next();
    }
    Ok(orders
        .into_iter()
        .map(|o| o.map_or(Together::Again, Together::Ordered))
        .collect())
}

/// Writes the orders of `placements` in `tx` with the one order writer
/// ([`orders::write_orders`]). An offer past its deadline writes no order: the batch
/// fails, and each goes alone.
async fn place(tx: &mut PgConnection, placements: &[&Placement]) -> Result<Vec<Order>, Failed> {
    match orders::write_orders(tx, placements).await? {
        Written::Orders(orders) => Ok(orders),
        Written::OfferLapsed => Err(Failed::Batch),
    }
}

/// A batch number (from 1) as an index into a batch of `len`.
fn index(n: i32, len: usize) -> Option<usize> {
    usize::try_from(n)
        .ok()
        .and_then(|n| n.checked_sub(1))
        .filter(|&i| i < len)
}
