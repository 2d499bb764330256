//! Per-field validation errors, collected so a client learns every problem at once.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// One field that failed validation: a JSON path (`sections[0].rows[2].label`) and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct FieldError {
    /// Path of the offending field in the request body.
    pub field: String,
    /// What is wrong with it, in words a developer can act on.
    pub message: String,
}

/// Every field error found in one request; empty means valid.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValidationErrors(pub Vec<FieldError>);

impl ValidationErrors {
    /// Records that `field` is invalid because of `message`.
    pub fn add(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldError {
            field: field.into(),
            message: message.into(),
        });
    }

    /// Records the error unless `ok` holds; returns `ok` so callers can skip dependent checks.
    pub fn check(
        &mut self,
        ok: bool,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> bool {
        if !ok {
            self.add(field, message);
        }
        ok
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `Ok(value)` when nothing was recorded, else the errors.
    pub fn into_result<T>(self, value: T) -> Result<T, ValidationErrors> {
        if self.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }
}

impl std::fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{}: {}", e.field, e.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationErrors {}

/// Longest display name (of a venue, section, event, ticket type or area), in characters.
pub const MAX_NAME_LEN: usize = 200;

impl ValidationErrors {
    /// Checks a display name: 1–[`MAX_NAME_LEN`] characters, not blank, no control
    /// characters.
    pub fn check_name(&mut self, field: impl Into<String>, name: &str) -> bool {
        self.check(
            is_name(name, MAX_NAME_LEN),
            field,
            "must be 1–200 characters",
        )
    }

    /// Checks an identifier: `[A-Za-z0-9_]{1,max}`, and not one already in `seen` (where it
    /// is then added); `twice` says what a repeat is, e.g. `ticket type "vip" is defined
    /// twice`. A malformed identifier is not checked for repeats.
    pub fn check_identifier<'a>(
        &mut self,
        field: impl Into<String>,
        word: &'a str,
        max: usize,
        seen: &mut std::collections::HashSet<&'a str>,
        twice: impl FnOnce() -> String,
    ) -> bool {
        let field = field.into();
        self.check(
            is_word(word, max),
            field.clone(),
            format!("must match [A-Za-z0-9_]{{1,{max}}}"),
        ) && self.check(seen.insert(word), field, twice())
    }
}

/// True for an identifier of 1–`max` ASCII letters, digits and underscores.
pub fn is_word(text: &str, max: usize) -> bool {
    !text.is_empty()
        && text.len() <= max
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// True for a human-readable name: 1–`max` characters, not blank, no control characters.
pub fn is_name(text: &str, max: usize) -> bool {
    !text.trim().is_empty() && text.chars().count() <= max && !text.chars().any(char::is_control)
}

/// What a sale lets a buyer ask for by number (best available, the waiting list): up to
/// `most` seats, of its `ticket_types`.
#[derive(Clone, Debug)]
pub struct SeatsByNumber<'a> {
    /// The most seats one ask may be for.
    pub most: u32,
    /// Where that limit comes from, as the message names it ("the event's
    /// max_seats_per_user").
    pub most_from: &'a str,
    /// The codes of the sale's ticket types.
    pub ticket_types: Vec<&'a str>,
    /// Whose ticket types they are, as the message names it ("event", "season").
    pub sold_by: &'a str,
}

impl ValidationErrors {
    /// Checks an ask for `quantity` seats (of `ticket_type`, when given) against `sale`:
    /// from 1 to its most, of a type it has. `prefix` heads the fields (`best_available.`
    /// or nothing); `verb` says what the buyer does ("ask for", "wait for"). The one check
    /// of a quantity and ticket type asked for.
    pub fn check_seats_by_number(
        &mut self,
        prefix: &str,
        verb: &str,
        (quantity, ticket_type): (u32, Option<&str>),
        sale: &SeatsByNumber<'_>,
    ) {
        self.check(
            (1..=sale.most).contains(&quantity),
            format!("{prefix}quantity"),
            format!("{verb} 1 to {} seats ({})", sale.most, sale.most_from),
        );
        if let Some(code) = ticket_type {
            self.check(
                sale.ticket_types.contains(&code),
                format!("{prefix}ticket_type"),
                format!("the {} has no ticket type {code:?}", sale.sold_by),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seats_by_number_are_one_to_the_most_of_a_type_the_sale_has() {
        let sale = SeatsByNumber {
            most: 4,
            most_from: "the event's max_seats_per_user",
            ticket_types: vec!["adult", "child"],
            sold_by: "event",
        };
        let check = |quantity, ticket_type| {
            let mut errors = ValidationErrors::default();
            errors.check_seats_by_number(
                "best_available.",
                "ask for",
                (quantity, ticket_type),
                &sale,
            );
            errors
                .0
                .into_iter()
                .map(|e| format!("{}: {}", e.field, e.message))
                .collect::<Vec<_>>()
        };
        assert!(check(1, Some("child")).is_empty());
        assert!(check(4, None).is_empty());
        assert_eq!(
            check(0, Some("senior")),
            [
                "best_available.quantity: ask for 1 to 4 seats (the event's max_seats_per_user)",
                "best_available.ticket_type: the event has no ticket type \"senior\""
            ]
        );
        assert_eq!(check(5, None).len(), 1);
    }
}
