//! Typed identifiers, so a venue id can never be passed where an event id is expected.

use std::fmt;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

macro_rules! uuid_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema,
        )]
        #[serde(transparent)]
        pub struct $name(pub Uuid);

        impl $name {
            /// A new random id.
            pub fn new() -> Self {
                Self(Uuid::new_v4())
            }

            /// Parses an id from its canonical text form (36 characters, hyphenated, either
            /// case); `None` for anything else, including the braced, `urn:uuid:` and
            /// 32-digit spellings, so one id has one spelling in every path.
            pub fn parse(text: &str) -> Option<Self> {
                parse_canonical_uuid(text).map(Self)
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl From<Uuid> for $name {
            fn from(id: Uuid) -> Self {
                Self(id)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

/// A UUID in its canonical hyphenated form, `8-4-4-4-12` hex digits (either case); every
/// id in a path is read with this.
pub fn parse_canonical_uuid(text: &str) -> Option<Uuid> {
    let canonical = text.len() == 36
        && text
            .bytes()
            .enumerate()
            .all(|(i, b)| matches!(i, 8 | 13 | 18 | 23) == (b == b'-'));
    canonical.then(|| Uuid::try_parse(text).ok()).flatten()
}

uuid_id!(
    /// Identifies a venue (its seat map).
    VenueId
);
uuid_id!(
    /// Identifies an event on a venue.
    EventId
);
uuid_id!(
    /// Identifies a season: events of one venue sold together, the same seat for each.
    SeasonId
);
uuid_id!(
    /// Identifies an organization: an organizer whose venues, events and seasons, and
    /// everything sold in them, are theirs alone.
    OrganizationId
);
uuid_id!(
    /// Identifies a key staff and servers call with (never the key itself).
    KeyId
);

impl OrganizationId {
    /// The organization `default`: everything from before organizations, what
    /// `BOXOFFICE_JWT_SECRET`'s buyers belong to, and where a platform key creates when the
    /// body names no organization.
    pub const DEFAULT: Self = Self(Uuid::from_u128(1));
}

/// Identifies a buyer: the `sub` claim of their token, 1–128 characters.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct UserId(String);

impl UserId {
    /// The longest user id a token may carry.
    pub const MAX_LEN: usize = 128;

    /// Accepts a user id of 1–128 characters, none of them a control character (a NUL,
    /// say, which Postgres cannot store), neither starting nor ending with white space (a
    /// `sub` of one space, or `"ann "` beside `"ann"`, would be a user no one can tell
    /// apart from another on a page or in a log); `None` otherwise.
    pub fn parse(text: &str) -> Option<Self> {
        let len = text.chars().count();
        ((1..=Self::MAX_LEN).contains(&len)
            && !text.chars().any(char::is_control)
            && text.trim() == text)
            .then(|| Self(text.to_owned()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for UserId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_ids_parse_only_uuids() {
        let id = EventId::new();
        assert_eq!(EventId::parse(&id.to_string()), Some(id));
        assert_eq!(EventId::parse("stalls-A-1"), None);
        assert_eq!(
            EventId::parse(&id.to_string().to_uppercase()),
            Some(id),
            "hex digits in either case"
        );
        for other in [
            format!("urn:uuid:{id}"),
            format!("{{{id}}}"),
            id.0.simple().to_string(),
            format!("{id} "),
        ] {
            assert_eq!(EventId::parse(&other), None, "{other}");
        }
    }

    #[test]
    fn user_ids_have_no_control_characters() {
        assert!(UserId::parse("ann\0").is_none());
        assert!(UserId::parse("ann\n").is_none());
        assert!(UserId::parse("ann\u{7f}").is_none());
        assert!(UserId::parse("ann ñ").is_some());
    }

    #[test]
    fn user_ids_neither_start_nor_end_with_white_space() {
        assert!(UserId::parse(" ").is_none());
        assert!(UserId::parse("ann ").is_none());
        assert!(UserId::parse("\u{a0}ann").is_none());
        assert!(UserId::parse("ann lee").is_some());
    }

    #[test]
    fn user_ids_are_one_to_128_characters() {
        assert!(UserId::parse("").is_none());
        assert!(UserId::parse(&"é".repeat(128)).is_some());
        assert!(UserId::parse(&"u".repeat(129)).is_none());
    }
}
