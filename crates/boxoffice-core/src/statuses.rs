//! Every seat's status in a few bytes: the compact form the live stream sends a page that
//! already has the layout.
//!
//! Statuses come in layout order as runs: a letter (`a` available, `h` held, `s` sold,
//! `n` not for sale) followed by how many seats in a row have it, when more than one. A
//! fresh 100,000-seat event is `a100000`; a busy one rarely takes more than a byte or two
//! per seat. Each held seat's expiry follows separately, in milliseconds since the epoch,
//! one per held seat in the same order.

use chrono::{DateTime, Utc};

use crate::availability::{SeatState, SeatStatus};

/// Every seat's status, compactly.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Compact {
    /// The runs of statuses in layout order, e.g. `a12h2s`.
    pub runs: String,
    /// The expiry of each held seat, in layout order, in milliseconds since the epoch.
    pub held_until_ms: Vec<i64>,
}

/// Why a compact form could not be read back.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// A character that is neither a status letter nor a digit, or a count with no letter.
    #[error("unexpected {0:?} at byte {1}")]
    Unexpected(char, usize),
    /// A run of no seats, or one too long to count.
    #[error("bad run length at byte {0}")]
    BadLength(usize),
    /// Fewer or more expiries than held seats, or one out of range.
    #[error("the expiries do not match the held seats")]
    Expiries,
}

fn letter(status: SeatStatus) -> char {
    match status {
        SeatStatus::Available => 'a',
        SeatStatus::Held => 'h',
        SeatStatus::Sold => 's',
        SeatStatus::NotForSale => 'n',
    }
}

fn status(letter: char) -> Option<SeatStatus> {
    Some(match letter {
        'a' => SeatStatus::Available,
        'h' => SeatStatus::Held,
        's' => SeatStatus::Sold,
        'n' => SeatStatus::NotForSale,
        _ => return None,
    })
}

/// The compact form of `states`.
pub fn encode(states: &[SeatState]) -> Compact {
    use std::fmt::Write;
    let mut compact = Compact::default();
    let mut rest = states;
    while let Some(first) = rest.first() {
        let run = rest.iter().take_while(|s| s.status == first.status).count();
        compact.runs.push(letter(first.status));
        if run > 1 {
            write!(compact.runs, "{run}").expect("writing to a string cannot fail");
        }
        rest = &rest[run..];
    }
    compact.held_until_ms = states
        .iter()
        .filter(|s| s.status == SeatStatus::Held)
        .map(|s| s.held_until.map_or(0, |t| t.timestamp_millis()))
        .collect();
    compact
}

/// The states a compact form stands for.
pub fn decode(runs: &str, held_until_ms: &[i64]) -> Result<Vec<SeatState>, DecodeError> {
    let mut states = Vec::new();
    let mut expiries = held_until_ms.iter();
    let bytes = runs.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i] as char;
        let status = status(c).ok_or(DecodeError::Unexpected(c, i))?;
        let start = i + 1;
        let end = start
            + bytes[start..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
        let run = match &runs[start..end] {
            "" => 1,
            digits => digits
                .parse::<usize>()
                .ok()
                .filter(|&n| n > 0 && n <= 10_000_000)
                .ok_or(DecodeError::BadLength(start))?,
        };
        for _ in 0..run {
            let held_until = match status {
                SeatStatus::Held => {
                    let ms = *expiries.next().ok_or(DecodeError::Expiries)?;
                    Some(DateTime::<Utc>::from_timestamp_millis(ms).ok_or(DecodeError::Expiries)?)
                }
                _ => None,
            };
            states.push(SeatState { status, held_until });
        }
        i = end;
    }
    if expiries.next().is_some() {
        return Err(DecodeError::Expiries);
    }
    Ok(states)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn state(status: SeatStatus, ms: i64) -> SeatState {
        SeatState {
            status,
            held_until: (status == SeatStatus::Held)
                .then(|| DateTime::from_timestamp_millis(ms).unwrap()),
        }
    }

    #[test]
    fn runs_are_letters_with_counts_above_one() {
        use SeatStatus::*;
        let states = [
            state(Available, 0),
            state(Available, 0),
            state(Available, 0),
            state(Held, 1_000),
            state(Held, 2_000),
            state(Sold, 0),
            state(NotForSale, 0),
            state(Available, 0),
        ];
        let compact = encode(&states);
        assert_eq!(compact.runs, "a3h2sna");
        assert_eq!(compact.held_until_ms, [1_000, 2_000]);
        assert_eq!(
            decode(&compact.runs, &compact.held_until_ms).unwrap(),
            states
        );
        assert_eq!(encode(&[]), Compact::default());
    }

    #[test]
    fn malformed_forms_are_refused() {
        assert_eq!(decode("x", &[]), Err(DecodeError::Unexpected('x', 0)));
        assert_eq!(decode("3a", &[]), Err(DecodeError::Unexpected('3', 0)));
        assert_eq!(decode("a0", &[]), Err(DecodeError::BadLength(1)));
        assert_eq!(decode("a99999999999", &[]), Err(DecodeError::BadLength(1)));
        assert_eq!(decode("h2", &[1]), Err(DecodeError::Expiries));
        assert_eq!(decode("h", &[1, 2]), Err(DecodeError::Expiries));
    }

    fn any_status() -> impl Strategy<Value = SeatStatus> {
        prop_oneof![
            Just(SeatStatus::Available),
            Just(SeatStatus::Held),
            Just(SeatStatus::Sold),
            Just(SeatStatus::NotForSale),
        ]
    }

    proptest! {
        #[test]
        fn decoding_gives_back_what_was_encoded(
            seats in proptest::collection::vec((any_status(), 0i64..4_000_000_000_000), 0..300)
        ) {
            let states: Vec<SeatState> = seats.into_iter().map(|(s, ms)| state(s, ms)).collect();
            let compact = encode(&states);
            prop_assert!(compact.runs.len() <= 1 + states.len() * 2);
            prop_assert_eq!(decode(&compact.runs, &compact.held_until_ms).unwrap(), states);
        }
    }
}
