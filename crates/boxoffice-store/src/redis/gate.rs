//! The sale-day gate (docs/design/general-admission.md): a Redis counter per
//! general-admission area that turns most requests away once the area is sold out, before
//! they queue on the area's row lock in Postgres.
//!
//! The gate only ever refuses early; it never admits a booking on its own. Postgres stays
//! the authority: a booking the gate lets through still takes the row lock and checks the
//! places left, and `ga_area_seats_left_check` backs that. A counter that is out of step
//! (lost in a flush, or rebuilt while bookings were in flight) can refuse too early for a
//! moment, never oversell.

use std::sync::Arc;

use boxoffice_core::ids::EventId;
use redis::Script;

use crate::redis::link::{redis_error, RedisConfig, RedisLink};
use crate::StoreError;

/// What taking places from the gate came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateTake {
    /// The places were taken; the booking may go on to Postgres.
    Taken,
    /// Fewer places than wanted remain; refuse without touching Postgres.
    Refused {
        /// Places the gate believes are left.
        left: u32,
    },
    /// The counter does not exist yet; initialise it from Postgres and try again.
    Missing,
}

/// The sale-day gate over one Redis connection (made on first use, re-made by itself).
#[derive(Clone)]
pub struct Gate {
    redis: Arc<RedisLink>,
    take: Script,
    give_back: Script,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Gate")
    }
}

/// A counter lives this long and is then rebuilt from Postgres on the next booking, so a
/// counter that drifted (a give-back lost while Redis was away) heals by itself.
const RESYNC_SECONDS: u64 = 60;

fn key(event: EventId, area: &str) -> String {
    // The event id is the hash tag, so all of one event's keys share a cluster slot.
    format!("gate:{{{event}}}:{area}")
}

impl Gate {
    /// A gate on the Redis `config` names; connects on first use, so bookings go straight
    /// to Postgres while Redis is down.
    pub fn new(config: &RedisConfig) -> Result<Self, StoreError> {
        Ok(Self {
            redis: Arc::new(RedisLink::new(config)?),
            take: Script::new(include_str!("../../scripts/gate_take.lua")),
            give_back: Script::new(include_str!("../../scripts/gate_give_back.lua")),
        })
    }

    /// Takes `quantity` places from the area's counter, if that many are left.
    pub async fn take(
        &self,
        event: EventId,
        area: &str,
        quantity: u32,
    ) -> Result<GateTake, StoreError> {
        let (code, left): (i64, i64) = self
            .take
            .key(key(event, area))
            .arg(quantity)
            .invoke_async(&mut self.redis.connection().await?)
            .await
            .map_err(redis_error)?;
        Ok(match code {
            1 => GateTake::Taken,
            0 => GateTake::Refused {
                left: left.max(0) as u32,
            },
            _ => GateTake::Missing,
        })
    }

    /// Creates the area's counter with the places Postgres says are left, unless another
    /// request created it first. It expires after a minute and is then rebuilt.
    pub async fn init(&self, event: EventId, area: &str, left: u32) -> Result<(), StoreError> {
        redis::cmd("SET")
            .arg(key(event, area))
            .arg(left)
            .arg("NX")
            .arg("EX")
            .arg(RESYNC_SECONDS)
            .query_async::<()>(&mut self.redis.connection().await?)
            .await
            .map_err(redis_error)
    }

    /// Returns places to the counter (a failed booking, a cancellation).
    pub async fn give_back(
        &self,
        event: EventId,
        area: &str,
        quantity: u32,
    ) -> Result<(), StoreError> {
        self.give_back
            .key(key(event, area))
            .arg(quantity)
            .invoke_async::<i64>(&mut self.redis.connection().await?)
            .await
            .map_err(redis_error)?;
        Ok(())
    }
}
