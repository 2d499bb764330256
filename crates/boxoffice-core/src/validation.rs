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
