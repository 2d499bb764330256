//! Which seats are on sale: an event's allocations written at its creation, and changed
//! later without ever racing a hold.

use std::collections::HashSet;

use boxoffice_core::availability::SeatStatus;
use boxoffice_core::event::Allocation;
use boxoffice_core::hold::Offer;
use boxoffice_core::ids::EventId;
use sqlx::{PgConnection, PgPool};

use crate::hold_store::{AllocationFence, HoldStore};
use crate::journal::audit::{self, Action, Actor, Change};
use crate::StoreError;

/// Puts `allocations` on sale in the caller's transaction; answers how many rows changed.
pub(super) async fn upsert_allocations(
    tx: &mut PgConnection,
    id: EventId,
    allocations: &[Allocation],
) -> Result<u64, StoreError> {
    let seats: Vec<&str> = allocations.iter().map(|a| a.seat.as_str()).collect();
    let types: Vec<&str> = allocations.iter().map(|a| a.ticket_type.as_str()).collect();
    let channels: Vec<Option<&str>> = allocations.iter().map(|a| a.channel.as_deref()).collect();
    let done = sqlx::query(
        "insert into seat_allocation (event_id, seat_id, ticket_type, channel)
         select $1, * from unnest($2::text[], $3::text[], $4::text[])
         on conflict (event_id, seat_id) do update
            set ticket_type = excluded.ticket_type, channel = excluded.channel",
    )
    .bind(id.0)
    .bind(&seats)
    .bind(&types)
    .bind(&channels)
    .execute(&mut *tx)
    .await?;
    Ok(done.rows_affected())
}

/// A change to which seats are on sale.
#[derive(Clone, Debug)]
pub enum AllocationChange {
    /// Put these seats on sale at these ticket types (in these channels).
    Put(Vec<Allocation>),
    /// Take these seats off sale.
    Withdraw(Vec<String>),
    /// Put this channel's seats on general sale.
    Release(String),
}

/// What an allocation change did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllocationOutcome {
    /// Seats put on sale, re-priced or withdrawn.
    pub changed: u64,
    /// Seats left as they were because they are held or sold, in the order asked.
    pub skipped: Vec<(String, SeatStatus)>,
    /// Seats now on general sale that were not, offered to the event's waiting list.
    pub offers: Vec<Offer>,
}

/// Applies an allocation change to every named seat that is neither held nor sold, and
/// bumps the event's allocation version; `None` if there is no such event. Seats it puts
/// on general sale (put on sale, or released from a channel) are offered to the event's
/// waiting list first, in the same transaction (the offers' holds written before it
/// commits, inside the fence on a store that keeps one).
///
/// Why this is safe against a concurrent hold: the event row is locked first (`for no key
/// update`, which leaves foreign-key checks from holds and orders free to proceed but
/// queues every other allocation change), then the named allocation rows `for update`.
/// A hold in flight on the postgres store takes a share lock on the allocation rows of its
/// seats, so the update lock waits for it to commit and the held seats read afterwards
/// include it; a hold that starts later waits for this transaction and then sees the new
/// allocation. The redis store instead keeps new holds out of the event from the moment
/// the held seats are read until the change has committed, and then makes every hold
/// quote its seats from the new version (see [`HoldStore::fence_allocations`]).
pub async fn change_allocations(
    pool: &PgPool,
    holds: &dyn HoldStore,
    id: EventId,
    change: AllocationChange,
    actor: Option<&Actor>,
) -> Result<Option<AllocationOutcome>, StoreError> {
    let mut tx = pool.begin().await?;
    let found = sqlx::query("select 1 from event where event_id = $1 for no key update")
        .bind(id.0)
        .fetch_optional(&mut *tx)
        .await?;
    if found.is_none() {
        return Ok(None);
    }
    let named: Vec<String> = match &change {
        AllocationChange::Put(list) => list.iter().map(|a| a.seat.clone()).collect(),
        AllocationChange::Withdraw(list) => list.clone(),
        AllocationChange::Release(channel) => {
            sqlx::query_scalar(
                "select seat_id from seat_allocation where event_id = $1 and channel = $2",
            )
            .bind(id.0)
            .bind(channel)
            .fetch_all(&mut *tx)
            .await?
        }
    };
    // In seat order, as holds lock them, so the two never wait on each other in a cycle.
    sqlx::query(
        "select 1 from seat_allocation where event_id = $1 and seat_id = any($2)
          order by seat_id for update",
    )
    .bind(id.0)
    .bind(&named)
    .execute(&mut *tx)
    .await?;
    let entry = actor.map(|actor| (actor, audit_change(id, &change)));
    let fence = holds.fence_allocations(id).await?;
    let outcome = match apply_allocation_change(&mut tx, holds, id, &named, change, &fence).await {
        Ok(outcome) => {
            let written = match &entry {
                Some((actor, change)) => {
                    let mut change = change.clone();
                    change.changes["seats_changed"] = outcome.changed.into();
                    change.changes["seats_left_alone"] = outcome.skipped.len().into();
                    audit::write(&mut tx, actor, &change).await
                }
                None => Ok(()),
            };
            match written {
                Ok(()) => tx
                    .commit()
                    .await
                    .map(|()| outcome)
                    .map_err(StoreError::from),
                Err(e) => Err(e.into()),
            }
        }
        Err(e) => Err(e),
    };
    holds.lift_fence(id, fence).await;
    outcome.map(Some)
}

/// The audit entry of an allocation change, before its counts are known: what was asked.
fn audit_change(id: EventId, change: &AllocationChange) -> Change {
    let (action, asked) = match change {
        AllocationChange::Put(list) => (
            Action::EventAllocationsPut,
            serde_json::json!({ "seats": list.len() }),
        ),
        AllocationChange::Withdraw(list) => (
            Action::EventAllocationsWithdrawn,
            serde_json::json!({ "seats": list.len() }),
        ),
        AllocationChange::Release(channel) => (
            Action::EventChannelReleased,
            serde_json::json!({ "channel": channel }),
        ),
    };
    Change {
        action,
        target_id: id.to_string(),
        changes: asked,
    }
}

/// The body of [`change_allocations`], inside its transaction and fence.
async fn apply_allocation_change(
    tx: &mut PgConnection,
    holds: &dyn HoldStore,
    id: EventId,
    named: &[String],
    change: AllocationChange,
    fence: &AllocationFence,
) -> Result<AllocationOutcome, StoreError> {
    let sold: HashSet<String> = sqlx::query_scalar(
        "select seat_id from order_seat where event_id = $1 and seat_id = any($2) and not released",
    )
    .bind(id.0)
    .bind(named)
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .collect();
    let held: HashSet<&str> = fence.held.iter().map(|h| h.seat_id.as_str()).collect();

    let status = |seat: &str| {
        if sold.contains(seat) {
            Some(SeatStatus::Sold)
        } else if held.contains(seat) {
            Some(SeatStatus::Held)
        } else {
            None
        }
    };
    let skipped: Vec<(String, SeatStatus)> = named
        .iter()
        .filter_map(|s| status(s).map(|st| (s.to_string(), st)))
        .collect();
    // On general sale before the change, of the seats it names.
    let public: HashSet<String> = sqlx::query_scalar(
        "select seat_id from seat_allocation
          where event_id = $1 and seat_id = any($2) and channel is null",
    )
    .bind(id.0)
    .bind(named)
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .collect();
    let mut opened: Vec<String> = Vec::new();
    let changed = match change {
        AllocationChange::Put(list) => {
            let free: Vec<Allocation> = list
                .into_iter()
                .filter(|a| status(&a.seat).is_none())
                .collect();
            opened = free
                .iter()
                .filter(|a| a.channel.is_none() && !public.contains(&a.seat))
                .map(|a| a.seat.clone())
                .collect();
            upsert_allocations(tx, id, &free).await?
        }
        AllocationChange::Release(channel) => {
            let free: Vec<&String> = named.iter().filter(|s| status(s).is_none()).collect();
            opened = sqlx::query_scalar(
                "update seat_allocation set channel = null
                  where event_id = $1 and seat_id = any($2) and channel = $3
                 returning seat_id",
            )
            .bind(id.0)
            .bind(&free)
            .bind(&channel)
            .fetch_all(&mut *tx)
            .await?;
            opened.len() as u64
        }
        AllocationChange::Withdraw(list) => {
            let free: Vec<String> = list.into_iter().filter(|s| status(s).is_none()).collect();
            sqlx::query("delete from seat_allocation where event_id = $1 and seat_id = any($2)")
                .bind(id.0)
                .bind(&free)
                .execute(&mut *tx)
                .await?
                .rows_affected()
        }
    };
    sqlx::query("update event set layout_version = layout_version + 1 where event_id = $1")
        .bind(id.0)
        .execute(&mut *tx)
        .await?;
    let offers = holds.offer(tx, id, &opened, None).await?;
    Ok(AllocationOutcome {
        changed,
        skipped,
        offers,
    })
}
