//! How a hold is decided on the postgres store, in the order it happens:
//!
//! 1. A seat this instance refused in the last two seconds is contested: the request is
//!    first checked in one statement outside any transaction (`boxoffice_hold_refusal`),
//!    and refused there if the claim would refuse it now.
//! 2. Otherwise the hold is claimed: sent with the other claims waiting on this instance
//!    in one call of `boxoffice_claim_holds` ([`super::together`]), or, if its batch could
//!    not settle it, alone (`boxoffice_claim_hold`). Both are `boxoffice_claim`
//!    (`sql/claim.sql`), where every rule of a claim is written once: the buyer's lock, the per-user
//!    limit, the event's start, the seats on sale and not taken, all or nothing.
//! 3. What the claim answered becomes the outcome; a refused seat becomes contested.
//!
//! (Before any of this, the service refuses a seat its instance knows taken from the
//! change feed without asking the store: `boxoffice_service::live::Taken`.)

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use boxoffice_core::hold::AcquireOutcome;
use boxoffice_core::ids::EventId;
use uuid::Uuid;

use super::answer::{self, ClaimRow};
use super::together::{Claim, Settled};
use super::PgHoldStore;
use crate::hold_store::HoldRequest;
use crate::StoreError;

/// How long a refused seat counts as contested.
const CONTESTED_FOR: Duration = Duration::from_secs(2);
/// Most seats remembered as contested; past it, those refused more than half of
/// [`CONTESTED_FOR`] ago are forgotten.
const CONTESTED_SEATS: usize = 10_000;

/// Seats refused lately, per event, and when. Only ever a hint of where to look first:
/// forgetting a seat, or remembering one that has since come free, changes how many round
/// trips a hold takes, never its answer.
#[derive(Debug, Default)]
pub(super) struct Contested(Mutex<HashMap<EventId, HashMap<String, Instant>>>);

impl Contested {
    fn refused(&self, event: EventId, seats: &[String]) {
        let mut seen = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let remembered: usize = seen.values().map(HashMap::len).sum();
        if remembered + seats.len() > CONTESTED_SEATS {
            for refused in seen.values_mut() {
                refused.retain(|_, at| now.duration_since(*at) < CONTESTED_FOR / 2);
            }
            seen.retain(|_, refused| !refused.is_empty());
        }
        let refused = seen.entry(event).or_default();
        for seat in seats {
            refused.insert(seat.clone(), now);
        }
    }

    fn any(&self, event: EventId, seats: &[String]) -> bool {
        let seen = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let Some(refused) = seen.get(&event) else {
            return false;
        };
        seats.iter().any(|seat| {
            refused
                .get(seat.as_str())
                .is_some_and(|at| at.elapsed() < CONTESTED_FOR)
        })
    }
}

impl PgHoldStore {
    /// Whether the request must be refused as things stand, read in one statement outside
    /// any transaction and without the user's lock: the event has started, the user is at
    /// the limit, or some seats are held, sold or not for sale. A refusal is exactly what
    /// the claim would answer at the instant of this statement's snapshot, and changes
    /// nothing; `None` means the claim must decide. Every look is a scalar subquery on a
    /// primary key, for the reason the claim gives.
    async fn refusal(&self, r: &HoldRequest<'_>) -> Result<Option<AcquireOutcome>, StoreError> {
        let (started, live, taken): (bool, i64, Vec<String>) =
            sqlx::query_as("select * from boxoffice_hold_refusal($1, $2, $3, $4, $5)")
                .bind(r.event.0)
                .bind(r.user.as_str())
                .bind(r.seats)
                .bind(i64::from(r.max_seats_per_user))
                .bind(r.channel)
                .fetch_optional(&self.pool)
                .await?
                .unwrap_or((true, 0, Vec::new()));
        Ok(if started {
            Some(AcquireOutcome::EventStarted)
        } else if live + r.seats.len() as i64 > i64::from(r.max_seats_per_user) {
            Some(AcquireOutcome::LimitExceeded)
        } else if !taken.is_empty() {
            Some(AcquireOutcome::Unavailable(taken))
        } else {
            None
        })
    }

    pub(super) async fn try_acquire(
        &self,
        r: &HoldRequest<'_>,
    ) -> Result<AcquireOutcome, StoreError> {
        // A seat refused lately is likely refused again: on a hot seat, every buyer but
        // the one who got it is answered in one statement, with no transaction or lock.
        if self.contested.any(r.event, r.seats) {
            if let Some(refusal) = self.refusal(r).await? {
                if let AcquireOutcome::Unavailable(seats) = &refusal {
                    self.contested.refused(r.event, seats);
                }
                return Ok(refusal);
            }
        }
        let outcome = self.claim(r).await?;
        if let AcquireOutcome::Unavailable(seats) = &outcome {
            self.contested.refused(r.event, seats);
        }
        Ok(outcome)
    }

    async fn claim(&self, r: &HoldRequest<'_>) -> Result<AcquireOutcome, StoreError> {
        let token = Uuid::new_v4();
        // Sent with the other claims waiting on this instance, if any (`together`); one
        // the batch could not settle is claimed again alone, once that batch let go of
        // its locks.
        let claim = Claim {
            event: r.event,
            token,
            user: r.user.as_str().to_owned(),
            ttl_seconds: f64::from(r.ttl_seconds),
            seats: r.seats.to_vec(),
            max_seats: i64::from(r.max_seats_per_user),
            pass: r.pass.map(|p| p.ticket),
            channel: r.channel.map(str::to_owned),
        };
        let rows = match self.together.claim(&self.pool, claim).await? {
            Settled::Rows(rows) => rows,
            Settled::Again => self.claim_alone(r, token).await?,
        };
        answer::outcome(r, token, rows)
    }

    /// Claims the hold alone: `boxoffice_claim_hold`'s rows.
    async fn claim_alone(
        &self,
        r: &HoldRequest<'_>,
        token: Uuid,
    ) -> Result<Vec<ClaimRow>, StoreError> {
        // One round trip: `boxoffice_claim_hold` takes the buyer's lock (the key recipe of
        // `tx::begin_locked`) in an implicit READ COMMITTED transaction with asynchronous
        // commit, and claims the whole basket in one statement, all or nothing. Why that
        // statement is safe, and every rule it keeps, is written once, at
        // `boxoffice_claim` (`sql/claim.sql`), which claims batches too.
        Ok(
            sqlx::query_as("select * from boxoffice_claim_hold($1, $2, $3, $4, $5, $6, $7, $8)")
                .bind(r.event.0)
                .bind(token)
                .bind(r.user.as_str())
                .bind(f64::from(r.ttl_seconds))
                .bind(r.seats)
                .bind(i64::from(r.max_seats_per_user))
                .bind(r.pass.map(|p| p.ticket))
                .bind(r.channel)
                .fetch_all(&self.pool)
                .await?,
        )
    }
}
