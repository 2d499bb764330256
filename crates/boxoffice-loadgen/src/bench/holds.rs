//! `holds --seats S --duration D`: one-seat holds on random seats by random buyers, the
//! throughput scenario. A hold on a seat someone holds is refused (409); holds lapse by
//! themselves after the event's hold TTL. With `--channels` half the rows are a sales
//! channel's, and half the buyers are that channel's: each holds seats of their own half.

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
    /// Half the rows in a sales channel, and half the buyers in it.
    pub channels: bool,
}

/// Runs the scenario and reports it.
pub async fn run(target: &Target, params: Params) -> anyhow::Result<Report> {
    let mut layout = Layout::of(params.seats, params.hold_ttl_seconds);
    if params.channels {
        if layout.rows < 2 {
            layout.per_row = layout.per_row.div_ceil(2);
            layout.rows = 2;
        }
        layout.channel_rows = layout.rows / 2;
    }
    let event = target.seated_event(&layout).await?;
    // Even buyers are the channel's, when there is one.
    let channel_rows = layout.channel_rows;
    let in_channel = move |u: usize| channel_rows > 0 && u.is_multiple_of(2);
    let tokens: Arc<Vec<String>> = Arc::new(
        (0..params.users.max(2))
            .map(|u| {
                let name = format!("holder-{u}");
                if in_channel(u) {
                    target.channel_buyer(&name)
                } else {
                    target.buyer(&name)
                }
            })
            .collect(),
    );
    let split = layout.channel_rows * layout.per_row;
    let api = target.api.clone();
    let (stats, elapsed) = drive(target, params.pace, params.duration, move |_| {
        let (api, tokens) = (api.clone(), tokens.clone());
        let (seat, user) = {
            let mut rng = rand::rng();
            let user = rng.random_range(0..tokens.len());
            let seats = match (split, in_channel(user)) {
                (0, _) => 0..layout.seats(),
                (_, true) => 0..split,
                (_, false) => split..layout.seats(),
            };
            (rng.random_range(seats), user)
        };
        async move {
            let seat = layout.seat_id(seat);
            // A refusal for now is asked again at its turn, as the page does: what is
            // counted is each buyer's final answer, and its time the whole wait.
            let seats = [seat.as_str()];
            let answer =
                boxoffice_client::turns::kept(|| api.hold_seats(event, &tokens[user], &seats))
                    .await;
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
        .parameter("hold_ttl_s", params.hold_ttl_seconds)
        .parameter("channel_rows", layout.channel_rows);
    report.elapsed_seconds = elapsed.as_secs_f64();
    let op = stats.report("hold", elapsed);
    report.figure(
        "holds_granted_per_second",
        stats.of(201) as f64 / elapsed.as_secs_f64(),
    );
    report.operations.push(op);
    // Read as the channel's buyers, who see every seat on sale.
    let reader = if layout.channel_rows > 0 {
        target.in_channel()
    } else {
        target.clone()
    };
    report
        .checks
        .extend(checks::after_holds(&reader, event, &layout).await?);
    Ok(report)
}
