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
