//! The outbox: rows written with every order, booking and cancellation ([`write`], the one
//! writer, in the transaction of the change), claimed and marked by relays.

use boxoffice_core::ids::OrganizationId;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::{PgExecutor, PgPool};
use uuid::Uuid;

use crate::StoreError;

/// One outbox row.
#[derive(Clone, Debug, PartialEq, sqlx::FromRow)]
pub struct OutboxRow {
    /// Increasing id: the order of commits (per event).
    pub outbox_id: i64,
    /// The event the change belongs to.
    pub event_id: Uuid,
    /// The event's organization, whose webhook the row goes to.
    pub organization_id: Uuid,
    /// What happened: `order.created`, `order.cancelled`, `booking.created`,
    /// `booking.cancelled`, `season_order.created`, `season_order.released`, … (under the
    /// season order's first event, or the event released).
    pub topic: String,
    /// The change, as committed.
    pub payload: sqlx::types::Json<Value>,
    /// When it was committed.
    pub created_at: DateTime<Utc>,
    /// Deliveries tried so far.
    pub attempts: i32,
    /// When the claim that returned the row lapses: the claim's own mark, which
    /// [`release`] and [`mark_failed`] check, so a relay that settles a row late never ends
    /// a lease another relay has taken since.
    pub leased_until: DateTime<Utc>,
}

/// What an outbox row tells: the topics of the webhook's deliveries (docs/api.md's list,
/// which a test keeps in step with this).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Topic {
    /// `order.created`: an order made, paid (in an event without a payment window).
    OrderCreated,
    /// `order.pending`: an order made under a payment window, waiting for its payment.
    OrderPending,
    /// `order.paid`: a pending order's payment recorded.
    OrderPaid,
    /// `order.expired`: a pending order not paid by its deadline.
    OrderExpired,
    /// `order.cancelled`: an order cancelled.
    OrderCancelled,
    /// `order.changed`: an order's seats moved or swapped.
    OrderChanged,
    /// `order.resold`: an order's listed seat bought by another buyer.
    OrderResold,
    /// `booking.created`: a general-admission booking made.
    BookingCreated,
    /// `booking.paid`: a pending booking's payment recorded.
    BookingPaid,
    /// `booking.expired`: a pending booking not paid by its deadline.
    BookingExpired,
    /// `booking.cancelled`: a booking cancelled.
    BookingCancelled,
    /// `season_order.created`: a season order made (under its first event).
    SeasonOrderCreated,
    /// `season_order.cancelled`: a season order cancelled.
    SeasonOrderCancelled,
    /// `season_order.released`: a season order's night released (under that event).
    SeasonOrderReleased,
    /// `season_order.reclaimed`: a released night taken back (under that event).
    SeasonOrderReclaimed,
    /// `waitlist.offered`: a seat offered to the first in the waiting list.
    WaitlistOffered,
}

impl Topic {
    /// Every topic.
    pub const ALL: [Topic; 16] = [
        Topic::OrderCreated,
        Topic::OrderPending,
        Topic::OrderPaid,
        Topic::OrderExpired,
        Topic::OrderCancelled,
        Topic::OrderChanged,
        Topic::OrderResold,
        Topic::BookingCreated,
        Topic::BookingPaid,
        Topic::BookingExpired,
        Topic::BookingCancelled,
        Topic::SeasonOrderCreated,
        Topic::SeasonOrderCancelled,
        Topic::SeasonOrderReleased,
        Topic::SeasonOrderReclaimed,
        Topic::WaitlistOffered,
    ];

    /// The topic as a delivery names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Topic::OrderCreated => "order.created",
            Topic::OrderPending => "order.pending",
            Topic::OrderPaid => "order.paid",
            Topic::OrderExpired => "order.expired",
            Topic::OrderCancelled => "order.cancelled",
            Topic::OrderChanged => "order.changed",
            Topic::OrderResold => "order.resold",
            Topic::BookingCreated => "booking.created",
            Topic::BookingPaid => "booking.paid",
            Topic::BookingExpired => "booking.expired",
            Topic::BookingCancelled => "booking.cancelled",
            Topic::SeasonOrderCreated => "season_order.created",
            Topic::SeasonOrderCancelled => "season_order.cancelled",
            Topic::SeasonOrderReleased => "season_order.released",
            Topic::SeasonOrderReclaimed => "season_order.reclaimed",
            Topic::WaitlistOffered => "waitlist.offered",
        }
    }
}

/// A change to write to the outbox: under its event, its topic and its payload.
#[derive(Clone, Debug)]
pub struct Change {
    /// The event the change belongs to (a season's: its first event, or the one released).
    pub event_id: Uuid,
    /// What happened.
    pub topic: Topic,
    /// The change, as committed.
    pub payload: Value,
}

/// Writes `changes` to the outbox, in their order, in one statement: the one writer of the
/// outbox, called in the transaction that makes the changes, so a change and its row
/// commit together or not at all. (Its error is Postgres' own, for a batch to tell a lost
/// connection from what one of its items met.)
pub async fn write<'e>(
    executor: impl PgExecutor<'e>,
    changes: &[Change],
) -> Result<(), sqlx::Error> {
    if changes.is_empty() {
        return Ok(());
    }
    let events: Vec<Uuid> = changes.iter().map(|c| c.event_id).collect();
    let topics: Vec<&str> = changes.iter().map(|c| c.topic.as_str()).collect();
    let payloads: Vec<String> = changes.iter().map(|c| c.payload.to_string()).collect();
    sqlx::query(
        "insert into outbox (event_id, topic, payload)
         select e, t, p::jsonb from unnest($1::uuid[], $2::text[], $3::text[])
                                     with ordinality as u (e, t, p, n)
          order by n",
    )
    .bind(&events)
    .bind(&topics)
    .bind(&payloads)
    .execute(executor)
    .await?;
    Ok(())
}

/// Leases the oldest undelivered rows of up to `events` events of `organizations` (those
/// with somewhere to deliver to) whose oldest row is due: that row and up to
/// `per_event - 1` after it, in order, for `lease`; and commits. The rows are then
/// delivered outside any transaction, each event's in order. Other organizations' rows
/// wait, in order, until they have a webhook. (A row of no event there is belongs to the
/// `default` organization.)
///
/// Why rows are delivered once per pass and in order per event: an event's rows are
/// claimed only from its oldest undelivered row (a later row waits until every earlier
/// one is delivered), only when that row is due and not leased, and the claim locks that
/// row `for update skip locked`, so a second relay claiming at the same moment passes
/// over the whole event instead of leasing its rows too. Rows after the oldest are
/// leased only by whoever locked the oldest.
pub async fn lease_runs(
    pool: &PgPool,
    organizations: &[OrganizationId],
    events: i64,
    per_event: i64,
    lease: std::time::Duration,
) -> Result<Vec<OutboxRow>, StoreError> {
    if organizations.is_empty() {
        return Ok(Vec::new());
    }
    let organizations: Vec<Uuid> = organizations.iter().map(|o| o.0).collect();
    let mut rows: Vec<OutboxRow> = sqlx::query_as(
        "with heads as (
             select o.event_id, o.outbox_id, coalesce(e.organization_id, $5) as organization_id
               from outbox o
               left join event e on e.event_id = o.event_id
              where o.delivered_at is null and o.next_attempt_at <= now()
                and (o.locked_until is null or o.locked_until <= now())
                and coalesce(e.organization_id, $5) = any($4)
                and not exists (select 1 from outbox p
                                 where p.event_id = o.event_id and p.delivered_at is null
                                   and p.outbox_id < o.outbox_id)
              order by o.outbox_id
              limit $1
                for update of o skip locked),
         runs as (
             select r.event_id, r.outbox_id, h.organization_id
               from heads h
              cross join lateral (
                    select p.event_id, p.outbox_id
                      from outbox p
                     where p.event_id = h.event_id and p.delivered_at is null
                       and p.outbox_id >= h.outbox_id
                     order by p.outbox_id
                     limit $2) r)
         update outbox o set locked_until = now() + make_interval(secs => $3)
           from runs
          where o.event_id = runs.event_id and o.outbox_id = runs.outbox_id
         returning o.outbox_id, o.event_id, runs.organization_id, o.topic, o.payload,
                   o.created_at, o.attempts, o.locked_until as leased_until",
    )
    .bind(events)
    .bind(per_event.max(1))
    .bind(lease.as_secs_f64())
    .bind(&organizations)
    .bind(OrganizationId::DEFAULT.0)
    .fetch_all(pool)
    .await?;
    rows.sort_by_key(|r| r.outbox_id);
    Ok(rows)
}

/// Ends the leases of rows claimed and not delivered (their event's delivery stopped at
/// an earlier row), so the next claim takes them again in order. Rows whose lease is no
/// longer the claim's own (`leased_until`: it lapsed and another relay claimed them) are
/// left alone.
pub async fn release(
    pool: &PgPool,
    event_id: Uuid,
    outbox_ids: &[i64],
    leased_until: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "update outbox set locked_until = null
          where event_id = $1 and outbox_id = any($2) and delivered_at is null
            and locked_until = $3",
    )
    .bind(event_id)
    .bind(outbox_ids)
    .bind(leased_until)
    .execute(pool)
    .await?;
    Ok(())
}

/// Marks a row delivered and ends its lease.
pub async fn mark_delivered(pool: &PgPool, outbox_id: i64) -> Result<(), StoreError> {
    sqlx::query(
        "update outbox set delivered_at = now(), attempts = attempts + 1, last_error = null,
                           locked_until = null
          where outbox_id = $1",
    )
    .bind(outbox_id)
    .execute(pool)
    .await?;
    Ok(())
}

/// Records a failed delivery: the attempt, the error, and when to try again; ends the
/// lease, if it is still the claim's own (`leased_until`; otherwise another relay has the
/// row now, and its attempt is the one that counts).
pub async fn mark_failed(
    pool: &PgPool,
    outbox_id: i64,
    error: &str,
    retry_in: std::time::Duration,
    leased_until: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "update outbox set attempts = attempts + 1, last_error = $2, locked_until = null,
                           next_attempt_at = now() + make_interval(secs => $3)
          where outbox_id = $1 and locked_until = $4",
    )
    .bind(outbox_id)
    .bind(error)
    .bind(retry_in.as_secs_f64())
    .bind(leased_until)
    .execute(pool)
    .await?;
    Ok(())
}

/// Rows not yet delivered, and how many seconds the oldest of them has waited (0 when
/// none waits): what the relays have still to do.
pub async fn backlog(pool: &PgPool) -> Result<(i64, f64), StoreError> {
    let (rows, oldest): (i64, f64) = sqlx::query_as(
        "select count(*), coalesce(extract(epoch from now() - min(created_at))::float8, 0)
           from outbox where delivered_at is null",
    )
    .fetch_one(pool)
    .await?;
    Ok((rows, oldest))
}
