//! What the organizer console reads: an event's orders a page at a time, every seat and
//! place sold a page at a time (for a CSV download), and the sums of its report. Every
//! read is bounded by its page; none locks anything a sale writes.

use boxoffice_core::hold::{ClaimedSeat, Order, OrderStatus};
use boxoffice_core::ids::EventId;
use chrono::{DateTime, Utc};
use sqlx::AssertSqlSafe;
use sqlx::PgPool;
use uuid::Uuid;

use crate::sales::orders::{status_stored, OrderRow, ORDER_COLUMNS};
use crate::StoreError;

/// Where a page of orders ended: its last order's time and id. Orders come newest first,
/// so the next page holds the orders before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderCursor {
    /// When the last order was committed.
    pub created_at: DateTime<Utc>,
    /// Its id.
    pub order_id: Uuid,
}

impl OrderCursor {
    /// The cursor as a client sends it back: `<microseconds since 1970>.<order id>`.
    pub fn encode(&self) -> String {
        format!(
            "{}.{}",
            self.created_at.timestamp_micros(),
            self.order_id.simple()
        )
    }

    /// A cursor [`OrderCursor::encode`] made, or `None`.
    pub fn parse(text: &str) -> Option<Self> {
        let (micros, id) = text.split_once('.')?;
        Some(Self {
            created_at: DateTime::from_timestamp_micros(micros.parse().ok()?)?,
            order_id: Uuid::try_parse(id).ok()?,
        })
    }
}

/// Which of an event's orders a page shows.
#[derive(Clone, Copy, Debug)]
pub struct OrderFilter<'a> {
    /// Only orders with this status.
    pub status: Option<OrderStatus>,
    /// Only the order with this id, the orders of the buyer with this id, or the orders
    /// with one of `seats`.
    pub search: Option<&'a str>,
    /// The seats the search names (by id or label), found by the caller in the seat map.
    pub seats: &'a [String],
    /// At most this many.
    pub limit: u32,
    /// Only orders older than this.
    pub after: Option<OrderCursor>,
}

/// A page of `event`'s orders, newest first, with their seats, and the cursor of the next
/// page if there is one. A status filter matches the status as read (a pending order past
/// its deadline is expired).
pub async fn orders_page(
    pool: &PgPool,
    event: EventId,
    filter: OrderFilter<'_>,
) -> Result<(Vec<Order>, Option<OrderCursor>), StoreError> {
    let mut rows: Vec<OrderRow> = sqlx::query_as(AssertSqlSafe(format!(
        "select * from (
           select {ORDER_COLUMNS}
             from ticket_order o
            where o.event_id = $1
              and ($3::timestamptz is null or (o.created_at, o.order_id) < ($3, $4::uuid))
              and ($5::text is null
                   or o.order_id::text = lower($5)
                   or o.user_id = $5
                   or exists (select 1 from order_seat s
                               where s.event_id = o.event_id and s.order_id = o.order_id
                                 and s.seat_id = any($6)))) o
          where ($2::text is null or o.status = $2)
          order by o.created_at desc, o.order_id desc
          limit $7"
    )))
    .bind(event.0)
    .bind(filter.status.map(status_stored))
    .bind(filter.after.map(|c| c.created_at))
    .bind(filter.after.map(|c| c.order_id))
    .bind(filter.search)
    .bind(filter.seats)
    .bind(i64::from(filter.limit) + 1)
    .fetch_all(pool)
    .await?;
    let next = (rows.len() > filter.limit as usize).then(|| {
        rows.truncate(filter.limit as usize);
        let last = rows.last().expect("a page of at least one");
        OrderCursor {
            created_at: last.created_at,
            order_id: last.order_id,
        }
    });
    let ids: Vec<Uuid> = rows.iter().map(|r| r.order_id).collect();
    let seats: Vec<(Uuid, String, String, i64)> = sqlx::query_as(
        "select order_id, seat_id, ticket_type, price_cents from order_seat
          where event_id = $1 and order_id = any($2)
          order by order_id, seat_id",
    )
    .bind(event.0)
    .bind(&ids)
    .fetch_all(pool)
    .await?;
    let orders = rows
        .into_iter()
        .map(|row| {
            let order_id = row.order_id;
            row.into_order(
                seats
                    .iter()
                    .filter(|s| s.0 == order_id)
                    .map(|(_, seat_id, ticket_type, price_cents)| ClaimedSeat {
                        seat_id: seat_id.clone(),
                        ticket_type: ticket_type.clone(),
                        price_cents: *price_cents,
                    })
                    .collect(),
            )
        })
        .collect::<Result<_, StoreError>>()?;
    Ok((orders, next))
}

/// One line of the sales download: a seat of an order, or a general-admission booking.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct SaleLine {
    /// The order's id, or the booking's.
    pub order_id: Uuid,
    /// When it was committed.
    pub created_at: DateTime<Utc>,
    /// The buyer.
    pub user_id: String,
    /// `paid`, `pending_payment`, `expired` or `cancelled`.
    pub status: String,
    /// The seat's id, or the area's code.
    pub seat_id: String,
    /// How many places (1 for a seat).
    pub quantity: i32,
    /// The seat's ticket type; for a booking, `None`.
    pub ticket_type: Option<String>,
    /// What the line cost.
    pub price_cents: i64,
    /// ISO 4217 code.
    pub currency: String,
}

/// Where a page of sale lines ended.
pub type LineCursor = (DateTime<Utc>, Uuid, String);

/// Up to `limit` seats sold in `event` (oldest order first, then by seat), after `after`.
pub async fn seat_lines(
    pool: &PgPool,
    event: EventId,
    after: Option<&LineCursor>,
    limit: i64,
) -> Result<Vec<SaleLine>, StoreError> {
    let lines = sqlx::query_as(
        "select o.order_id, o.created_at, o.user_id,
                case when o.status = 'pending_payment' and o.pay_by <= now() then 'expired'
                     when o.status = 'confirmed' then 'paid' else o.status end as status,
                s.seat_id, 1 as quantity,
                s.ticket_type, s.price_cents, o.currency
           from order_seat s join ticket_order o using (event_id, order_id)
          where s.event_id = $1
            and ($2::timestamptz is null or (o.created_at, o.order_id, s.seat_id) > ($2, $3::uuid, $4::text))
          order by o.created_at, o.order_id, s.seat_id
          limit $5",
    )
    .bind(event.0)
    .bind(after.map(|a| a.0))
    .bind(after.map(|a| a.1))
    .bind(after.map(|a| a.2.as_str()))
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(lines)
}

/// Up to `limit` general-admission bookings of `event`, oldest first, after `after`.
pub async fn booking_lines(
    pool: &PgPool,
    event: EventId,
    after: Option<&LineCursor>,
    limit: i64,
) -> Result<Vec<SaleLine>, StoreError> {
    let lines = sqlx::query_as(
        "select b.booking_id as order_id, b.created_at, b.user_id,
                case when b.status = 'confirmed' then 'paid'
                     when b.status = 'pending_payment' and b.pay_by <= now() then 'expired'
                     else b.status end as status,
                b.area as seat_id,
                b.quantity, null::text as ticket_type, b.total_cents as price_cents, b.currency
           from ga_booking b
          where b.event_id = $1
            and ($2::timestamptz is null or (b.created_at, b.booking_id) > ($2, $3::uuid))
          order by b.created_at, b.booking_id
          limit $4",
    )
    .bind(event.0)
    .bind(after.map(|a| a.0))
    .bind(after.map(|a| a.1))
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(lines)
}

/// Seats sold and what they brought in, for one section or ticket type.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct Sold {
    /// The section id or ticket type code.
    pub key: String,
    /// Seats in confirmed orders.
    pub seats: i64,
    /// Their prices summed.
    pub revenue_cents: i64,
}

/// The sums of an event's report: seats sold and revenue by section and by ticket type,
/// revenue by general-admission area, and seats sold in each of the last 60 minutes
/// (oldest first, minutes without a sale included). Confirmed orders and bookings only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportSums {
    /// By section id.
    pub by_section: Vec<Sold>,
    /// By ticket type code.
    pub by_ticket_type: Vec<Sold>,
    /// By area code: places booked and what they brought in.
    pub ga: Vec<Sold>,
    /// The start of each minute and the seats sold in it.
    pub per_minute: Vec<(DateTime<Utc>, i64)>,
}

/// The report's sums for `event`, in one snapshot.
pub async fn report_sums(pool: &PgPool, event: EventId) -> Result<ReportSums, StoreError> {
    let mut tx = pool.begin().await?;
    sqlx::query("set transaction isolation level repeatable read, read only")
        .execute(&mut *tx)
        .await?;
    let by_section = sqlx::query_as(
        "select s.section_id as key, count(*) as seats, sum(os.price_cents)::int8 as revenue_cents
           from order_seat os
           join ticket_order o using (event_id, order_id)
           join event e on e.event_id = os.event_id
           join seat s on s.venue_id = e.venue_id and s.seat_id = os.seat_id
          where os.event_id = $1 and not os.released and o.status = 'confirmed'
          group by s.section_id order by s.section_id",
    )
    .bind(event.0)
    .fetch_all(&mut *tx)
    .await?;
    let by_ticket_type = sqlx::query_as(
        "select os.ticket_type as key, count(*) as seats, sum(os.price_cents)::int8 as revenue_cents
           from order_seat os
           join ticket_order o using (event_id, order_id)
          where os.event_id = $1 and not os.released and o.status = 'confirmed'
          group by os.ticket_type order by os.ticket_type",
    )
    .bind(event.0)
    .fetch_all(&mut *tx)
    .await?;
    let ga = sqlx::query_as(
        "select area as key, sum(quantity)::int8 as seats, sum(total_cents)::int8 as revenue_cents
           from ga_booking where event_id = $1 and status = 'confirmed'
          group by area order by area",
    )
    .bind(event.0)
    .fetch_all(&mut *tx)
    .await?;
    let per_minute = sqlx::query_as(
        "select m.minute, count(os.seat_id)
           from generate_series(date_trunc('minute', now()) - interval '59 minutes',
                                date_trunc('minute', now()), interval '1 minute') as m(minute)
           left join ticket_order o
                  on o.event_id = $1 and o.status = 'confirmed'
                 and o.created_at >= m.minute and o.created_at < m.minute + interval '1 minute'
           left join order_seat os
                  on os.event_id = o.event_id and os.order_id = o.order_id and not os.released
          group by m.minute order by m.minute",
    )
    .bind(event.0)
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(ReportSums {
        by_section,
        by_ticket_type,
        ga,
        per_minute,
    })
}

/// The names of `event`'s general-admission areas, by code.
pub async fn area_names(
    pool: &PgPool,
    event: EventId,
) -> Result<Vec<(String, String)>, StoreError> {
    let names = sqlx::query_as("select code, name from ga_area where event_id = $1")
        .bind(event.0)
        .fetch_all(pool)
        .await?;
    Ok(names)
}

/// The one currency of `event`'s prices (`EUR` for an event that has none).
pub async fn currency(pool: &PgPool, event: EventId) -> Result<String, StoreError> {
    let currency: Option<String> = sqlx::query_scalar(
        "(select currency from ticket_type where event_id = $1 limit 1)
         union all (select currency from ga_area where event_id = $1 limit 1) limit 1",
    )
    .bind(event.0)
    .fetch_optional(pool)
    .await?;
    Ok(currency.unwrap_or_else(|| "EUR".to_owned()))
}
