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

            /// Parses an id from its text form; `None` for anything that is not a UUID.
            pub fn parse(text: &str) -> Option<Self> {
                Uuid::parse_str(text).ok().map(Self)
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

uuid_id!(
    /// Identifies a venue (its seat map).
    VenueId
);
uuid_id!(
    /// Identifies an event on a venue.
    EventId
);

/// Identifies a buyer: the `sub` claim of their token, 1–128 characters.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct UserId(String);

impl UserId {
    /// The longest user id a token may carry.
    pub const MAX_LEN: usize = 128;

    /// Accepts a user id of 1–128 characters; `None` otherwise.
    pub fn parse(text: &str) -> Option<Self> {
        let len = text.chars().count();
        (1..=Self::MAX_LEN)
            .contains(&len)
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
    }

    #[test]
    fn user_ids_are_one_to_128_characters() {
        assert!(UserId::parse("").is_none());
        assert!(UserId::parse(&"é".repeat(128)).is_some());
        assert!(UserId::parse(&"u".repeat(129)).is_none());
    }
}
