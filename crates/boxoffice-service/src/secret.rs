//! Secrets that never show up in logs.

use std::fmt;

use rand::distr::{Alphanumeric, SampleString};

/// A secret that never shows up in logs or `Debug` output.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// A random 32-character secret.
    pub fn random() -> Self {
        Self(Alphanumeric.sample_string(&mut rand::rng(), 32))
    }

    /// The secret itself; call only where it is used.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}
