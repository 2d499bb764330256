//! The words a claim answers with, read in one place: `sql/claim.sql`'s functions and the
//! hold scripts (`scripts/hold_acquire.lua`, `hold_grow.lua`, `prelude.lua`) head their
//! answers with one of these, spelled the same, and each store's decoder (the postgres
//! claim's rows in `pg::holds`, its season claim's, the redis scripts' replies) matches on
//! [`ClaimWord`] rather than on strings. A test below keeps this list and those sources
//! equal.

use boxoffice_core::hold::AcquireOutcome;

use crate::StoreError;

/// The first word of a claim's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClaimWord {
    /// The seats are held (both stores).
    Held,
    /// Some seats are another's or not on sale; the answer names them (both stores).
    Unavailable,
    /// The event has started (both stores).
    Started,
    /// The buyer would pass the event's limit of seats (both stores).
    Limit,
    /// The waiting room's pass has ended (both stores).
    PassEnded,
    /// In a batch or a season claim, nothing could be blamed: claim again (postgres store).
    Retry,
    /// The buyer asks too often; the answer says how long to wait (redis store).
    Rate,
    /// The seats were quoted under other allocations; the answer names the version in force
    /// (redis store).
    Stale,
    /// A season claim's first round marked the seats (redis store).
    Prepared,
    /// The event's state must first be loaded from Postgres (redis store).
    Load,
    /// The event's state is being loaded or its allocations are changing (redis store).
    Busy,
    /// A hold to grow is no longer live (redis store).
    Gone,
    /// A hold to grow is another buyer's (redis store).
    Other,
}

impl ClaimWord {
    /// Every word with its spelling.
    pub(crate) const ALL: [(ClaimWord, &'static str); 13] = [
        (ClaimWord::Held, "held"),
        (ClaimWord::Unavailable, "unavailable"),
        (ClaimWord::Started, "started"),
        (ClaimWord::Limit, "limit"),
        (ClaimWord::PassEnded, "pass_ended"),
        (ClaimWord::Retry, "retry"),
        (ClaimWord::Rate, "rate"),
        (ClaimWord::Stale, "stale"),
        (ClaimWord::Prepared, "prepared"),
        (ClaimWord::Load, "load"),
        (ClaimWord::Busy, "busy"),
        (ClaimWord::Gone, "gone"),
        (ClaimWord::Other, "other"),
    ];

    /// The word `said` by `who` (named in the error when it is none of these).
    pub(crate) fn read(said: &str, who: &str) -> Result<Self, StoreError> {
        Self::ALL
            .iter()
            .find(|(_, spelled)| *spelled == said)
            .map(|(word, _)| *word)
            .ok_or_else(|| StoreError::Other(format!("{who} answered {said:?}").into()))
    }

    /// The refusal a word alone says, for the words that carry nothing more.
    pub(crate) fn plain_refusal(self) -> Option<AcquireOutcome> {
        match self {
            ClaimWord::Started => Some(AcquireOutcome::EventStarted),
            ClaimWord::Limit => Some(AcquireOutcome::LimitExceeded),
            ClaimWord::PassEnded => Some(AcquireOutcome::PassEnded),
            _ => None,
        }
    }

    /// The error for a word `who` should not have answered where it did.
    pub(crate) fn unexpected(self, who: &str) -> StoreError {
        StoreError::Other(format!("{who} answered {:?} here", self.spelled()).into())
    }

    fn spelled(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(word, _)| *word == self)
            .map_or("?", |(_, spelled)| spelled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The words quoted after `marker` in `text` (`outcome := 'held'`, `return {'held'`,
    /// `select …, 'held', …` in the season claim's answer).
    fn quoted_after(text: &str, marker: &str) -> BTreeSet<String> {
        text.match_indices(marker)
            .filter_map(|(at, _)| {
                let rest = &text[at + marker.len()..];
                let end = rest.find('\'')?;
                Some(rest[..end].to_owned())
            })
            .collect()
    }

    #[test]
    fn the_words_are_those_the_claims_answer() {
        let root = env!("CARGO_MANIFEST_DIR");
        let read = |path: &str| std::fs::read_to_string(format!("{root}/{path}")).unwrap();
        let sql = read("sql/claim.sql");
        let mut said = quoted_after(&sql, "outcome := '");
        // The season claim answers its word as a column of each row.
        for line in sql
            .lines()
            .filter(|l| l.trim_start().starts_with("select "))
        {
            if let Some((_, rest)) = line.split_once(", '") {
                let word = rest.split_once('\'').map_or("", |(word, _)| word);
                if !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
                    said.insert(word.to_owned());
                }
            }
        }
        for script in ["hold_acquire.lua", "hold_grow.lua", "prelude.lua"] {
            let lua = read(&format!("scripts/{script}"));
            said.extend(quoted_after(&lua, "return {'"));
            // A refusal naming seats is built up before it is returned.
            said.extend(quoted_after(&lua, "= {'"));
            // The prelude's state check answers its refusal as a second value.
            said.extend(quoted_after(&lua, "nil, {'"));
        }
        let ours: BTreeSet<String> = ClaimWord::ALL
            .iter()
            .map(|(_, spelled)| (*spelled).to_owned())
            .collect();
        assert_eq!(said, ours, "the claims' words and ClaimWord::ALL differ");
        for (word, spelled) in ClaimWord::ALL {
            assert_eq!(ClaimWord::read(spelled, "test").unwrap(), word);
            assert_eq!(word.spelled(), spelled);
        }
        assert!(ClaimWord::read("maybe", "the claim").is_err());
    }
}
