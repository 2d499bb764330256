//! What the claim answers (`boxoffice_claim_hold`'s rows, and each hold's rows of
//! `boxoffice_claim_holds`), and what those rows say of a hold.

use boxoffice_core::hold::{AcquireOutcome, ClaimedSeat, Hold};
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::claim_word::ClaimWord;
use crate::hold_store::HoldRequest;
use crate::StoreError;

/// One row of `boxoffice_claim_hold`'s answer.
#[derive(sqlx::FromRow)]
pub(super) struct ClaimRow {
    pub(super) outcome: String,
    pub(super) seat_id: Option<String>,
    pub(super) ticket_type: Option<String>,
    price_cents: Option<i64>,
    created_at: Option<DateTime<Utc>>,
    expires_at: Option<DateTime<Utc>>,
}

/// What the claim's rows say of `r`, claimed under `token`.
pub(super) fn outcome(
    r: &HoldRequest<'_>,
    token: Uuid,
    rows: Vec<ClaimRow>,
) -> Result<AcquireOutcome, StoreError> {
    let Some(first) = rows.first() else {
        return Err(StoreError::Other("the claim answered nothing".into()));
    };
    Ok(match ClaimWord::read(&first.outcome, "the claim")? {
        ClaimWord::Held => {
            let (created_at, expires_at) = (first.created_at, first.expires_at);
            let seats = rows
                .into_iter()
                .map(|row| {
                    Some(ClaimedSeat {
                        seat_id: row.seat_id?,
                        ticket_type: row.ticket_type?,
                        price_cents: row.price_cents?,
                    })
                })
                .collect::<Option<Vec<_>>>();
            match (seats, created_at, expires_at) {
                (Some(seats), Some(created_at), Some(expires_at)) => AcquireOutcome::Held(Hold {
                    token,
                    event_id: r.event,
                    user_id: r.user.clone(),
                    seats,
                    created_at,
                    expires_at,
                }),
                _ => return Err(StoreError::Other("a held seat came back blank".into())),
            }
        }
        ClaimWord::Unavailable => {
            AcquireOutcome::Unavailable(rows.into_iter().filter_map(|r| r.seat_id).collect())
        }
        word => word
            .plain_refusal()
            .ok_or_else(|| word.unexpected("the claim"))?,
    })
}
