//! `holds --seats S --duration D`: one-seat holds on random seats by random buyers, the
//! throughput scenario. A hold on a seat someone holds is refused (409); holds lapse by
//! themselves after the event's hold TTL.

use std::sync::Arc;
use std::time::Duration;

use rand::Rng;

use super::{checks, drive, status_of, Layout, Pace, Report, Target};

/// What to run.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// Seats in the event.
    pub seats: usize,
    /// How long to send.
    pub duration: Duration,
    /// How requests are paced.
    pub pace: Pace,
    /// Distinct buyers, chosen at random per request.
    pub users: usize,
    /// The event's hold lifetime.
    pub hold_ttl_seconds: u32,
}

/// Runs the scenario and reports it.
pub async fn run(target: &Target, params: Params) -> anyhow::Result<Report> {
    let layout = Layout::of(params.seats, params.hold_ttl_seconds);
    let event = target.seated_event(&layout).await?;
    let tokens: Arc<Vec<String>> = Arc::new(
        (0..params.users.max(1))
            .map(|u| target.buyer(&format!("holder-{u}")))
            .collect(),
    );
    let api = target.api.clone();
    let (stats, elapsed) = drive(target, params.pace, params.duration, move |_| {
        let (api, tokens) = (api.clone(), tokens.clone());
        let (seat, user) = {
            let mut rng = rand::rng();
            (
                rng.random_range(0..layout.seats()),
                rng.random_range(0..tokens.len()),
            )
        };
        async move {
            let seat = layout.seat_id(seat);
            let answer = api.hold_seats(event, &tokens[user], &[seat.as_str()]).await;
            status_of(&answer, 201)
        }
    })
    .await;
    let mut report = Report::new("holds");
    report
        .parameter("seats", layout.seats())
        .parameter("duration_s", params.duration.as_secs_f64())
        .pace(params.pace)
        .parameter("users", params.users)
        .parameter("hold_ttl_s", params.hold_ttl_seconds);
    report.elapsed_seconds = elapsed.as_secs_f64();
    let op = stats.report("hold", elapsed);
    report.figure(
        "holds_granted_per_second",
        stats.of(201) as f64 / elapsed.as_secs_f64(),
    );
    report.operations.push(op);
    report
        .checks
        .extend(checks::after_holds(target, event, &layout).await?);
    Ok(report)
}
