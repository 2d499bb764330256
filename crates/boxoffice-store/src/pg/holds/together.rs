//! Claims sent together. Under load, many holds' claims wait for a connection at once;
//! a few lanes each take every claim waiting (up to [`MOST`]) and send them in one call
//! of `boxoffice_claim_holds` (`sql/claim.sql`): one round trip, one transaction
//! start and one commit for all of them. With nothing else waiting, a claim goes in a
//! batch of its own, as soon as a lane is free.
//!
//! What a claim answers does not depend on its company: each is judged by the steps of
//! `boxoffice_claim_hold`, as if asked alone right after the ones before it in its batch.
//! (The holds whose seats and buyer come up nowhere else in the batch cannot affect one
//! another; the function claims those in one statement first, the others one by one.) The seats go in basket order: the first claim's, then the second's, and so on.
//! A claim the batch could not settle (it waited on a lock, or failed) comes back as
//! [`Settled::Again`], for the caller to claim alone; so does every claim of a batch that
//! failed as a whole while the database was reachable (a statement timeout, say), so that
//! one slow claim never answers for the others.

use boxoffice_core::ids::EventId;
use sqlx::PgPool;
use uuid::Uuid;

use super::answer::ClaimRow;
use crate::error::is_connection_failure;
use crate::lanes::{copy, Answers, Lanes};
use crate::StoreError;

/// Most claims in one batch.
const MOST: usize = 32;

/// One claim: `boxoffice_claim_hold`'s arguments.
pub(super) struct Claim {
    pub(super) event: EventId,
    pub(super) token: Uuid,
    pub(super) user: String,
    pub(super) ttl_seconds: f64,
    pub(super) seats: Vec<String>,
    pub(super) max_seats: i64,
    pub(super) pass: Option<Uuid>,
    pub(super) channel: Option<String>,
}

/// What became of a claim sent together.
pub(super) enum Settled {
    /// `boxoffice_claim_hold`'s rows for it.
    Rows(Vec<ClaimRow>),
    /// Nothing was claimed for it: claim it again alone.
    Again,
}

/// The lanes of one store.
#[derive(Debug)]
pub(super) struct Together {
    lanes: Lanes<Claim, Settled>,
}

impl Default for Together {
    fn default() -> Self {
        Self {
            lanes: Lanes::new(MOST, batch, "claim"),
        }
    }
}

impl Together {
    /// Claims `claim` in the next batch a lane sends on `pool`.
    pub(super) async fn claim(&self, pool: &PgPool, claim: Claim) -> Result<Settled, StoreError> {
        self.lanes.send(pool, claim).await
    }
}

fn batch(pool: PgPool, claims: Vec<Claim>) -> Answers<Settled> {
    Box::pin(async move { send(&pool, &claims).await })
}

/// Sends `claims` in one call; an answer for each.
async fn send(pool: &PgPool, claims: &[Claim]) -> Vec<Result<Settled, StoreError>> {
    let events: Vec<Uuid> = claims.iter().map(|c| c.event.0).collect();
    let tokens: Vec<Uuid> = claims.iter().map(|c| c.token).collect();
    let users: Vec<&str> = claims.iter().map(|c| c.user.as_str()).collect();
    let ttls: Vec<f64> = claims.iter().map(|c| c.ttl_seconds).collect();
    let maxes: Vec<i64> = claims.iter().map(|c| c.max_seats).collect();
    let passes: Vec<Option<Uuid>> = claims.iter().map(|c| c.pass).collect();
    let channels: Vec<Option<&str>> = claims.iter().map(|c| c.channel.as_deref()).collect();
    let (baskets, seats): (Vec<i32>, Vec<&str>) = claims
        .iter()
        .zip(1..)
        .flat_map(|(c, n)| c.seats.iter().map(move |s| (n, s.as_str())))
        .unzip();
    let rows: Result<Vec<BatchRow>, sqlx::Error> =
        sqlx::query_as("select * from boxoffice_claim_holds($1, $2, $3, $4, $5, $6, $7, $8, $9)")
            .bind(&events)
            .bind(&tokens)
            .bind(&users)
            .bind(&ttls)
            .bind(&maxes)
            .bind(&passes)
            .bind(&channels)
            .bind(&baskets)
            .bind(&seats)
            .fetch_all(pool)
            .await;
    let rows = match rows {
        Ok(rows) => rows,
        // The batch failed as a whole, for something one of its claims met (a statement
        // timeout, a deadlock, an unexpected error): each is claimed again alone, where it
        // is judged on its own and the one that caused it fails by itself.
        Err(error) if claims.len() > 1 && !is_connection_failure(&error) => {
            return claims.iter().map(|_| Ok(Settled::Again)).collect();
        }
        // The database could not serve the batch at all: alone, each would fare the same.
        Err(error) => {
            let error = StoreError::from(error);
            return claims.iter().map(|_| Err(copy(&error))).collect();
        }
    };
    let mut answers: Vec<Vec<ClaimRow>> = claims.iter().map(|_| Vec::new()).collect();
    let mut again = vec![false; claims.len()];
    for row in rows {
        // Numbered from 1, in the batch's order.
        let n = usize::try_from(row.hold)
            .ok()
            .and_then(|n| n.checked_sub(1));
        let Some(n) = n.filter(|&n| n < claims.len()) else {
            continue;
        };
        if row.claim.outcome == "retry" {
            again[n] = true;
        } else {
            answers[n].push(row.claim);
        }
    }
    answers
        .into_iter()
        .zip(again)
        .map(|(rows, again)| {
            Ok(if again || rows.is_empty() {
                Settled::Again
            } else {
                Settled::Rows(rows)
            })
        })
        .collect()
}

/// One row of `boxoffice_claim_holds`' answer: the hold's number, then
/// `boxoffice_claim_hold`'s row for it.
#[derive(sqlx::FromRow)]
struct BatchRow {
    hold: i32,
    #[sqlx(flatten)]
    claim: ClaimRow,
}
