//! `queue --buyers N --admit-per-minute R --duration S --workers W`: the waiting room under
//! load. N buyers join an event's line before it opens (joins per second), then poll their
//! tickets back to back for S seconds while the line admits R a minute (polls per second).
//! Checks, through the API: one ticket per buyer, nobody admitted twice, admissions within
//! the rate, places that never move backwards, and passes that hold seats while a
//! missing one is refused.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use boxoffice_client::api::HoldBody;
use boxoffice_core::event::QueueSettings;
use boxoffice_core::ids::EventId;
use chrono::Utc;

use super::{on_workers, status_of, Check, Layout, Report, Stats, Target};

/// What to run.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// Buyers in the line.
    pub buyers: usize,
    /// The line's admissions per minute.
    pub admit_per_minute: u32,
    /// How long the buyers poll after opening.
    pub duration: Duration,
    /// Requests in flight at once.
    pub workers: usize,
}

/// A line's buyers, joined before its opening.
pub(super) struct PreQueue {
    /// Each buyer's token.
    pub tokens: Arc<Vec<String>>,
    /// Each buyer's ticket (`None` where the join failed).
    pub tickets: Arc<Vec<Option<String>>>,
    /// The joins.
    pub stats: Stats,
    /// How long they took.
    pub elapsed: Duration,
}

/// `buyers` buyers, named `<name>-<n>`, join `event`'s line on `workers` loops.
pub(super) async fn join_before_opening(
    target: &Target,
    event: EventId,
    buyers: usize,
    workers: usize,
    name: &str,
) -> PreQueue {
    let tokens: Arc<Vec<String>> = Arc::new(
        (0..buyers)
            .map(|b| target.buyer(&format!("{name}-{b}")))
            .collect(),
    );
    let tickets: Arc<Mutex<Vec<Option<String>>>> = Arc::new(Mutex::new(vec![None; buyers]));
    let (stats, elapsed) = {
        let (api, tokens, tickets) = (target.api.clone(), tokens.clone(), tickets.clone());
        on_workers(workers, buyers, move |b| {
            let (api, tokens, tickets) = (api.clone(), tokens.clone(), tickets.clone());
            async move {
                let answer = api.join_queue(event, &tokens[b]).await;
                if let Ok(joined) = &answer {
                    tickets.lock().unwrap_or_else(|p| p.into_inner())[b] =
                        Some(joined.ticket.clone());
                }
                status_of(&answer, 201)
            }
        })
        .await
    };
    let tickets = std::mem::take(&mut *tickets.lock().unwrap_or_else(|p| p.into_inner()));
    PreQueue {
        tokens,
        tickets: Arc::new(tickets),
        stats,
        elapsed,
    }
}

/// What one buyer saw while polling.
#[derive(Default)]
struct Seen {
    /// The last place shown, if any.
    last_position: Option<u64>,
    /// Times a place moved backwards.
    backwards: u64,
    /// The pass, once admitted.
    pass: Option<String>,
}

/// Runs the scenario and reports it.
pub async fn run(target: &Target, params: Params) -> anyhow::Result<Report> {
    let Params {
        buyers,
        admit_per_minute,
        duration,
        workers,
    } = params;
    let layout = Layout::of(buyers.clamp(100, 100_000), 300);
    let event = target.seated_event(&layout).await?;
    // Opening after the joins: everyone is in the pre-queue, shuffled at opening.
    let opens_at = Utc::now() + chrono::Duration::seconds(3600);
    let mut queue = QueueSettings {
        enabled: true,
        opens_at,
        admit_per_minute,
        session_seconds: 600,
        shuffle_at_open: true,
    };
    target.set_queue(event, queue).await?;

    let PreQueue {
        tokens,
        tickets,
        stats: join_stats,
        elapsed: join_elapsed,
    } = join_before_opening(target, event, buyers, workers, "fan").await;
    // A second join of the first buyers finds the same ticket.
    let mut rejoined_same = true;
    for b in 0..buyers.min(10) {
        let again = target.api.join_queue(event, &tokens[b]).await?;
        rejoined_same &= tickets[b] == Some(again.ticket);
    }

    // Open now; everyone polls, round after round, for the duration.
    queue.opens_at = Utc::now();
    target.set_queue(event, queue).await?;
    let opened = Instant::now();
    let seen: Arc<Mutex<Vec<Seen>>> =
        Arc::new(Mutex::new((0..buyers).map(|_| Seen::default()).collect()));
    let mut poll_stats = Stats::default();
    let mut polled = Duration::ZERO;
    while opened.elapsed() < duration {
        let (api, tokens, tickets, seen) = (
            target.api.clone(),
            tokens.clone(),
            tickets.clone(),
            seen.clone(),
        );
        let (stats, elapsed) = on_workers(workers, buyers, move |b| {
            let (api, tokens, tickets, seen) =
                (api.clone(), tokens.clone(), tickets.clone(), seen.clone());
            async move {
                let Some(ticket) = &tickets[b] else { return 0 };
                let answer = api.queue_status(event, &tokens[b], ticket).await;
                if let Ok(status) = &answer {
                    let mut seen = seen.lock().unwrap_or_else(|p| p.into_inner());
                    let mine = &mut seen[b];
                    if let Some(pass) = &status.pass {
                        mine.pass = Some(pass.clone());
                    } else if let Some(position) = status.position {
                        if mine.last_position.is_some_and(|last| position > last) {
                            mine.backwards += 1;
                        }
                        mine.last_position = Some(position);
                    }
                }
                status_of(&answer, 200)
            }
        })
        .await;
        poll_stats.merge(&stats);
        polled += elapsed;
    }
    let open_for = opened.elapsed();

    let seen: Vec<Seen> = std::mem::take(&mut *seen.lock().unwrap_or_else(|p| p.into_inner()));
    let admitted: Vec<(usize, &String)> = seen
        .iter()
        .enumerate()
        .filter_map(|(b, s)| s.pass.as_ref().map(|p| (b, p)))
        .collect();
    let backwards: u64 = seen.iter().map(|s| s.backwards).sum();
    // The bucket's burst (ten seconds' worth) plus the rate over the time open.
    let allowed = (f64::from(admit_per_minute) / 6.0).max(1.0)
        + f64::from(admit_per_minute) * open_for.as_secs_f64() / 60.0;

    // A few admitted buyers hold a seat with their pass; one without is refused.
    let mut holds_with_pass = 0;
    let tried = admitted.len().min(20);
    for (i, (b, pass)) in admitted.iter().take(tried).enumerate() {
        let body = HoldBody {
            seats: Some(vec![layout.seat_id(i)]),
            best_available: None,
        };
        if target
            .api
            .hold_with_pass(event, &tokens[*b], Some(pass), &body)
            .await
            .is_ok()
        {
            holds_with_pass += 1;
        }
    }
    let without = target
        .api
        .hold_seats(event, &target.buyer("no-pass"), &[&layout.seat_id(tried)])
        .await;

    let mut report = Report::new("queue");
    report
        .parameter("buyers", buyers)
        .parameter("admit_per_minute", admit_per_minute)
        .parameter("duration_seconds", duration.as_secs_f64())
        .parameter("workers", workers);
    report.elapsed_seconds = (join_elapsed + open_for).as_secs_f64();
    report
        .operations
        .push(join_stats.report("join", join_elapsed));
    report.operations.push(poll_stats.report("poll", polled));
    report
        .figure(
            "joins_per_second",
            join_stats.of(201) as f64 / join_elapsed.as_secs_f64(),
        )
        .figure(
            "polls_per_second",
            poll_stats.of(200) as f64 / polled.as_secs_f64().max(1e-9),
        )
        .figure("admitted", admitted.len() as f64)
        .figure(
            "admitted_per_minute",
            admitted.len() as f64 * 60.0 / open_for.as_secs_f64(),
        );
    report.checks.push(Check::new(
        "every buyer joined once, and joining again finds the same ticket",
        join_stats.of(201) == buyers as u64 && rejoined_same,
        format!("{} of {buyers} joined", join_stats.of(201)),
    ));
    report.checks.push(Check::new(
        "every poll was answered",
        poll_stats.of(200) == poll_stats.count(),
        format!("{:?}", poll_stats.statuses),
    ));
    let distinct: HashMap<&String, usize> = admitted.iter().map(|(b, p)| (*p, *b)).collect();
    report.checks.push(Check::new(
        "admissions keep to the rate, one pass per admitted buyer",
        (admitted.len() as f64) <= allowed.ceil() && distinct.len() == admitted.len(),
        format!(
            "{} admitted in {:.1} s at {admit_per_minute}/min (at most {:.0})",
            admitted.len(),
            open_for.as_secs_f64(),
            allowed.ceil()
        ),
    ));
    report.checks.push(Check::new(
        "no place ever moved backwards",
        backwards == 0,
        format!("{backwards} moves backwards"),
    ));
    report.checks.push(Check::new(
        "a pass holds seats; no pass, no hold",
        holds_with_pass == tried && status_of(&without, 201) == 403,
        format!(
            "{holds_with_pass} of {tried} held with a pass; without one: {}",
            status_of(&without, 201)
        ),
    ));
    Ok(report)
}
