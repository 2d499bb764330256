//! Reading the audit log: an organization's entries newest first, filtered, a page at a
//! time. Entries are written by the store functions that make each change, in their
//! transactions (`boxoffice_store::journal::audit::write`); nothing changes or deletes one.

use boxoffice_core::ids::OrganizationId;
pub use boxoffice_store::journal::audit::{Actor, By, Entry, Filters};

use crate::{Error, Services};

/// Most entries one page holds.
pub const MAX_PAGE: u32 = 500;

/// A page of the organization's entries, newest first, at most `limit` (1–500), and the
/// cursor of the next page when there may be one.
pub async fn list(
    services: &Services,
    organization: OrganizationId,
    filters: &Filters,
    limit: u32,
) -> Result<(Vec<Entry>, Option<String>), Error> {
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(Error::invalid("limit", "must be 1–500"));
    }
    let entries =
        boxoffice_store::journal::audit::list(&services.pool, organization, filters, limit).await?;
    let next = (entries.len() == limit as usize)
        .then(|| entries.last().map(|e| e.seq.to_string()))
        .flatten();
    Ok((entries, next))
}

/// The page a cursor names (the `seq` of the last entry before it); `None` for one that is
/// not a cursor this log gave.
pub fn cursor(text: &str) -> Option<i64> {
    text.parse::<i64>().ok().filter(|seq| *seq > 0)
}
