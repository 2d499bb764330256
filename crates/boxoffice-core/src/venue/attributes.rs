//! What a seat is beyond where it is: the venue's price zone, a wheelchair space, a
//! companion seat, a restricted view. Given on a seat, or on its whole row (a seat's own
//! win).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::validation::{is_name, ValidationErrors};

/// Longest category name, in characters.
pub const MAX_CATEGORY_LEN: usize = 64;

/// A seat's attributes, as the seat map carries them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SeatAttributes {
    /// The venue's own price zone, such as "Front stalls".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// A wheelchair space.
    #[serde(default, skip_serializing_if = "is_false")]
    pub accessible: bool,
    /// A companion seat beside a wheelchair space.
    #[serde(default, skip_serializing_if = "is_false")]
    pub companion: bool,
    /// The view of the stage is partly blocked.
    #[serde(default, skip_serializing_if = "is_false")]
    pub restricted_view: bool,
}

fn is_false(b: &bool) -> bool {
    !b
}

/// Attributes as a row or a seat of a specification gives them: each one optional.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Given<'a> {
    pub category: Option<&'a str>,
    pub accessible: Option<bool>,
    pub companion: Option<bool>,
    pub restricted_view: Option<bool>,
}

impl Given<'_> {
    /// Records what is wrong with them under `at`.
    pub(super) fn check(&self, at: &str, errors: &mut ValidationErrors) {
        if let Some(category) = self.category {
            errors.check(
                is_name(category, MAX_CATEGORY_LEN),
                format!("{at}.category"),
                "must be 1–64 characters",
            );
        }
    }

    /// A seat's attributes: its own (`self`) where given, else its row's.
    pub(super) fn over(&self, row: &Given<'_>) -> SeatAttributes {
        SeatAttributes {
            category: self.category.or(row.category).map(str::to_owned),
            accessible: self.accessible.or(row.accessible).unwrap_or(false),
            companion: self.companion.or(row.companion).unwrap_or(false),
            restricted_view: self
                .restricted_view
                .or(row.restricted_view)
                .unwrap_or(false),
        }
    }
}
