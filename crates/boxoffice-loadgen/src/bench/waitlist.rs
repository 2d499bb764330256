//! `waitlist --orders N`: an event sold out in N one-seat orders, N buyers waiting on its
//! waiting list, and every order cancelled at once: each cancellation offers its seat, in
//! its own transaction, to the next buyer in line. Offers made a second, and the line's
//! promises checked: every waiting buyer got one seat, no seat read available meanwhile.

use boxoffice_client::turns::kept;
use boxoffice_client::Error;
use uuid::Uuid;

use super::{release_together, status_of, Check, Layout, Report, Stats, Target};

/// Runs the scenario and reports it.
pub async fn run(target: &Target, orders: usize) -> anyhow::Result<Report> {
    let layout = Layout::of(orders, 600);
    let event = target.seated_event(&layout).await?;
    let seats = layout.seats();
    // Sold out: one seat an order, each its own buyer's.
    let sales = (0..seats)
        .map(|i| {
            let (api, token) = (target.api.clone(), target.buyer(&format!("owner-{i}")));
            let seat = layout.seat_id(i);
            async move {
                // Refusals for now are asked again at their turns, as the page does.
                let seats = [seat.as_str()];
                let hold = kept(|| api.hold_seats(event, &token, &seats)).await?;
                let order = kept(|| api.checkout(event, &token, hold.hold_token)).await?;
                Ok::<_, Error>((token, order.order.order_id))
            }
        })
        .collect();
    let mut owners = Vec::with_capacity(seats);
    for (sold, _) in release_together(target, sales).await {
        owners.push(sold?);
    }
    // The line, one seat each.
    let joins = (0..seats)
        .map(|i| {
            let (api, token) = (target.api.clone(), target.buyer(&format!("waiter-{i}")));
            async move {
                let entry = api.join_waitlist(event, &token, 1, None).await?;
                Ok::<_, Error>((token, entry.entry_id))
            }
        })
        .collect();
    let mut waiters: Vec<(String, Uuid)> = Vec::with_capacity(seats);
    for (joined, _) in release_together(target, joins).await {
        waiters.push(joined?);
    }

    let cancels = owners
        .into_iter()
        .map(|(token, order)| {
            let api = target.api.clone();
            async move { status_of(&api.cancel_order(order, &token).await, 200) }
        })
        .collect();
    let started = std::time::Instant::now();
    let answers = release_together(target, cancels).await;
    let elapsed = started.elapsed();
    let mut stats = Stats::default();
    for (status, latency) in &answers {
        stats.record(*status, *latency);
    }

    let mut offered = 0;
    for (token, entry) in &waiters {
        let entry = target.api.waitlist_entry(event, token, *entry).await?;
        if entry.offer.is_some_and(|o| o.seats.len() == 1) {
            offered += 1;
        }
    }
    let counts = target.api.availability(event).await?.counts;
    let mut report = Report::new("waitlist");
    report.parameter("orders", seats);
    report.elapsed_seconds = elapsed.as_secs_f64();
    report.operations.push(stats.report("cancel", elapsed));
    report
        .figure("offers_made", offered as f64)
        .figure("offers_per_second", offered as f64 / elapsed.as_secs_f64());
    report.checks.push(Check::new(
        "every cancellation answered 200",
        stats.of(200) == seats as u64,
        format!("{} of {seats}", stats.of(200)),
    ));
    report.checks.push(Check::new(
        "every waiting buyer was offered one seat",
        offered == seats,
        format!("{offered} of {seats}"),
    ));
    report.checks.push(Check::new(
        "every returned seat is held by its offer, none available",
        counts.held as usize == seats && counts.available == 0,
        format!("{} held, {} available", counts.held, counts.available),
    ));
    Ok(report)
}
