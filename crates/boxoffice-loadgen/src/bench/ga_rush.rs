//! `ga-rush --places P --buyers B`: buyers released together on one general-admission
//! area, 1–4 places each. Whether the sale-day gate stands in front of Postgres is the
//! server's setting (`BOXOFFICE_GA_GATE`); run it both ways to compare.

use boxoffice_client::api::BookingBody;
use rand::Rng;

use super::{checks, release_together, status_of, Check, Report, Stats, Target};

/// Runs the scenario and reports it.
pub async fn run(target: &Target, places: u32, buyers: usize) -> anyhow::Result<Report> {
    let event = target.standing_event("field", places, 4).await?;
    let calls = (0..buyers)
        .map(|b| {
            let (api, token) = (target.api.clone(), target.buyer(&format!("rusher-{b}")));
            let quantity = rand::rng().random_range(1..=4);
            async move {
                let body = BookingBody {
                    area: "field".into(),
                    quantity,
                };
                // A refusal for now is asked again at its turn, as the page does.
                let answer =
                    boxoffice_client::turns::kept(|| api.book(event, &token, &body, None)).await;
                (
                    status_of(&answer, 201),
                    answer.map(|b| b.quantity).unwrap_or(0),
                )
            }
        })
        .collect();
    let started = std::time::Instant::now();
    let answers = release_together(target, calls).await;
    let elapsed = started.elapsed();
    let mut stats = Stats::default();
    let mut booked = 0u64;
    for ((status, quantity), latency) in &answers {
        stats.record(*status, *latency);
        booked += u64::from(*quantity);
    }
    let mut report = Report::new("ga-rush");
    report
        .parameter("places", places)
        .parameter("buyers", buyers);
    report.elapsed_seconds = elapsed.as_secs_f64();
    report.operations.push(stats.report("booking", elapsed));
    report.figure("places_booked", booked as f64).figure(
        "bookings_per_second",
        stats.of(201) as f64 / elapsed.as_secs_f64(),
    );
    report.checks.push(Check::new(
        "every answer is a booking or sold out",
        stats.of(201) + stats.of(409) == buyers as u64,
        format!(
            "{} booked, {} sold out, of {buyers}",
            stats.of(201),
            stats.of(409)
        ),
    ));
    report
        .checks
        .push(checks::ga_adds_up(target, event, "field", booked).await?);
    Ok(report)
}
