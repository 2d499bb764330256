//! `best --buyers N --quantity Q`: N buyers released together asking for the best Q seats,
//! round after round: the hot-seat problem of best available, where every buyer wants the
//! same best seats at once. No seat may go to two buyers; every buyer gets seats while
//! enough are left.

use boxoffice_client::turns::kept;
use std::collections::HashSet;

use super::{checks, release_together, status_of, Check, Layout, Report, Stats, Target};

/// What to run.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// Buyers per round.
    pub buyers: usize,
    /// Seats each asks for.
    pub quantity: u32,
    /// Seats in the event.
    pub seats: usize,
    /// Rounds, each of `buyers` new buyers.
    pub rounds: usize,
}

/// Runs the scenario and reports it.
pub async fn run(target: &Target, params: Params) -> anyhow::Result<Report> {
    let layout = Layout::of(params.seats, 600);
    let event = target.seated_event(&layout).await?;
    let mut stats = Stats::default();
    let mut held = HashSet::new();
    let mut twice = Vec::new();
    let mut adjacent = 0u64;
    let mut elapsed = std::time::Duration::ZERO;
    for round in 0..params.rounds {
        let calls = (0..params.buyers)
            .map(|b| {
                let (api, token) = (
                    target.api.clone(),
                    target.buyer(&format!("best-{round}-{b}")),
                );
                let quantity = params.quantity;
                // A refusal for now is asked again at its turn, as the page does.
                async move { kept(|| api.hold_best_available(event, &token, quantity, None)).await }
            })
            .collect();
        let started = std::time::Instant::now();
        let answers = release_together(target, calls).await;
        elapsed += started.elapsed();
        for (answer, latency) in &answers {
            stats.record(status_of(answer, 201), *latency);
            if let Ok(hold) = answer {
                adjacent += u64::from(hold.adjacent == Some(true));
                for seat in &hold.seats {
                    if !held.insert(seat.id.clone()) {
                        twice.push(seat.id.clone());
                    }
                }
            }
        }
    }
    let mut report = Report::new("best");
    report
        .parameter("buyers", params.buyers)
        .parameter("quantity", params.quantity)
        .parameter("seats", layout.seats())
        .parameter("rounds", params.rounds);
    report.elapsed_seconds = elapsed.as_secs_f64();
    report.operations.push(stats.report("hold (best)", elapsed));
    let granted = stats.of(201);
    report
        .figure(
            "holds_granted_per_second",
            granted as f64 / elapsed.as_secs_f64(),
        )
        .figure("side_by_side", adjacent as f64);
    let asked = (params.buyers * params.rounds) as u64;
    let enough = params.seats as u64 >= asked * u64::from(params.quantity);
    report.checks.push(Check::new(
        "no seat held twice",
        twice.is_empty(),
        format!("{} seats held; held twice: {twice:?}", held.len()),
    ));
    report.checks.push(Check::new(
        "every buyer gets seats while enough are left",
        !enough || granted == asked,
        format!(
            "{granted} of {asked} buyers got seats ({} seats for {} asked)",
            params.seats,
            asked * u64::from(params.quantity)
        ),
    ));
    let server_held = target.api.availability(event).await?.counts.held as usize;
    report.checks.push(Check::new(
        "the server holds exactly the seats granted",
        server_held == held.len(),
        format!("{server_held} held by the server, {} granted", held.len()),
    ));
    report
        .checks
        .push(checks::seats_add_up(target, event, layout.seats()).await?);
    Ok(report)
}
