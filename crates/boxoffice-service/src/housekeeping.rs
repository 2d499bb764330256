//! What every server does now and then, whatever the requests: recording unpaid orders
//! past their deadline and sweeping rows past their retention. (The waiting list's own
//! chores are [`crate::waitlist::pass_on_lapsed`] and [`crate::waitlist::keep_lapsing`].)
//! The server's workers call these on their intervals; each skips the rows another
//! instance is doing.

use boxoffice_store::pg::sweep::{Retention, Swept};

use crate::{Error, Services};

/// Records unpaid orders past their deadline as expired (each with `order.expired`);
/// answers how many. Their seats went back on sale at the deadline already.
pub async fn expire_unpaid(state: &Services) -> Result<u64, Error> {
    Ok(boxoffice_store::sales::orders::expire_pending(&state.pool).await?)
}

/// Deletes idempotency answers and delivered outbox rows past `retention`.
pub async fn sweep(state: &Services, retention: Retention) -> Result<Swept, Error> {
    Ok(boxoffice_store::pg::sweep::sweep(&state.pool, retention).await?)
}
