//! Every seat's status in a few bytes: the compact form the live stream sends a page that
//! already has the layout.
//!
//! Statuses come in layout order as runs: a letter (`a` available, `h` held, `s` sold, `r` resale,
//! `n` not for sale) followed by how many seats in a row have it, when more than one. A
//! fresh 100,000-seat event is `a100000`; a busy one rarely takes more than a byte or two
//! per seat. Each held seat's expiry follows separately, one per held seat in the same
//! order, in whole seconds (rounded up, so a page never shows a seat free before it is)
//! after the earliest of them: three or four bytes a held seat.

use chrono::{DateTime, Utc};

use crate::availability::{SeatState, SeatStatus};

/// Every seat's status, compactly.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Compact {
    /// The runs of statuses in layout order, e.g. `a12h2s`.
    pub runs: String,
    /// The earliest expiry of a held seat, in seconds since the epoch (0 when none is).
    pub held_until_base: i64,
    /// The expiry of each held seat, in layout order, in seconds after `held_until_base`.
    pub held_until_offsets: Vec<u32>,
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
        SeatStatus::Resale => 'r',
        SeatStatus::NotForSale => 'n',
    }
}

fn status(letter: char) -> Option<SeatStatus> {
    Some(match letter {
        'a' => SeatStatus::Available,
        'h' => SeatStatus::Held,
        's' => SeatStatus::Sold,
        'r' => SeatStatus::Resale,
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
    let expiries: Vec<i64> = states
        .iter()
        .filter(|s| s.status == SeatStatus::Held)
        .map(|s| s.held_until.map_or(0, seconds_rounded_up))
        .collect();
    compact.held_until_base = expiries.iter().copied().min().unwrap_or(0);
    compact.held_until_offsets = expiries
        .iter()
        .map(|&e| u32::try_from(e - compact.held_until_base).unwrap_or(u32::MAX))
        .collect();
    compact
}

/// A time in whole seconds since the epoch, rounded up.
pub fn seconds_rounded_up(t: DateTime<Utc>) -> i64 {
    (t.timestamp_millis() + 999).div_euclid(1000)
}

/// The states a compact form stands for.
pub fn decode(compact: &Compact) -> Result<Vec<SeatState>, DecodeError> {
    let runs = compact.runs.as_str();
    let mut states = Vec::new();
    let mut expiries = compact.held_until_offsets.iter();
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
                    let offset = *expiries.next().ok_or(DecodeError::Expiries)?;
                    let at = compact.held_until_base + i64::from(offset);
                    Some(DateTime::<Utc>::from_timestamp(at, 0).ok_or(DecodeError::Expiries)?)
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

    fn compact(runs: &str, base: i64, offsets: &[u32]) -> Compact {
        Compact {
            runs: runs.into(),
            held_until_base: base,
            held_until_offsets: offsets.to_vec(),
        }
    }

    /// A state as it reads back: a hold's expiry rounded up to the second.
    fn in_seconds(s: SeatState) -> SeatState {
        SeatState {
            held_until: s
                .held_until
                .map(|t| DateTime::from_timestamp(seconds_rounded_up(t), 0).unwrap()),
            ..s
        }
    }

    #[test]
    fn runs_are_letters_with_counts_above_one() {
        use SeatStatus::*;
        let states = [
            state(Available, 0),
            state(Available, 0),
            state(Available, 0),
            state(Held, 1_700_000_000_000),
            state(Held, 1_700_000_120_001),
            state(Sold, 0),
            state(NotForSale, 0),
            state(Available, 0),
        ];
        let compact = encode(&states);
        assert_eq!(compact, self::compact("a3h2sna", 1_700_000_000, &[0, 121]));
        let back = decode(&compact).unwrap();
        assert_eq!(back, states.map(in_seconds));
        assert_eq!(
            back[4].held_until.unwrap().timestamp(),
            1_700_000_121,
            "rounded up: never shown free before it is"
        );
        assert_eq!(encode(&[]), Compact::default());
    }

    #[test]
    fn malformed_forms_are_refused() {
        let refused = |runs, offsets: &[u32]| decode(&compact(runs, 1, offsets)).unwrap_err();
        assert_eq!(refused("x", &[]), DecodeError::Unexpected('x', 0));
        assert_eq!(refused("3a", &[]), DecodeError::Unexpected('3', 0));
        assert_eq!(refused("a0", &[]), DecodeError::BadLength(1));
        assert_eq!(refused("a99999999999", &[]), DecodeError::BadLength(1));
        assert_eq!(refused("h2", &[1]), DecodeError::Expiries);
        assert_eq!(refused("h", &[1, 2]), DecodeError::Expiries);
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
            let expected: Vec<SeatState> = states.into_iter().map(in_seconds).collect();
            prop_assert_eq!(decode(&compact).unwrap(), expected);
        }
    }
}
