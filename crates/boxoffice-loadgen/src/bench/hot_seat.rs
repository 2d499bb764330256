//! `hot-seat --buyers N [--connected] [--rounds R] [--first-answers]`: N buyers released
//! together on one seat; exactly one must win. Each buyer's request opens a connection of
//! its own, unless `--connected`: then every buyer has first loaded the event's availability
//! (as the seat-map page does), all at once, so each is released with a connection already
//! open. A buyer refused for now (`503` with a turn, the server's adaptive limit) asks again
//! at its turn, as the page does: what is checked is each buyer's final answer, and the
//! turns kept are reported. With `--first-answers` no turn is kept and the first answer is
//! checked: docs/api.md promises one `201` and N−1 `409` on one seat, since a crowd on one seat
//! never reaches the limit. `--rounds R` repeats the crowd on R events, each of its own.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::{checks, release_together, status_of, Check, Layout, Report, Stats, Target};

/// How the crowd is sent.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// Buyers in each crowd.
    pub buyers: usize,
    /// Every buyer loads the event first, so each is released with a connection open.
    pub connected: bool,
    /// Crowds, each on an event of its own.
    pub rounds: usize,
    /// Check each buyer's first answer: a turn (`503`) is not kept but counted as a failure.
    pub first_answers: bool,
}

/// Runs the scenario and reports it.
pub async fn run(target: &Target, params: Params) -> anyhow::Result<Report> {
    let mut report = Report::new("hot-seat");
    report.parameter("buyers", params.buyers);
    if params.connected {
        report.parameter("connected", true);
    }
    if params.rounds > 1 {
        report.parameter("rounds", params.rounds);
    }
    if params.first_answers {
        report.parameter("first_answers", true);
    }
    let mut stats = Stats::default();
    let mut turns = 0;
    let mut elapsed = std::time::Duration::ZERO;
    for round in 0..params.rounds.max(1) {
        let crowd = crowd(target, params, &mut stats).await?;
        turns += crowd.turns;
        elapsed += crowd.elapsed;
        let prefix = if params.rounds > 1 {
            format!("round {}: ", round + 1)
        } else {
            String::new()
        };
        for mut check in crowd.checks {
            check.name = format!("{prefix}{}", check.name);
            report.checks.push(check);
        }
    }
    report.elapsed_seconds = elapsed.as_secs_f64();
    report.operations.push(stats.report("hold", elapsed));
    report.figure("turns_kept", turns as f64);
    Ok(report)
}

/// One crowd's answers and checks.
struct Crowd {
    elapsed: std::time::Duration,
    turns: u64,
    checks: Vec<Check>,
}

/// Sends one crowd on a seat of a new event, recording its answers in `stats`.
async fn crowd(target: &Target, params: Params, stats: &mut Stats) -> anyhow::Result<Crowd> {
    let buyers = params.buyers;
    let layout = Layout::of(1, 60);
    let event = target.seated_event(&layout).await?;
    if params.connected {
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
                target.buyer(&format!("hot-{event}-{b}")),
                seat.clone(),
            );
            let asked = asked.clone();
            async move {
                let seats = [seat.as_str()];
                let hold = || {
                    asked.fetch_add(1, Ordering::Relaxed);
                    api.hold_seats(event, &token, &seats)
                };
                if params.first_answers {
                    hold().await
                } else {
                    boxoffice_client::turns::kept(hold).await
                }
            }
        })
        .collect();
    let started = std::time::Instant::now();
    let answers = release_together(target, calls).await;
    let elapsed = started.elapsed();
    let mut round = Stats::default();
    for (answer, latency) in &answers {
        round.record(status_of(answer, 201), *latency);
        stats.record(status_of(answer, 201), *latency);
    }
    let turns = asked.load(Ordering::Relaxed).saturating_sub(buyers as u64);
    let (won, refused) = (round.of(201), round.of(409));
    let mut checks = vec![Check::new(
        "exactly one buyer holds the seat",
        won == 1 && refused == buyers as u64 - 1,
        format!(
            "{won} holds, {refused} refusals (409), {} turns (503) of {buyers}",
            round.of(503)
        ),
    )];
    let held = target.api.availability(event).await?.counts.held;
    checks.push(Check::new(
        "the server shows the seat held once",
        held == 1,
        format!("{held} seats held"),
    ));
    checks.push(checks::seats_add_up(target, event, layout.seats()).await?);
    Ok(Crowd {
        elapsed,
        turns,
        checks,
    })
}
