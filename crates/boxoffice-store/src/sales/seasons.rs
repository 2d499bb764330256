//! Season orders: a season hold bought, cancelled, or released for one night, each in one
//! Postgres transaction with its outbox row. (A long file: the three writes of a season
//! order and its reads, whose rows span every event of the season. Its order rows are
//! written here, apart from an event's checkout in `orders.rs`; one writer for both is the
//! next reshaping of the sale path, which will shorten it.)
//!
//! A season order is a `season_order` row for the buyer and, in each event it covers, an
//! ordinary order of that event (`ticket_order` with `season_order_id`, and its
//! `order_seat` rows at the event's share of each seat's price): the unique index
//! `order_seat_sold` refuses an event-seat sold twice, season or not, as it does for any
//! order. Releasing a night cancels that event's order alone, and its seats pass on as a
//! cancelled order's do (the waiting list first, [`super::pass_on`]).

use boxoffice_core::hold::{ClaimedSeat, Offer, OrderStatus};
use boxoffice_core::ids::{EventId, SeasonId, UserId};
use boxoffice_core::season::{split_price, SeasonNight, SeasonOrder};
use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::AssertSqlSafe;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use super::orders::{write_orders, Placement, SeasonPart, Written};
use super::{orders, seats, Passing, SaleSeats};
use crate::error::{retry_contention, stored_user_id, Constraint};
use crate::journal::audit::{Action, By, Change};
use crate::journal::outbox::{self, Topic};
use crate::season_holds::{SeasonHolds, SeasonSeatHeld, SeasonTaken};
use crate::StoreError;

/// The unique key of one order per season hold.
const ORDER_OF_SEASON_TOKEN: &str = "season_order_hold_token_key";

/// What a season checkout came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeasonCheckout {
    /// The hold became this order now.
    Created(SeasonOrder),
    /// The hold had become this order before.
    Existing(SeasonOrder),
    /// No live season hold has this token.
    NotLive,
    /// The hold (or its order) is another buyer's.
    Forbidden,
}

/// A season order to write: the hold and what it is bought at.
#[derive(Clone, Copy, Debug)]
pub struct SeasonPurchase<'a> {
    /// The season.
    pub season: SeasonId,
    /// The season hold's token.
    pub token: Uuid,
    /// Its token in each event of the season, in the season's order.
    pub events: &'a [(EventId, Uuid)],
    /// The buyer.
    pub user: &'a UserId,
    /// The season's currency.
    pub currency: &'a str,
}

/// Turns the buyer's live season hold into a season order, selling its seats in every
/// event it holds them in, in one transaction. The same token again finds the same order.
pub async fn checkout(
    pool: &PgPool,
    store: &dyn SeasonHolds,
    purchase: SeasonPurchase<'_>,
) -> Result<SeasonCheckout, StoreError> {
    let attempt = || try_checkout(pool, store, purchase);
    match retry_contention(attempt).await {
        Err(StoreError::Conflict {
            constraint: Constraint::Other(name),
        }) if name == ORDER_OF_SEASON_TOKEN => existing(pool, purchase).await,
        other => other,
    }
}

/// The answer for a token that made an order before (or none).
async fn existing(
    pool: &PgPool,
    purchase: SeasonPurchase<'_>,
) -> Result<SeasonCheckout, StoreError> {
    let mut conn = pool.acquire().await?;
    let id: Option<Uuid> = sqlx::query_scalar(
        "select season_order_id from season_order where season_id = $1 and hold_token = $2",
    )
    .bind(purchase.season.0)
    .bind(purchase.token)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(order) = (match id {
        Some(id) => get(&mut conn, id).await?,
        None => None,
    }) else {
        return Ok(SeasonCheckout::NotLive);
    };
    Ok(if &order.user_id == purchase.user {
        SeasonCheckout::Existing(order)
    } else {
        SeasonCheckout::Forbidden
    })
}

async fn try_checkout(
    pool: &PgPool,
    store: &dyn SeasonHolds,
    purchase: SeasonPurchase<'_>,
) -> Result<SeasonCheckout, StoreError> {
    let (seats, passes, mut tx) = match store
        .take_for_season_order(pool, purchase.events, purchase.user)
        .await?
    {
        SeasonTaken::Seats { seats, passes, tx } => (seats, passes, tx),
        SeasonTaken::Forbidden => return Ok(SeasonCheckout::Forbidden),
        SeasonTaken::NotLive => return existing(pool, purchase).await,
    };
    let order = async {
        let order = insert(&mut tx, purchase, &seats).await?;
        // As an event's checkout: a claim under one of these passes sees either this hold
        // still held (and counts it) or the pass ended.
        for &(event, ticket) in &passes {
            super::passes::end_pass(&mut tx, event, ticket).await?;
        }
        tx.commit().await?;
        Ok::<_, StoreError>(order)
    }
    .await;
    let taken = purchase.events;
    match order {
        Ok(order) => {
            store.season_sold(taken, purchase.user, &seats).await;
            Ok(SeasonCheckout::Created(order))
        }
        // A seat sold in one of the events meanwhile (by a store that disagreed with
        // Postgres): nothing is sold anywhere.
        Err(StoreError::Conflict {
            constraint: Constraint::SeatSold,
        }) => {
            tracing::warn!(season = %purchase.season, "a season hold held a seat postgres has sold");
            store
                .season_given_back(taken, purchase.user, &seats, true)
                .await;
            Ok(SeasonCheckout::NotLive)
        }
        Err(e) => {
            store
                .season_given_back(taken, purchase.user, &seats, false)
                .await;
            Err(e)
        }
    }
}

/// Writes the season order, each event's order of its seats and the outbox row.
async fn insert(
    tx: &mut PgConnection,
    purchase: SeasonPurchase<'_>,
    held: &[SeasonSeatHeld],
) -> Result<SeasonOrder, StoreError> {
    let nights: Vec<(EventId, Uuid)> = purchase
        .events
        .iter()
        .copied()
        .filter(|(event, _)| held.iter().any(|s| s.event == *event))
        .collect();
    let first = nights[0].0;
    let mut seats: Vec<ClaimedSeat> = held
        .iter()
        .filter(|s| s.event == first)
        .map(|s| ClaimedSeat {
            seat_id: s.seat_id.clone(),
            ticket_type: s.ticket_type.clone(),
            price_cents: s.price_cents,
        })
        .collect();
    seats.sort_by(|a, b| a.seat_id.cmp(&b.seat_id));
    let total_cents: i64 = seats.iter().map(|s| s.price_cents).sum();
    let order_id = Uuid::new_v4();
    let partial: Option<String> = sqlx::query_scalar(
        "select code from season_partial p
          where p.season_id = $1
            and (select count(*) from season_partial_event e
                  where e.season_id = p.season_id and e.code = p.code) = cardinality($2::uuid[])
            and not exists (select 1 from season_partial_event e
                             where e.season_id = p.season_id and e.code = p.code
                               and e.event_id <> all($2::uuid[]))
            and cardinality($2::uuid[]) < (select count(*) from season_event s
                                            where s.season_id = p.season_id)
          order by p.position limit 1",
    )
    .bind(purchase.season.0)
    .bind(nights.iter().map(|(e, _)| e.0).collect::<Vec<_>>())
    .fetch_optional(&mut *tx)
    .await?;
    let created_at: DateTime<Utc> = sqlx::query_scalar(
        "insert into season_order (season_order_id, season_id, user_id, hold_token, partial,
                                   total_cents, currency)
         values ($1, $2, $3, $4, $5, $6, $7)
         returning created_at",
    )
    .bind(order_id)
    .bind(purchase.season.0)
    .bind(purchase.user.as_str())
    .bind(purchase.token)
    .bind(partial.as_deref())
    .bind(total_cents)
    .bind(purchase.currency)
    .fetch_one(&mut *tx)
    .await?;
    // Each event's order: the seats at that event's share of their price, written by the
    // one order writer as a batch of the season's nights.
    let shares: Vec<Vec<i64>> = seats
        .iter()
        .map(|s| split_price(s.price_cents, nights.len()))
        .collect();
    let placements: Vec<Placement> = nights
        .iter()
        .enumerate()
        .map(|(i, (event, token))| Placement {
            event: *event,
            token: *token,
            user: purchase.user.clone(),
            order_id: Uuid::new_v4(),
            window_seconds: 0,
            seats: seats
                .iter()
                .zip(&shares)
                .map(|(seat, share)| ClaimedSeat {
                    price_cents: share[i],
                    ..seat.clone()
                })
                .collect(),
            pass: None,
            season: Some(SeasonPart {
                season_order_id: order_id,
                currency: purchase.currency.to_owned(),
                created_at,
            }),
        })
        .collect();
    match write_orders(&mut *tx, &placements.iter().collect::<Vec<_>>()).await? {
        Written::Orders(_) => {}
        Written::OfferLapsed => {
            return Err(StoreError::Other(
                "a season's night was bought as a waiting-list offer".into(),
            ))
        }
    }
    let out_nights: Vec<SeasonNight> = placements
        .iter()
        .map(|p| SeasonNight {
            event_id: p.event,
            order_id: p.order_id,
            released: false,
        })
        .collect();
    let order = SeasonOrder {
        order_id,
        season_id: purchase.season,
        partial,
        user_id: purchase.user.clone(),
        hold_token: purchase.token,
        seats,
        total_cents,
        currency: purchase.currency.to_owned(),
        status: OrderStatus::Paid,
        created_at,
        nights: out_nights,
    };
    write_outbox(tx, Topic::SeasonOrderCreated, &order, None).await?;
    Ok(order)
}

/// The season order `id` (by its own id, or by the id of one of its events' orders).
pub async fn load(pool: &PgPool, id: Uuid) -> Result<Option<SeasonOrder>, StoreError> {
    let mut conn = pool.acquire().await?;
    get(&mut conn, id).await
}

/// The season order `id`, or the one whose event order `id` is.
pub async fn get(conn: &mut PgConnection, id: Uuid) -> Result<Option<SeasonOrder>, StoreError> {
    read(conn, id, false).await
}

/// The season order whose row is `season_order s`, as selected.
type SeasonOrderRow = (
    Uuid,
    Uuid,
    String,
    Uuid,
    Option<String>,
    i64,
    String,
    String,
    DateTime<Utc>,
);

async fn read(
    conn: &mut PgConnection,
    id: Uuid,
    lock: bool,
) -> Result<Option<SeasonOrder>, StoreError> {
    let row: Option<SeasonOrderRow> = sqlx::query_as(AssertSqlSafe(format!(
        "select s.season_order_id, s.season_id, s.user_id, s.hold_token, s.partial,
                s.total_cents, s.currency, s.status, s.created_at
           from season_order s
          where s.season_order_id = coalesce(
                    (select season_order_id from ticket_order where order_id = $1), $1)
          {}",
        if lock { "for update" } else { "" }
    )))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    let Some((order_id, season, user, token, partial, total_cents, currency, status, created_at)) =
        row
    else {
        return Ok(None);
    };
    let nights: Vec<(Uuid, Uuid, bool)> = sqlx::query_as(
        "select o.event_id, o.order_id, o.released_at is not null
           from ticket_order o
           join season_event e on e.event_id = o.event_id
          where o.season_order_id = $1
          order by e.position",
    )
    .bind(order_id)
    .fetch_all(&mut *conn)
    .await?;
    let seats: Vec<(String, String, i64)> = sqlx::query_as(
        "select s.seat_id, min(s.ticket_type), sum(s.price_cents)::int8
           from ticket_order o
           join order_seat s on s.event_id = o.event_id and s.order_id = o.order_id
          where o.season_order_id = $1
          group by s.seat_id
          order by s.seat_id",
    )
    .bind(order_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(Some(SeasonOrder {
        order_id,
        season_id: SeasonId(season),
        partial,
        user_id: stored_user_id(&user)?,
        hold_token: token,
        seats: seats
            .into_iter()
            .map(|(seat_id, ticket_type, price_cents)| ClaimedSeat {
                seat_id,
                ticket_type,
                price_cents,
            })
            .collect(),
        total_cents,
        currency,
        status: if status == "cancelled" {
            OrderStatus::Cancelled
        } else {
            OrderStatus::Paid
        },
        created_at,
        nights: nights
            .into_iter()
            .map(|(event, order_id, released)| SeasonNight {
                event_id: EventId(event),
                order_id,
                released,
            })
            .collect(),
    }))
}

/// What cancelling a season order, or releasing one of its nights, came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeasonCancel {
    /// Done: the order as it is now, and per event the seats put back and the waiting
    /// list's offers made of them.
    Done(SeasonOrder, Vec<Returned>),
    /// The order was cancelled before (or the night released before): as it is.
    Already(SeasonOrder),
    /// No such order (or it covers no such event).
    NotFound,
    /// Another buyer's order.
    Forbidden,
}

/// The seats of one event a cancellation or release put back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Returned {
    /// The event.
    pub event: EventId,
    /// The seats, as the event's order had them.
    pub seats: Vec<String>,
    /// The waiting list's offers made of them.
    pub offers: Vec<Offer>,
}

/// Cancels the season order `id` (its owner `by`, or an admin: `None`): every event it
/// still covers (not released before) has its seats put on sale again, offered first to
/// that event's waiting list, in one transaction. With the id of one of its events'
/// orders, that night alone is released ([`release_night`]).
pub async fn cancel(
    pool: &PgPool,
    store: &dyn SaleSeats,
    id: Uuid,
    by: By<'_>,
) -> Result<SeasonCancel, StoreError> {
    retry_contention(|| give_back(pool, store, id, by, None)).await
}

/// Releases the seats of the season order `id` for `event` alone: that event's order is
/// cancelled and its seats pass on (the waiting list first); the season order keeps every
/// other event.
pub async fn release_night(
    pool: &PgPool,
    store: &dyn SaleSeats,
    id: Uuid,
    event: EventId,
    by: By<'_>,
) -> Result<SeasonCancel, StoreError> {
    retry_contention(|| give_back(pool, store, id, by, Some(event))).await
}

/// Cancels the season order `id` (`night` None) or releases one night of it.
async fn give_back(
    pool: &PgPool,
    store: &dyn SaleSeats,
    id: Uuid,
    by: By<'_>,
    night: Option<EventId>,
) -> Result<SeasonCancel, StoreError> {
    let mut tx = pool.begin().await?;
    let Some(mut order) = read(&mut tx, id, true).await? else {
        return Ok(SeasonCancel::NotFound);
    };
    if by.buyer().is_some_and(|u| u != &order.user_id) {
        return Ok(SeasonCancel::Forbidden);
    }
    // Cancelling one event's order of a season releases that night alone.
    let night = night.or_else(|| {
        order
            .nights
            .iter()
            .find(|n| n.order_id == id)
            .map(|n| n.event_id)
    });
    let going: Vec<SeasonNight> = match night {
        Some(event) => match order.nights.iter().find(|n| n.event_id == event) {
            None => return Ok(SeasonCancel::NotFound),
            Some(n) if n.released || order.status == OrderStatus::Cancelled => {
                return Ok(SeasonCancel::Already(order))
            }
            Some(n) => vec![n.clone()],
        },
        None if order.status == OrderStatus::Cancelled => return Ok(SeasonCancel::Already(order)),
        None => order
            .nights
            .iter()
            .filter(|n| !n.released)
            .cloned()
            .collect(),
    };
    let nights: Vec<(EventId, Uuid)> = going.iter().map(|n| (n.event_id, n.order_id)).collect();
    seats::cancel(&mut tx, &nights, night.is_some()).await?;
    if night.is_none() {
        sqlx::query(
            "update season_order set status = 'cancelled', cancelled_at = now()
              where season_order_id = $1",
        )
        .bind(order.order_id)
        .execute(&mut *tx)
        .await?;
        order.status = OrderStatus::Cancelled;
    } else {
        for n in order
            .nights
            .iter_mut()
            .filter(|n| Some(n.event_id) == night)
        {
            n.released = true;
        }
    }
    let topic = match night {
        Some(_) => Topic::SeasonOrderReleased,
        None => Topic::SeasonOrderCancelled,
    };
    let change = Change {
        action: if night.is_some() {
            Action::OrderNightReleased
        } else {
            Action::OrderCancelled
        },
        target_id: order.order_id.to_string(),
        changes: match night {
            Some(event) => serde_json::json!({ "released": [null, event] }),
            None => serde_json::json!({ "status": ["paid", "cancelled"] }),
        },
    };
    by.record(&mut tx, &change).await?;
    write_outbox(&mut tx, topic, &order, night).await?;
    // Each event's seats pass on as a cancelled order's do.
    let mut returned = Vec::with_capacity(going.len());
    let mut cancelled = Vec::with_capacity(going.len());
    for n in &going {
        let event_order = orders::get_order(&mut tx, n.order_id)
            .await?
            .ok_or_else(|| StoreError::Other("a season night without its order".into()))?;
        let (from, seats) = store
            .seats_to_pass(&mut tx, Passing::Cancelled(&event_order))
            .await?;
        let offers = store.offer(&mut tx, n.event_id, &seats, from).await?;
        returned.push(Returned {
            event: n.event_id,
            seats: event_order
                .seats
                .iter()
                .map(|s| s.seat_id.clone())
                .collect(),
            offers,
        });
        cancelled.push(event_order);
    }
    tx.commit().await?;
    for event_order in &cancelled {
        store.passed(Passing::Cancelled(event_order)).await;
    }
    Ok(SeasonCancel::Done(order, returned))
}

/// Writes the season order's outbox row, under its first event (`night`'s, for a
/// release).
async fn write_outbox(
    tx: &mut PgConnection,
    topic: Topic,
    order: &SeasonOrder,
    night: Option<EventId>,
) -> Result<(), StoreError> {
    let under = night.unwrap_or(order.nights[0].event_id);
    let payload = json!({
        "order_id": order.order_id,
        "season_id": order.season_id,
        "partial": order.partial,
        "user_id": order.user_id,
        "status": order.status,
        "event_ids": order.event_ids(),
        "event_id": night,
        "released": order.nights.iter().filter(|n| n.released).map(|n| n.event_id).collect::<Vec<_>>(),
        "seats": order.seats.iter().map(|s| json!({
            "id": s.seat_id, "ticket_type": s.ticket_type, "price_cents": s.price_cents,
        })).collect::<Vec<_>>(),
        "total_cents": order.total_cents,
        "currency": order.currency,
    });
    let change = outbox::Change {
        event_id: under.0,
        topic,
        payload,
    };
    Ok(outbox::write(&mut *tx, &[change]).await?)
}

/// The season's orders, newest first, up to `limit`; with `q`, those whose id, buyer or a
/// seat is `q` (a buyer or seat also by its beginning).
pub async fn list(
    pool: &PgPool,
    season: SeasonId,
    q: Option<&str>,
    limit: i64,
) -> Result<Vec<SeasonOrder>, StoreError> {
    let mut conn = pool.acquire().await?;
    let ids: Vec<Uuid> = sqlx::query_scalar(
        "select s.season_order_id from season_order s
          where s.season_id = $1
            and ($2::text is null
                 or s.season_order_id::text = $2
                 or s.user_id like $2 || '%'
                 or exists (select 1 from ticket_order o
                              join order_seat t on t.event_id = o.event_id
                                               and t.order_id = o.order_id
                             where o.season_order_id = s.season_order_id
                               and t.seat_id like $2 || '%'))
          order by s.created_at desc, s.season_order_id desc
          limit $3",
    )
    .bind(season.0)
    .bind(q.map(|q| q.replace(['%', '_'], "")))
    .bind(limit)
    .fetch_all(&mut *conn)
    .await?;
    let mut orders = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(order) = get(&mut conn, id).await? {
            orders.push(order);
        }
    }
    Ok(orders)
}

/// One line of a season's sales: the whole season (`partial` None) or one partial.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SalesLine {
    /// The partial, or `None` for the whole season.
    pub partial: Option<String>,
    /// Orders not cancelled.
    pub orders: i64,
    /// Their seats.
    pub seats: i64,
    /// Their totals together.
    pub revenue_cents: i64,
}

/// The season's sales (orders not cancelled), the whole season first, then each partial
/// sold.
pub async fn sales(pool: &PgPool, season: SeasonId) -> Result<Vec<SalesLine>, StoreError> {
    let rows: Vec<(Option<String>, i64, i64, i64)> = sqlx::query_as(
        "select s.partial, count(*)::int8, sum(n.seats)::int8, sum(s.total_cents)::int8
           from season_order s
           cross join lateral (
                 select count(distinct t.seat_id) as seats
                   from ticket_order o
                   join order_seat t on t.event_id = o.event_id and t.order_id = o.order_id
                  where o.season_order_id = s.season_order_id) n
          where s.season_id = $1 and s.status = 'confirmed'
          group by s.partial
          order by s.partial nulls first",
    )
    .bind(season.0)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(partial, orders, seats, revenue_cents)| SalesLine {
            partial,
            orders,
            seats,
            revenue_cents,
        })
        .collect())
}
