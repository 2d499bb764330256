//! The postgres store's checkouts together ([`crate::sales::together::Checkouts`]'s
//! batch): one transaction takes every hold's rows ([`super::take_rows`], as a checkout
//! alone takes them) and writes the orders with the one order writer
//! ([`crate::sales::together::place`]), then one commit.

use boxoffice_core::hold::{ClaimedSeat, Order};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use super::sale::{take_rows, Rows};
use crate::lanes::{copy, Answers};
use crate::sales::orders::Placement;
use crate::sales::together::{place, Checkout, Failed, Together};

/// Commits a batch of checkouts, each answered with its order, `Again` (made alone), or the
/// store's failure when the database could not serve the batch at all.
pub(super) fn batch(pool: PgPool, checkouts: Vec<Checkout>) -> Answers<Together> {
    Box::pin(async move {
        let batch: Vec<&Checkout> = checkouts.iter().collect();
        match commit(&pool, &batch).await {
            Ok(answers) => answers.into_iter().map(Ok).collect(),
            // The database could not serve the batch at all: alone, each would fare the
            // same.
            Err(Failed::Store(error)) => batch.iter().map(|_| Err(copy(&error))).collect(),
            Err(Failed::Batch) => batch.iter().map(|_| Ok(Together::Again)).collect(),
        }
    })
}

/// Commits `checkouts` in one transaction: each answered with its order, or `Again` when
/// nothing was written for it.
async fn commit(pool: &PgPool, checkouts: &[&Checkout]) -> Result<Vec<Together>, Failed> {
    let mut tx = pool.begin().await?;
    let answers = write(&mut tx, checkouts).await?;
    tx.commit().await?;
    Ok(answers)
}

async fn write(tx: &mut PgConnection, checkouts: &[&Checkout]) -> Result<Vec<Together>, Failed> {
    // A hold asked for twice in one batch goes in once; the repeat is made alone, which
    // finds the order.
    let mut seen = std::collections::HashSet::new();
    let first: Vec<bool> = checkouts
        .iter()
        .map(|c| seen.insert((c.event, c.token)))
        .collect();
    let order_ids: Vec<Uuid> = checkouts.iter().map(|_| Uuid::new_v4()).collect();
    let distinct: Vec<usize> = (0..checkouts.len()).filter(|&i| first[i]).collect();
    // The rows of every hold, as a checkout alone takes them: the postgres store's one
    // statement for it.
    let takes: Vec<(&Checkout, Uuid)> = distinct
        .iter()
        .map(|&i| (checkouts[i], order_ids[i]))
        .collect();
    let mut seats: Vec<Vec<ClaimedSeat>> = checkouts.iter().map(|_| Vec::new()).collect();
    let mut passes: Vec<Option<Uuid>> = checkouts.iter().map(|_| None).collect();
    for (&i, rows) in distinct.iter().zip(take_rows(tx, &takes).await?) {
        match rows {
            Rows::Taken { seats: taken, pass } => {
                seats[i] = taken;
                passes[i] = pass;
            }
            Rows::None => {}
            // A hold taken with a row left that was not live is made alone, which refuses
            // it, so the batch does not happen.
            Rows::Partly => return Err(Failed::Batch),
        }
    }
    let placing: Vec<usize> = (0..checkouts.len())
        .filter(|&i| !seats[i].is_empty())
        .collect();
    if placing.is_empty() {
        return Ok(checkouts.iter().map(|_| Together::Again).collect());
    }
    let placements: Vec<Placement> = placing
        .iter()
        .map(|&i| {
            let c = checkouts[i];
            Placement {
                event: c.event,
                token: c.token,
                user: c.user.clone(),
                order_id: order_ids[i],
                window_seconds: c.window_seconds,
                seats: std::mem::take(&mut seats[i]),
                pass: passes[i],
                season: None,
            }
        })
        .collect();
    let mut placed = place(tx, &placements.iter().collect::<Vec<_>>())
        .await?
        .into_iter();
    let mut orders: Vec<Option<Order>> = checkouts.iter().map(|_| None).collect();
    for &i in &placing {
        orders[i] = placed.next();
    }
    Ok(orders
        .into_iter()
        .map(|o| o.map_or(Together::Again, Together::Ordered))
        .collect())
}
