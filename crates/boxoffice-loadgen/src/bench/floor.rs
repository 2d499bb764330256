//! `floor --duration D`: `GET /healthz` back to back, the server's HTTP floor: what the
//! client, the network stack and the server's HTTP layer cost without any store.

use std::time::Duration;

use super::{drive, status_of, Check, Pace, Report, Target};

/// Runs the scenario and reports it.
pub async fn run(target: &Target, pace: Pace, duration: Duration) -> anyhow::Result<Report> {
    let api = target.api.clone();
    let (stats, elapsed) = drive(target, pace, duration, move |_| {
        let api = api.clone();
        async move { status_of(&api.health().await, 200) }
    })
    .await;
    let mut report = Report::new("floor");
    report
        .parameter("duration_s", duration.as_secs_f64())
        .pace(pace);
    report.elapsed_seconds = elapsed.as_secs_f64();
    report.operations.push(stats.report("healthz", elapsed));
    report.checks.push(Check::new(
        "every request answered 200",
        stats.of(200) == stats.count(),
        format!("{} of {}", stats.of(200), stats.count()),
    ));
    Ok(report)
}
