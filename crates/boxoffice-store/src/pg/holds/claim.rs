//! How a hold is decided on the postgres store, in the order it happens:
//!
//! 1. The hold is claimed: sent with the other claims waiting on this instance in one
//!    call of `boxoffice_claim_holds` ([`super::together`]), or, if its batch could not
//!    settle it, alone (`boxoffice_claim_hold`). Both are `boxoffice_claim`
//!    (`sql/claim.sql`), where every rule of a claim is written once: the buyer's lock,
//!    the per-user limit, the event's start, the seats on sale and not taken, all or
//!    nothing.
//! 2. What the claim answered becomes the outcome.
//!
//! (Before any of this, the service refuses a seat its instance knows taken, from the
//! store's recent word and the change feed, without asking the store:
//! `boxoffice_service::live::Taken`, the one layer of recent refusals.)

use boxoffice_core::hold::AcquireOutcome;
use uuid::Uuid;

use super::answer::{self, ClaimRow};
use super::together::{Claim, Settled};
use super::PgHoldStore;
use crate::hold_store::HoldRequest;
use crate::StoreError;

impl PgHoldStore {
    pub(super) async fn try_acquire(
        &self,
        r: &HoldRequest<'_>,
    ) -> Result<AcquireOutcome, StoreError> {
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
