//! An event's state in Redis (its layout version, start and sold seats), loaded from
//! Postgres before its first hold, refreshed before it lapses, and loaded again whenever
//! Redis has lost it: one server loads while the others wait.

use std::sync::atomic::Ordering;
use std::time::Duration;

use boxoffice_core::ids::EventId;
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

use super::{keys, RedisHoldStore};
use crate::redis::link::{redis_error, Connection};
use crate::StoreError;

/// How long an event's state loaded from Postgres is trusted before it is loaded again,
/// so a sold seat Redis missed (a checkout whose last step never reached Redis) is
/// refused again within this time.
pub const SYNC_TTL: Duration = Duration::from_secs(300);
/// A hold taken this close to the end of [`SYNC_TTL`] loads the event's state again.
pub(super) const REFRESH_AHEAD: Duration = Duration::from_secs(60);
/// How long a server's claim to load an event's state lasts, should it die meanwhile.
pub(super) const LOAD_CLAIM: Duration = Duration::from_secs(10);
/// Sold seats staged per command while loading.
pub(super) const STAGE_CHUNK: usize = 1000;

/// What loading an event's state came to.
pub(super) enum Load {
    /// The state is in Redis now.
    Ready,
    /// Another server is loading it, or its allocations are changing: wait.
    Busy,
}

impl RedisHoldStore {
    /// Loads the event's layout version, start and sold seats from Postgres into Redis,
    /// unless another server is doing so; with `refresh`, even though they are loaded
    /// (holds go on meanwhile with the state loaded before).
    pub(super) async fn load(&self, event: EventId, refresh: bool) -> Result<Load, StoreError> {
        let mut conn = self.conn().await?;
        let loader = Uuid::new_v4();
        let claim: i64 = self
            .scripts
            .load_begin
            .key(keys::sync(event))
            .key(keys::fence(event))
            .key(keys::loading(event))
            .key(keys::sold_new(event))
            .arg(loader.to_string())
            .arg(LOAD_CLAIM.as_millis() as u64)
            .arg(if refresh { "1" } else { "0" })
            .invoke_async(&mut conn)
            .await
            .map_err(redis_error)?;
        match claim {
            2 => return Ok(Load::Ready),
            0 => return Ok(Load::Busy),
            _ => {}
        }
        let installed = self.install_event_state(&mut conn, event, loader).await;
        if installed.is_err() {
            // Let another server load at once rather than after the claim lapses.
            let _ = self
                .scripts
                .compare_and_delete
                .key(keys::loading(event))
                .arg(loader.to_string())
                .invoke_async::<i64>(&mut conn)
                .await;
        }
        installed
    }

    /// Reads the event's state from Postgres and installs it in Redis under the claim
    /// `loader`.
    async fn install_event_state(
        &self,
        conn: &mut Connection,
        event: EventId,
        loader: Uuid,
    ) -> Result<Load, StoreError> {
        let row = Self::read_event_state(&self.pool, event).await?;
        let Some((version, starts_at, sold)) = row else {
            return Err(StoreError::NotFound);
        };
        let stage = keys::sold_stage(event, loader);
        for chunk in sold.chunks(STAGE_CHUNK) {
            redis::cmd("SADD")
                .arg(&stage)
                .arg(chunk)
                .query_async::<()>(conn)
                .await
                .map_err(redis_error)?;
        }
        if !sold.is_empty() {
            redis::cmd("PEXPIRE")
                .arg(&stage)
                .arg(LOAD_CLAIM.as_millis() as u64)
                .query_async::<()>(conn)
                .await
                .map_err(redis_error)?;
        }
        let installed: i64 = self
            .scripts
            .load_finish
            .key(keys::loading(event))
            .key(&stage)
            .key(keys::sold_new(event))
            .key(keys::sold(event))
            .key(keys::sync(event))
            .arg(loader.to_string())
            .arg(version)
            .arg(starts_at.timestamp_millis())
            .arg(SYNC_TTL.as_millis() as u64)
            .arg(REFRESH_AHEAD.as_millis() as u64)
            .invoke_async(conn)
            .await
            .map_err(redis_error)?;
        if installed == 1 {
            self.loads.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(%event, version, sold = sold.len(), "loaded the event's state into redis");
            Ok(Load::Ready)
        } else {
            Ok(Load::Busy)
        }
    }

    /// The event's layout version, start and sold seats, as Postgres has them once no
    /// allocation change is in flight.
    async fn read_event_state(
        pool: &PgPool,
        event: EventId,
    ) -> Result<Option<(i64, DateTime<Utc>, Vec<String>)>, StoreError> {
        let mut tx = pool.begin().await?;
        // An allocation change holds the event row (`for no key update`) until it commits,
        // so this waits for it and reads the new version, even if the change outlived its
        // fence in Redis.
        let Some((version, starts_at)): Option<(i64, DateTime<Utc>)> = sqlx::query_as(
            "select layout_version, starts_at from event where event_id = $1 for share",
        )
        .bind(event.0)
        .fetch_optional(&mut *tx)
        .await?
        else {
            return Ok(None);
        };
        // Sales that commit after this read are added by their checkouts to `soldnew`,
        // which the load merges in. A seat listed for resale is free to hold. A withdrawal
        // marks its seat sold in Redis (and in `soldnew`) before it commits, with its listing
        // row locked: the listings are read with `for share`, so a load that began after
        // that mark (and emptied `soldnew`) waits for the withdrawal and reads it ended.
        let sold: Vec<String> = sqlx::query_scalar(
            "with listed as (select seat_id from resale_listing
                              where event_id = $1 for share)
             select seat_id from order_seat s
              where event_id = $1 and not released
                and seat_id not in (select seat_id from listed)",
        )
        .bind(event.0)
        .fetch_all(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Some((version, starts_at, sold)))
    }
}
