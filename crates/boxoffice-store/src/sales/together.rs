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
//! Writing the orders is the same for both ([`place`]): the offer checks, the orders and
//! their seats, the ended passes and the outbox rows.
//!
//! A batch commits whole or not at all, and only its plain cases: a checkout whose hold
//! has no live row left for it (expired, another buyer's, already bought), or whose hold
//! another checkout of the batch buys already, wrote nothing and comes back as
//! [`Together::Again`], to be made alone, where it is told why; so does every checkout of
//! a batch that met anything else (a hold taken only in part, an offer past its deadline,
//! a seat Postgres has sold, a lock waited on too long), once the batch rolled back, so
//! that one checkout's trouble never answers for the others.

use boxoffice_core::hold::{ClaimedSeat, Order, OrderStatus, Payment};
use boxoffice_core::ids::{EventId, UserId};
use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use super::orders::payload;
use crate::error::is_connection_failure;
use crate::lanes::{copy, Answers, Lanes};
use crate::pg::outbox;
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

/// A checkout whose hold's seats a hold store outside Postgres has taken for it: the order
/// to write.
#[derive(Clone, Debug)]
pub struct Placement {
    /// The event.
    pub event: EventId,
    /// The hold bought.
    pub token: Uuid,
    /// Its buyer.
    pub user: UserId,
    /// The order's id.
    pub order_id: Uuid,
    /// The event's payment window, 0 for none.
    pub window_seconds: u32,
    /// The hold's seats with their quotes, sorted by seat id.
    pub seats: Vec<ClaimedSeat>,
    /// The waiting-room pass the hold was made under, which the order ends.
    pub pass: Option<Uuid>,
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

/// An order the batch wrote: its checkout's number, and what Postgres gave it.
#[derive(sqlx::FromRow)]
struct PlacedRow {
    n: i32,
    currency: String,
    created_at: DateTime<Utc>,
    pay_by: Option<DateTime<Utc>>,
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

/// Writes the orders of `placements` in `tx`, as a checkout alone writes its order
/// (`orders::insert_order`), a statement each for all of them: the offers bought, the
/// orders and their seats, the passes they end, their outbox rows. Answers the orders in
/// the placements' order. An offer past its deadline writes no order: the batch fails,
/// and each goes alone.
async fn place(tx: &mut PgConnection, placements: &[&Placement]) -> Result<Vec<Order>, Failed> {
    let numbers: Vec<i32> = (1..).take(placements.len()).collect();
    let (s_numbers, s_seats, s_types, s_prices): (Vec<i32>, Vec<&str>, Vec<&str>, Vec<i64>) = {
        let mut out = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (&n, p) in numbers.iter().zip(placements) {
            for s in &p.seats {
                out.0.push(n);
                out.1.push(s.seat_id.as_str());
                out.2.push(s.ticket_type.as_str());
                out.3.push(s.price_cents);
            }
        }
        out
    };
    let total = |p: &Placement| -> i64 { p.seats.iter().map(|s| s.price_cents).sum() };
    let placed: Vec<PlacedRow> = sqlx::query_as(
        "with u as (
             select * from unnest($1::int4[], $2::uuid[], $3::uuid[], $4::text[], $5::uuid[],
                                  $6::float8[], $7::int8[]) as u (n, e, o, usr, t, w, total)
         ), offer as (
             update waitlist_entry we set status = 'B', ended_at = now()
               from u
              where we.event_id = u.e and we.offer_token = u.t and we.status = 'O'
             returning we.offer_expires_at > now() as open
         ), placed as (
             insert into ticket_order (event_id, order_id, user_id, hold_token, total_cents,
                                       currency, status, pay_by)
             select u.e, u.o, u.usr, u.t, u.total,
                    (select currency from ticket_type tt where tt.event_id = u.e
                      order by position limit 1),
                    case when u.w > 0 then 'pending_payment' else 'confirmed' end,
                    case when u.w > 0
                         then date_trunc('milliseconds', now() + make_interval(secs => u.w)) end
               from u
              where not exists (select 1 from offer where not open)
             returning order_id, currency, created_at, pay_by
         ), sold as (
             insert into order_seat (event_id, order_id, seat_id, ticket_type, price_cents, released)
             select u.e, u.o, s.seat, s.ty, s.price, u.w > 0
               from unnest($8::int4[], $9::text[], $10::text[], $11::int8[]) as s (n, seat, ty, price)
               join u on u.n = s.n
              where exists (select 1 from placed)
         )
         select u.n, placed.currency, placed.created_at, placed.pay_by
           from placed join u on u.o = placed.order_id",
    )
    .bind(&numbers)
    .bind(placements.iter().map(|p| p.event.0).collect::<Vec<_>>())
    .bind(placements.iter().map(|p| p.order_id).collect::<Vec<_>>())
    .bind(placements.iter().map(|p| p.user.as_str()).collect::<Vec<_>>())
    .bind(placements.iter().map(|p| p.token).collect::<Vec<_>>())
    .bind(
        placements
            .iter()
            .map(|p| f64::from(p.window_seconds))
            .collect::<Vec<_>>(),
    )
    .bind(placements.iter().map(|p| total(p)).collect::<Vec<_>>())
    .bind(&s_numbers)
    .bind(&s_seats)
    .bind(&s_types)
    .bind(&s_prices)
    .fetch_all(&mut *tx)
    .await?;
    if placed.len() != placements.len() {
        return Err(Failed::Batch);
    }
    let mut orders: Vec<Option<Order>> = placements.iter().map(|_| None).collect();
    for row in placed {
        let Some(i) = index(row.n, placements.len()) else {
            return Err(Failed::Batch);
        };
        let p = placements[i];
        orders[i] = Some(Order {
            order_id: p.order_id,
            event_id: p.event,
            user_id: p.user.clone(),
            hold_token: p.token,
            seats: p.seats.clone(),
            total_cents: total(p),
            currency: row.currency,
            status: if row.pay_by.is_some() {
                OrderStatus::PendingPayment
            } else {
                OrderStatus::Paid
            },
            created_at: row.created_at,
            payment: row.pay_by.map(|pay_by| Payment {
                pay_by,
                paid_at: None,
                reference: None,
            }),
        });
    }
    let Some(orders) = orders.into_iter().collect::<Option<Vec<Order>>>() else {
        return Err(Failed::Batch);
    };
    // The passes these checkouts end: a claim under one sees either its hold still held
    // (and counts it) or the pass ended (`sql/claim.sql`).
    let (pass_events, pass_tickets): (Vec<Uuid>, Vec<Uuid>) = placements
        .iter()
        .filter_map(|p| p.pass.map(|ticket| (p.event.0, ticket)))
        .unzip();
    if !pass_tickets.is_empty() {
        sqlx::query(
            "insert into pass_ended (event_id, ticket)
             select * from unnest($1::uuid[], $2::uuid[]) on conflict do nothing",
        )
        .bind(&pass_events)
        .bind(&pass_tickets)
        .execute(&mut *tx)
        .await?;
    }
    let topics: Vec<&str> = orders
        .iter()
        .map(|o| match o.status {
            OrderStatus::PendingPayment => "order.pending",
            _ => "order.created",
        })
        .collect();
    let changes: Vec<outbox::Change<'_>> = orders
        .iter()
        .zip(&topics)
        .map(|(o, topic)| outbox::Change {
            event_id: o.event_id.0,
            topic,
            payload: payload(o),
        })
        .collect();
    outbox::write(&mut *tx, &changes).await?;
    Ok(orders)
}

/// A batch number (from 1) as an index into a batch of `len`.
fn index(n: i32, len: usize) -> Option<usize> {
    usize::try_from(n)
        .ok()
        .and_then(|n| n.checked_sub(1))
        .filter(|&i| i < len)
}
