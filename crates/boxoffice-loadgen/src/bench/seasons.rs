//! `season-holds --events N --seats S --duration D`: one-seat season holds on random
//! seats by random buyers, each held in all N events of one season at once, beside the
//! event holds of the `holds` scenario. A seat someone holds is refused (409); after the
//! run, every seat must be held in all the events or in none.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use rand::Rng;
use serde_json::json;

use super::{drive, status_of, Check, Layout, Pace, Report, Target};

/// What to run.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// Events in the season.
    pub events: usize,
    /// Seats in the venue.
    pub seats: usize,
    /// How long to send.
    pub duration: Duration,
    /// How requests are paced.
    pub pace: Pace,
    /// Distinct buyers, chosen at random per request.
    pub users: usize,
    /// The events' hold lifetime: long enough that no hold lapses before the check.
    pub hold_ttl_seconds: u32,
}

/// Runs the scenario and reports it.
pub async fn run(target: &Target, params: Params) -> anyhow::Result<Report> {
    let layout = Layout::of(params.seats, params.hold_ttl_seconds);
    let events = target.seated_events(&layout, params.events).await?;
    let season = target
        .api
        .create_season(&serde_json::from_value(json!({
            "name": "Bench season", "event_ids": events,
            "ticket_types": [{"code": "season", "name": "Season seat", "price_cents": 36000, "currency": "EUR"}],
            "allocations": [{"ticket_type": "season", "section": "floor"}]}))?)
        .await?
        .id;
    let tokens: Arc<Vec<String>> = Arc::new(
        (0..params.users.max(2))
            .map(|u| target.buyer(&format!("season-holder-{u}")))
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
            let seats = [seat.as_str()];
            let answer = boxoffice_client::turns::kept(|| {
                api.hold_season_seats(season, &tokens[user], &seats)
            })
            .await;
            status_of(&answer, 201)
        }
    })
    .await;
    let mut report = Report::new("season-holds");
    report
        .parameter("events", events.len())
        .parameter("seats", layout.seats())
        .parameter("duration_s", params.duration.as_secs_f64())
        .pace(params.pace)
        .parameter("users", params.users)
        .parameter("hold_ttl_s", params.hold_ttl_seconds);
    report.elapsed_seconds = elapsed.as_secs_f64();
    let granted = stats.of(201) as f64 / elapsed.as_secs_f64();
    report.operations.push(stats.report("season hold", elapsed));
    report.figure("season_holds_granted_per_second", granted);
    report.figure("event_seats_held_per_second", granted * events.len() as f64);
    report.checks.push(all_or_none(target, &events).await?);
    Ok(report)
}

/// Every seat held in all the season's events or in none.
async fn all_or_none(
    target: &Target,
    events: &[boxoffice_core::ids::EventId],
) -> anyhow::Result<Check> {
    let mut held: Vec<BTreeSet<String>> = Vec::with_capacity(events.len());
    for &event in events {
        let seats = target.api.seats(event).await?;
        held.push(
            seats
                .seats
                .into_iter()
                .filter(|s| s.status == boxoffice_core::availability::SeatStatus::Held)
                .map(|s| s.seat.id)
                .collect(),
        );
    }
    let first = &held[0];
    let uneven = held.iter().filter(|h| *h != first).count();
    Ok(Check {
        name: "every seat held in all the season's events or in none".into(),
        passed: uneven == 0,
        detail: format!(
            "{} seats held in the first event; {uneven} of {} events differ",
            first.len(),
            events.len()
        ),
    })
}
