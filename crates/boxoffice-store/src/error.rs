//! Store errors, sorted by what the caller should tell its client.

use std::time::Duration;

/// A failure of a store operation.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The row asked for does not exist.
    #[error("not found")]
    NotFound,
    /// A constraint refused the write: the caller lost a race or broke a rule the schema
    /// enforces.
    #[error("constraint {constraint} refused the write")]
    Conflict {
        /// Which constraint.
        constraint: Constraint,
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
    /// The database is ahead of this server: it must not write there (a newer claim is in
    /// force). Says why and what to run instead.
    #[error("{0}")]
    Ahead(String),
    /// Anything else: a bug or an unexpected database state.
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync + 'static>),
}

/// The constraints callers act on, by what they protect; any other is named as declared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Constraint {
    /// `order_seat_sold`: a seat of a live order is sold once per event.
    SeatSold,
    /// `ticket_order_hold_token_key`: one order per hold token.
    OrderOfToken,
    /// `ga_area_seats_left_check`: a general-admission area never has fewer than 0 places.
    PlacesLeft,
    /// `waitlist_offer_deadline`: a hold offered from the waiting list is bought only
    /// before the offer's deadline, judged by Postgres in the order's transaction
    /// (`sales::orders::write_orders`).
    OfferLapsed,
    /// A primary key (`<table>_pkey`): the row exists already.
    PrimaryKey(String),
    /// Any other constraint, by its name in the migrations.
    Other(String),
}

impl Constraint {
    /// The constraint named `name` in the migrations.
    pub fn named(name: &str) -> Self {
        match name {
            "order_seat_sold" => Constraint::SeatSold,
            "ticket_order_hold_token_key" => Constraint::OrderOfToken,
            "ga_area_seats_left_check" => Constraint::PlacesLeft,
            "waitlist_offer_deadline" => Constraint::OfferLapsed,
            pkey if pkey.ends_with("_pkey") => Constraint::PrimaryKey(pkey.to_owned()),
            other => Constraint::Other(other.to_owned()),
        }
    }

    /// Its name in the migrations.
    pub fn name(&self) -> &str {
        match self {
            Constraint::SeatSold => "order_seat_sold",
            Constraint::OrderOfToken => "ticket_order_hold_token_key",
            Constraint::PlacesLeft => "ga_area_seats_left_check",
            Constraint::OfferLapsed => "waitlist_offer_deadline",
            Constraint::PrimaryKey(name) | Constraint::Other(name) => name,
        }
    }
}

impl std::fmt::Display for Constraint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
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
/// or statement timeout (55P03, 57014), a write on a node that became read-only (25006).
fn is_unavailable_state(code: &str) -> bool {
    code.starts_with("08")
        || code.starts_with("53")
        || matches!(
            code,
            "57P01" | "57P02" | "57P03" | "55P03" | "57014" | "25006"
        )
}

/// Whether `e` says the database could not serve the statement at all (no connection, the
/// server shutting down or out of resources), as opposed to something the statement met
/// while it ran (a timeout, a lock, a constraint).
pub(crate) fn is_connection_failure(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|code| {
            code.starts_with("08") || code.starts_with("53") || code.starts_with("57P0")
        }),
        _ => false,
    }
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
                        constraint: Constraint::named(constraint),
                    }
                } else {
                    StoreError::Other(Box::new(sqlx::Error::Database(db)))
                }
            }
            other => StoreError::Other(Box::new(other)),
        }
    }
}

/// How often a transaction that Postgres aborted as a deadlock or serialization
/// failure is tried again before the request is answered as contended.
const CONTENTION_ATTEMPTS: usize = 3;

/// Runs `attempt` again when Postgres aborted it as a deadlock or serialization failure:
/// the aborted transaction changed nothing, so trying again is safe.
pub(crate) async fn retry_contention<T, F, Fut>(mut attempt: F) -> Result<T, StoreError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, StoreError>>,
{
    let mut tries = 1;
    loop {
        match attempt().await {
            Err(StoreError::Contention) if tries < CONTENTION_ATTEMPTS => tries += 1,
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constraints_are_known_by_what_they_protect_and_keep_their_names() {
        for name in [
            "order_seat_sold",
            "ticket_order_hold_token_key",
            "ga_area_seats_left_check",
            "venue_pkey",
            "seat_allocation_seat_fkey",
        ] {
            assert_eq!(Constraint::named(name).name(), name);
        }
        assert_eq!(Constraint::named("order_seat_sold"), Constraint::SeatSold);
        assert!(matches!(
            Constraint::named("event_pkey"),
            Constraint::PrimaryKey(_)
        ));
        assert!(matches!(
            Constraint::named("event_venue_fkey"),
            Constraint::Other(_)
        ));
    }
}
