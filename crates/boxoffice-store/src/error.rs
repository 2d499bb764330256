//! Store errors, sorted by what the caller should tell its client.

use std::time::Duration;

/// A failure of a store operation.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The row asked for does not exist.
    #[error("not found")]
    NotFound,
    /// A named constraint refused the write: the caller lost a race or broke a rule the
    /// schema enforces.
    #[error("constraint {constraint} refused the write")]
    Conflict {
        /// The constraint's name, as declared in the migrations.
        constraint: String,
    },
    /// Postgres aborted the transaction as a deadlock or serialization failure; it changed
    /// nothing and may be tried again.
    #[error("transaction aborted by contention")]
    Contention,
    /// The store cannot be reached or did not answer in time; retrying later may succeed.
    #[error("store unavailable: {reason}")]
    Unavailable {
        /// What went wrong, for the logs.
        reason: String,
        /// How long a client should wait before retrying.
        retry_after: Duration,
    },
    /// Anything else: a bug or an unexpected database state.
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync + 'static>),
}

/// A user id read back from a store, which wrote only valid ones.
pub(crate) fn stored_user_id(text: &str) -> Result<boxoffice_core::ids::UserId, StoreError> {
    boxoffice_core::ids::UserId::parse(text)
        .ok_or_else(|| StoreError::Other(format!("stored user id {text:?} is invalid").into()))
}

impl StoreError {
    /// An unavailable store with the default retry hint.
    pub fn unavailable(reason: impl Into<String>) -> Self {
        StoreError::Unavailable {
            reason: reason.into(),
            retry_after: Duration::from_secs(1),
        }
    }
}

/// SQLSTATEs that mean "the database is not able to serve this right now" rather than
/// "this request is wrong": connection exceptions (class 08), shutdown and start-up
/// (57P01–57P03), too many connections and other resource exhaustion (class 53), a lock
/// or statement timeout (55P03, 57014).
fn is_unavailable_state(code: &str) -> bool {
    code.starts_with("08")
        || code.starts_with("53")
        || matches!(code, "57P01" | "57P02" | "57P03" | "55P03" | "57014")
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        match e {
            sqlx::Error::RowNotFound => StoreError::NotFound,
            sqlx::Error::PoolTimedOut => {
                StoreError::unavailable("timed out waiting for a database connection")
            }
            sqlx::Error::PoolClosed => StoreError::unavailable("the database pool is closed"),
            sqlx::Error::Io(e) => StoreError::unavailable(format!("database connection: {e}")),
            sqlx::Error::Tls(e) => StoreError::unavailable(format!("database connection: {e}")),
            sqlx::Error::WorkerCrashed => {
                StoreError::unavailable("database connection worker crashed")
            }
            sqlx::Error::Database(db) => {
                let code = db.code().map(|c| c.into_owned()).unwrap_or_default();
                if matches!(code.as_str(), "40001" | "40P01") {
                    StoreError::Contention
                } else if is_unavailable_state(&code) {
                    StoreError::unavailable(format!("database: {} ({code})", db.message()))
                } else if let (Some(constraint), true) = (db.constraint(), code.starts_with("23")) {
                    StoreError::Conflict {
                        constraint: constraint.to_owned(),
                    }
                } else {
                    StoreError::Other(Box::new(sqlx::Error::Database(db)))
                }
            }
            other => StoreError::Other(Box::new(other)),
        }
    }
}
