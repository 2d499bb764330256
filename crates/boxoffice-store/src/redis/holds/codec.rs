//! How holds and seats are written to and read back from Redis values.

use boxoffice_core::availability::HeldSeat;
use boxoffice_core::hold::ClaimedSeat;
use chrono::{DateTime, Utc};
use redis::{FromRedisValue, Value};
use serde::{Deserialize, Serialize};

use crate::StoreError;
use uuid::Uuid;

/// A seat with its quote, as a hold keeps it in Redis.
#[derive(Serialize, Deserialize)]
pub(super) struct StoredSeat {
    id: String,
    #[serde(rename = "t")]
    ticket_type: String,
    #[serde(rename = "p")]
    price_cents: i64,
}

/// A hold as read back from `holdtok:{E}:<token>`.
pub(super) struct StoredHold {
    pub(super) user: String,
    pub(super) created_ms: i64,
    pub(super) expires_ms: i64,
    pub(super) seats: Vec<ClaimedSeat>,
    /// The seats as stored: the scripts that act on the seats read here check that the
    /// hold still has exactly these (it may have grown or shrunk since).
    pub(super) seats_json: String,
    /// Being checked out: the key outlives `expires_ms` to protect the commit.
    pub(super) checking_out: bool,
    /// Redis' clock when the hold was read.
    pub(super) now_ms: i64,
    /// The waiting-room ticket of the pass the hold was made under.
    pub(super) pass: Option<Uuid>,
    /// For a season claim's hold, how many events the claim holds seats in.
    pub(super) season_events: Option<usize>,
}

pub(super) fn millis(ms: i64) -> Result<DateTime<Utc>, StoreError> {
    DateTime::from_timestamp_millis(ms)
        .ok_or_else(|| StoreError::Other(format!("timestamp {ms} is out of range").into()))
}

pub(super) fn decode<T: FromRedisValue>(value: &Value) -> Result<T, StoreError> {
    T::from_redis_value_ref(value).map_err(|e| StoreError::Other(Box::new(e)))
}

/// The `i`th value (from 0) of a script's reply: a reply shorter than its script promises
/// is an error, never a panic.
pub(super) fn nth<T: FromRedisValue>(reply: &[Value], i: usize) -> Result<T, StoreError> {
    match reply.get(i) {
        Some(value) => decode(value),
        None => Err(StoreError::Other(
            format!(
                "a script answered {} values where value {} was expected: {reply:?}",
                reply.len(),
                i + 1
            )
            .into(),
        )),
    }
}

/// The values of a script's reply from the `i`th on (none if it is shorter).
pub(super) fn rest(reply: &[Value], i: usize) -> &[Value] {
    reply.get(i..).unwrap_or_default()
}

pub(super) fn encode_seats(seats: &[ClaimedSeat]) -> String {
    let stored: Vec<StoredSeat> = seats
        .iter()
        .map(|s| StoredSeat {
            id: s.seat_id.clone(),
            ticket_type: s.ticket_type.clone(),
            price_cents: s.price_cents,
        })
        .collect();
    serde_json::to_string(&stored).expect("seats always serialize")
}

pub(super) fn decode_seats(json: &str) -> Result<Vec<ClaimedSeat>, StoreError> {
    let stored: Vec<StoredSeat> =
        serde_json::from_str(json).map_err(|e| StoreError::Other(Box::new(e)))?;
    Ok(stored
        .into_iter()
        .map(|s| ClaimedSeat {
            seat_id: s.id,
            ticket_type: s.ticket_type,
            price_cents: s.price_cents,
        })
        .collect())
}

/// `{seat, score, seat, score, ...}` from ZRANGEBYSCORE WITHSCORES.
pub(super) fn held_pairs(flat: Vec<String>) -> Result<Vec<HeldSeat>, StoreError> {
    flat.chunks_exact(2)
        .map(|pair| {
            let ms: f64 = pair[1]
                .parse()
                .map_err(|e| StoreError::Other(Box::new(e)))?;
            Ok(HeldSeat {
                seat_id: pair[0].clone(),
                held_until: millis(ms as i64)?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_shorter_than_promised_is_an_error_not_a_panic() {
        let reply = vec![Value::BulkString(b"held".to_vec())];
        assert_eq!(nth::<String>(&reply, 0).unwrap(), "held");
        let short = nth::<i64>(&reply, 2).unwrap_err().to_string();
        assert!(
            short.starts_with("a script answered 1 values where value 3 was expected"),
            "{short}"
        );
        assert!(nth::<String>(&[], 0).is_err());
        assert!(rest(&reply, 1).is_empty());
        assert!(rest(&reply, 5).is_empty());
    }
}
