//! The invariants, checked through the API after a run.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::time::Duration;

use boxoffice_client::Error;
use boxoffice_core::ids::EventId;

use super::{Check, Target};

/// One read the checks make, asked again while its answer was lost on the way (no answer,
/// or a balancer's or a down store's 5xx): an instance killed under the run may take a
/// read in flight with it, and the checks are of what the servers say once it is over.
async fn read<T, Fut>(mut call: impl FnMut() -> Fut) -> anyhow::Result<T>
where
    Fut: Future<Output = boxoffice_client::Result<T>>,
{
    let lost = |e: &Error| match e {
        Error::Transport(_) => true,
        Error::Problem(p) => p.status >= 500,
        Error::Unexpected { status, .. } => status.is_server_error(),
        Error::Stream(_) => false,
    };
    for _ in 0..5 {
        match call().await {
            Err(e) if lost(&e) => tokio::time::sleep(Duration::from_millis(500)).await,
            answer => return Ok(answer?),
        }
    }
    Ok(call().await?)
}

/// Every seat in at most one of `orders` (the seat ids of each order the run made), and
/// every one of them sold now.
pub async fn no_seat_sold_twice(
    target: &Target,
    event: EventId,
    orders: &[Vec<String>],
) -> anyhow::Result<Check> {
    let mut owners: HashMap<&str, usize> = HashMap::new();
    let mut twice = Vec::new();
    for seats in orders {
        for seat in seats {
            *owners.entry(seat).or_default() += 1;
            if owners[seat.as_str()] == 2 {
                twice.push(seat.clone());
            }
        }
    }
    // A server reading seat maps from a replica may show the last orders a moment late
    // (at most its lag bound, a second by default): read again until they show, for a while.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    let sold: HashSet<String> = loop {
        let seats = read(|| target.api.seats(event)).await?;
        let sold: HashSet<String> = seats
            .seats
            .into_iter()
            .filter(|s| s.status == boxoffice_core::availability::SeatStatus::Sold)
            .map(|s| s.seat.id)
            .collect();
        if owners.keys().all(|s| sold.contains(*s)) || std::time::Instant::now() > deadline {
            break sold;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let unsold: Vec<&str> = owners
        .keys()
        .copied()
        .filter(|s| !sold.contains(*s))
        .collect();
    Ok(Check::new(
        "no seat sold twice",
        twice.is_empty() && unsold.is_empty() && sold.len() == owners.len(),
        format!(
            "{} orders of {} seats; {} seats sold by the server; in two orders: {twice:?}; ordered but not sold: {unsold:?}",
            orders.len(),
            owners.len(),
            sold.len()
        ),
    ))
}

/// Sold + held + available + not for sale = every seat of the event.
pub async fn seats_add_up(target: &Target, event: EventId, seats: usize) -> anyhow::Result<Check> {
    let c = read(|| target.api.availability(event)).await?.counts;
    let sum = (c.sold + c.held + c.available + c.not_for_sale) as usize;
    Ok(Check::new(
        "sold + held + available + not for sale = all seats",
        sum == seats,
        format!(
            "{} sold + {} held + {} available + {} not for sale = {sum} of {seats}",
            c.sold, c.held, c.available, c.not_for_sale
        ),
    ))
}

/// What must hold of a seated event once a run's holds are done: the seats add up, and
/// after the hold TTL (and a second) no seat is held.
pub async fn after_holds(
    target: &Target,
    event: EventId,
    layout: &super::Layout,
) -> anyhow::Result<Vec<Check>> {
    let ttl = Duration::from_secs(u64::from(layout.hold_ttl_seconds) + 1);
    Ok(vec![
        seats_add_up(target, event, layout.seats()).await?,
        no_stranded_holds(target, event, ttl).await?,
    ])
}

/// Once every hold's lifetime has passed (`wait`), no seat is held: no hold outlived its
/// expiry.
pub async fn no_stranded_holds(
    target: &Target,
    event: EventId,
    wait: Duration,
) -> anyhow::Result<Check> {
    tokio::time::sleep(wait).await;
    let held = read(|| target.api.availability(event)).await?.counts.held;
    Ok(Check::new(
        "no stranded holds once the TTL has passed",
        held == 0,
        format!(
            "{held} seats held {:.0} s after the last hold",
            wait.as_secs_f64()
        ),
    ))
}

/// General admission: places booked by the run + places left = capacity, per area.
pub async fn ga_adds_up(
    target: &Target,
    event: EventId,
    area: &str,
    booked: u64,
) -> anyhow::Result<Check> {
    let availability = read(|| target.api.availability(event)).await?;
    let ga = availability
        .ga
        .iter()
        .find(|a| a.code == area)
        .ok_or_else(|| anyhow::anyhow!("the event has no area {area}"))?;
    let left = u64::from(ga.left);
    let capacity = u64::from(ga.capacity);
    Ok(Check::new(
        "GA booked + left = capacity",
        booked + left == capacity,
        format!(
            "{booked} booked + {left} left = {} of {capacity}",
            booked + left
        ),
    ))
}
