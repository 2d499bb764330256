//! `flash-sale --seats S --buyers B`: every buyer arrives at once wanting 1–4 seats
//! together, asks for the best available (the front rows first), thinks, checks out, and
//! on a conflict asks again; a buyer told too few seats are left asks for one fewer. Runs
//! until every buyer has bought or given up, or the time limit.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use boxoffice_client::Error;
use rand::Rng;

use super::{checks, status_of, Layout, Report, Stats, Target};

/// What to run.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// Seats in the event.
    pub seats: usize,
    /// Buyers, all arriving at once.
    pub buyers: usize,
    /// How long a buyer thinks between hold and checkout.
    pub think: Duration,
    /// When to stop, sold out or not.
    pub time_limit: Duration,
    /// The event's hold lifetime.
    pub hold_ttl_seconds: u32,
}

#[derive(Default)]
struct Outcome {
    holds: Stats,
    checkouts: Stats,
    orders: Vec<Vec<String>>,
}

/// Runs the scenario and reports it.
pub async fn run(target: &Target, params: Params) -> anyhow::Result<Report> {
    let layout = Layout {
        max_seats_per_user: 4,
        ..Layout::of(params.seats, params.hold_ttl_seconds)
    };
    let event = target.seated_event(&layout).await?;
    let outcome = Arc::new(Mutex::new(Outcome::default()));
    let bar = target.progress(params.buyers as u64, "buyers done");
    let started = Instant::now();
    let deadline = started + params.time_limit;
    let buyers: Vec<_> = (0..params.buyers)
        .map(|b| {
            let (api, token) = (target.api.clone(), target.buyer(&format!("fan-{b}")));
            let (outcome, bar) = (outcome.clone(), bar.clone());
            let mut want: u32 = rand::rng().random_range(1..=4);
            async move {
                let mut holds = Stats::default();
                let mut checkouts = Stats::default();
                let mut bought = None;
                while want > 0 && bought.is_none() && Instant::now() < deadline {
                    let sent = Instant::now();
                    let answer = api.hold_best_available(event, &token, want, None).await;
                    holds.record(status_of(&answer, 201), sent.elapsed());
                    let hold = match answer {
                        Ok(hold) => hold,
                        // Too few seats left for this many: try one fewer.
                        Err(Error::Problem(p))
                            if p.code == "seat_unavailable"
                                && p.seats.as_ref().is_some_and(Vec::is_empty) =>
                        {
                            want -= 1;
                            continue;
                        }
                        // Taken meanwhile: ask again.
                        Err(Error::Problem(p)) if p.code == "seat_unavailable" => continue,
                        // Limited or unavailable: wait a moment.
                        Err(_) => {
                            tokio::time::sleep(Duration::from_millis(200)).await;
                            continue;
                        }
                    };
                    tokio::time::sleep(params.think).await;
                    let sent = Instant::now();
                    let answer = api.checkout(event, &token, hold.hold_token).await;
                    checkouts.record(status_of(&answer, 201), sent.elapsed());
                    if let Ok(ordered) = answer {
                        bought = Some(ordered.order.seats.into_iter().map(|s| s.id).collect());
                    }
                }
                bar.inc(1);
                let mut outcome = outcome.lock().unwrap_or_else(|p| p.into_inner());
                outcome.holds.merge(&holds);
                outcome.checkouts.merge(&checkouts);
                outcome.orders.extend(bought);
            }
        })
        .collect();
    boxoffice_client::release::together(buyers).await;
    let elapsed = started.elapsed();
    bar.finish_and_clear();
    let outcome = std::mem::take(&mut *outcome.lock().unwrap_or_else(|p| p.into_inner()));
    let sold: usize = outcome.orders.iter().map(Vec::len).sum();

    let mut report = Report::new("flash-sale");
    report
        .parameter("seats", layout.seats())
        .parameter("buyers", params.buyers)
        .parameter("think_ms", params.think.as_millis())
        .parameter("hold_ttl_s", params.hold_ttl_seconds);
    report.elapsed_seconds = elapsed.as_secs_f64();
    report
        .operations
        .push(outcome.holds.report("hold (best)", elapsed));
    report
        .operations
        .push(outcome.checkouts.report("checkout", elapsed));
    report
        .figure("orders", outcome.orders.len() as f64)
        .figure("seats_sold", sold as f64)
        .figure("seats_sold_per_second", sold as f64 / elapsed.as_secs_f64());
    report
        .checks
        .push(checks::no_seat_sold_twice(target, event, &outcome.orders).await?);
    report
        .checks
        .extend(checks::after_holds(target, event, &layout).await?);
    Ok(report)
}
