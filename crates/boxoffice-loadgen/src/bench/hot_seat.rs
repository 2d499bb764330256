//! `hot-seat --buyers N [--connected]`: N buyers released together on one seat; exactly one
//! must win. Each buyer's request opens a connection of its own, unless `--connected`: then
//! every buyer has first loaded the event's availability (as the seat-map page does), all
//! at once, so each is released with a connection already open. A buyer refused for now
//! (`503` with a turn, the server's adaptive limit) asks again at its turn, as the page
//! does: what is checked is each buyer's final answer, and the turns kept are reported.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::{checks, release_together, status_of, Check, Layout, Report, Stats, Target};

/// Runs the scenario and reports it.
pub async fn run(target: &Target, buyers: usize, connected: bool) -> anyhow::Result<Report> {
    let layout = Layout::of(1, 60);
    let event = target.seated_event(&layout).await?;
    if connected {
        let loads = (0..buyers).map(|_| target.api.availability(event));
        for load in futures::future::join_all(loads).await {
            load?;
        }
    }
    let seat = layout.seat_id(0);
    let asked = Arc::new(AtomicU64::new(0));
    let calls = (0..buyers)
        .map(|b| {
            let (api, token, seat) = (
                target.api.clone(),
                target.buyer(&format!("hot-{b}")),
                seat.clone(),
            );
            let asked = asked.clone();
            async move {
                let seats = [seat.as_str()];
                boxoffice_client::turns::kept(|| {
                    asked.fetch_add(1, Ordering::Relaxed);
                    api.hold_seats(event, &token, &seats)
                })
                .await
            }
        })
        .collect();
    let started = std::time::Instant::now();
    let answers = release_together(target, calls).await;
    let elapsed = started.elapsed();
    let mut stats = Stats::default();
    for (answer, latency) in &answers {
        stats.record(status_of(answer, 201), *latency);
    }
    let mut report = Report::new("hot-seat");
    report.parameter("buyers", buyers);
    if connected {
        report.parameter("connected", true);
    }
    report.elapsed_seconds = elapsed.as_secs_f64();
    report.operations.push(stats.report("hold", elapsed));
    let turns = asked.load(Ordering::Relaxed).saturating_sub(buyers as u64);
    report.figure("turns_kept", turns as f64);
    let (won, refused) = (stats.of(201), stats.of(409));
    report.checks.push(Check::new(
        "exactly one buyer holds the seat",
        won == 1 && refused == buyers as u64 - 1,
        format!("{won} holds, {refused} refusals (409) of {buyers}"),
    ));
    let held = target.api.availability(event).await?.counts.held;
    report.checks.push(Check::new(
        "the server shows the seat held once",
        held == 1,
        format!("{held} seats held"),
    ));
    report
        .checks
        .push(checks::seats_add_up(target, event, layout.seats()).await?);
    Ok(report)
}
