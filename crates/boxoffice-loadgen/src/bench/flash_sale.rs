//! `flash-sale --seats S --buyers B`: every buyer arrives at once wanting 1–4 seats
//! together, asks for the best available (the front rows first), thinks, checks out, and
//! on a conflict asks again; a buyer told too few seats are left asks for one fewer. Runs
//! until every buyer has bought or given up, or the time limit.
//!
//! With `--queue R`, the event has a waiting room admitting R a minute: every buyer joins
//! it, polls once a second until admitted, and holds with the pass; a checkout hands the
//! slot on. The report adds each buyer's wait for admission.
//!
//! A checkout whose answer is lost (no answer, or a 5xx) is asked again with the same hold
//! token, as a browser would, for up to a minute (a Postgres failover takes some 25 s), so
//! an instance dying or a primary lost mid-sale loses no order from the count: an order
//! committed whose answer never came is found by asking again.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use boxoffice_client::api::{BestAvailable, HoldBody};
use boxoffice_client::{Client, Error};
use boxoffice_core::event::QueueSettings;
use boxoffice_core::hold::OrderStatus;
use boxoffice_core::ids::EventId;
use rand::Rng;

use super::{checks, status_of, Layout, Report, Samples, Stats, Target};

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
    /// A waiting room in front of the sale, admitting this many a minute.
    pub queue: Option<u32>,
    /// The event's payment window: each order is then paid (as the platform's server
    /// would, once its provider confirmed) right after checkout.
    pub payment_window_seconds: u32,
}

#[derive(Default)]
struct Outcome {
    holds: Stats,
    checkouts: Stats,
    payments: Stats,
    polls: Stats,
    waits: Stats,
    orders: Vec<Vec<String>>,
}

/// How often a waiting buyer polls, on average.
const POLL_EVERY: Duration = Duration::from_secs(1);

/// A pause of about [`POLL_EVERY`], spread ±50% so buyers who arrived together do not poll
/// together ever after (browsers do not either).
async fn pause() {
    let spread = rand::rng().random_range(0.5..1.5);
    tokio::time::sleep(POLL_EVERY.mul_f64(spread)).await;
}

/// How long a buyer refused for now waits when the server says nothing finer: its
/// `Retry-After`.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// How long a refused buyer waits: the turn the server gave (`retry_after_ms`), else
/// [`RETRY_AFTER`] spread over half a second so the refused do not all return together.
fn retry_after(problem: &boxoffice_client::api::Problem) -> Duration {
    let mut rng = rand::rng();
    match problem.retry_after_ms {
        // The server spread the turns; a browser's timer is a little late, never early.
        Some(ms) => Duration::from_millis(ms).mul_f64(rng.random_range(1.0..1.05)),
        None => RETRY_AFTER.mul_f64(rng.random_range(1.0..1.5)),
    }
}

/// How long a buyer keeps asking for a checkout (or a payment) whose answer was lost.
const CHECKOUT_PATIENCE: Duration = Duration::from_secs(60);

/// Whether an answer says nothing of what the server did: no answer at all, or a
/// balancer's or a down store's 5xx.
fn answer_lost(status: u16) -> bool {
    status == 0 || status >= 500
}

/// Joins the line and polls until admitted; the pass, or `None` past `deadline`. Every
/// poll's answer goes into `polls`.
async fn admitted(
    api: &Client,
    event: EventId,
    token: &str,
    deadline: Instant,
    polls: &mut Samples,
) -> Option<String> {
    while Instant::now() < deadline {
        let sent = Instant::now();
        let joined = api.join_queue(event, token).await;
        polls.record(status_of(&joined, 201), sent.elapsed());
        let Ok(joined) = joined else {
            pause().await;
            continue;
        };
        while Instant::now() < deadline {
            let sent = Instant::now();
            let status = api.queue_status(event, token, &joined.ticket).await;
            polls.record(status_of(&status, 200), sent.elapsed());
            match status {
                Ok(s) if s.admitted => return s.pass,
                Ok(_) => pause().await,
                // Dropped: join again.
                Err(Error::Problem(p)) if p.code == "ticket_not_found" => break,
                Err(_) => pause().await,
            }
        }
    }
    None
}

/// Runs the scenario and reports it.
pub async fn run(target: &Target, params: Params) -> anyhow::Result<Report> {
    let layout = Layout {
        max_seats_per_user: 4,
        payment_window_seconds: params.payment_window_seconds,
        ..Layout::of(params.seats, params.hold_ttl_seconds)
    };
    let event = target.seated_event(&layout).await?;
    if let Some(admit_per_minute) = params.queue {
        let queue = QueueSettings {
            enabled: true,
            opens_at: chrono::Utc::now(),
            admit_per_minute,
            session_seconds: 600,
            shuffle_at_open: true,
        };
        target.set_queue(event, queue).await?;
    }
    let outcome = Arc::new(Mutex::new(Outcome::default()));
    let bar = target.progress(params.buyers as u64, "buyers done");
    target.mark("start");
    let started = Instant::now();
    let deadline = started + params.time_limit;
    let buyers: Vec<_> = (0..params.buyers)
        .map(|b| {
            let (api, token) = (target.api.clone(), target.buyer(&format!("fan-{b}")));
            let (outcome, bar) = (outcome.clone(), bar.clone());
            let mut want: u32 = rand::rng().random_range(1..=4);
            async move {
                let mut holds = Samples::default();
                let mut checkouts = Samples::default();
                let mut payments = Samples::default();
                let (mut polls, mut waits) = (Samples::default(), Samples::default());
                let mut bought = None;
                let mut pass = None;
                while want > 0 && bought.is_none() && Instant::now() < deadline {
                    if params.queue.is_some() && pass.is_none() {
                        let arrived = Instant::now();
                        pass = admitted(&api, event, &token, deadline, &mut polls).await;
                        waits.record(if pass.is_some() { 200 } else { 0 }, arrived.elapsed());
                        continue;
                    }
                    let body = HoldBody {
                        seats: None,
                        best_available: Some(BestAvailable {
                            quantity: want,
                            ticket_type: None,
                            accessible: false,
                        }),
                    };
                    let sent = Instant::now();
                    let answer = api
                        .hold_with_pass(event, &token, pass.as_deref(), &body)
                        .await;
                    holds.record(status_of(&answer, 201), sent.elapsed());
                    let hold = match answer {
                        Ok(hold) => hold,
                        // The turn is over: back in line.
                        Err(Error::Problem(p)) if p.code == "queue_required" => {
                            pass = None;
                            continue;
                        }
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
                        // Refused for now (the server's limit, a store down): come back
                        // when the server said.
                        Err(Error::Problem(p)) if p.status == 429 || p.status == 503 => {
                            tokio::time::sleep(retry_after(&p)).await;
                            continue;
                        }
                        // Anything else: wait a moment.
                        Err(_) => {
                            tokio::time::sleep(Duration::from_millis(200)).await;
                            continue;
                        }
                    };
                    tokio::time::sleep(params.think).await;
                    let mut tries = 0;
                    let first = Instant::now();
                    let answer = loop {
                        let sent = Instant::now();
                        let answer = api.checkout(event, &token, hold.hold_token).await;
                        let status = status_of(&answer, 201);
                        checkouts.record(status, sent.elapsed());
                        // The answer was lost on the way (an instance died with the request
                        // in flight, say): ask again with the same token, which finds the
                        // order if there is one and makes it if there is not.
                        tries += 1;
                        if !answer_lost(status) || first.elapsed() >= CHECKOUT_PATIENCE {
                            break answer;
                        }
                        // 0.25, 0.5, 1, then 2 s: past a store's moment of failing fast; at
                        // least the Retry-After of a 503.
                        let mut pause = Duration::from_millis(125 << tries.min(4));
                        if status == 503 {
                            pause =
                                pause.max(RETRY_AFTER.mul_f64(rand::rng().random_range(1.0..3.0)));
                        }
                        tokio::time::sleep(pause).await;
                    };
                    if let Ok(ordered) = answer {
                        let order = ordered.order;
                        if order.status == OrderStatus::PendingPayment {
                            // The platform's server tells of the payment until it is heard,
                            // with the same reference (a repeat answers the same order).
                            let reference = format!("bench-{}", order.order_id);
                            let first = Instant::now();
                            let paid = loop {
                                let sent = Instant::now();
                                let paid = api
                                    .pay_order(order.order_id, &reference, order.total_cents)
                                    .await;
                                let status = status_of(&paid, 200);
                                payments.record(status, sent.elapsed());
                                if !answer_lost(status) || first.elapsed() >= CHECKOUT_PATIENCE {
                                    break paid;
                                }
                                let spread = rand::rng().random_range(1.0..3.0);
                                tokio::time::sleep(RETRY_AFTER.mul_f64(spread)).await;
                            };
                            if paid.is_err() {
                                // Not paid: the order lapses at its deadline; this buyer
                                // gives up rather than hold past their limit.
                                break;
                            }
                        }
                        bought = Some(order.seats.into_iter().map(|s| s.id).collect());
                    }
                }
                bar.inc(1);
                let mut outcome = outcome.lock().unwrap_or_else(|p| p.into_inner());
                outcome.holds.add(&holds);
                outcome.checkouts.add(&checkouts);
                outcome.payments.add(&payments);
                outcome.polls.add(&polls);
                outcome.waits.add(&waits);
                outcome.orders.extend(bought);
            }
        })
        .collect();
    boxoffice_client::release::together(buyers).await;
    let elapsed = started.elapsed();
    target.mark("end");
    bar.finish_and_clear();
    let outcome = std::mem::take(&mut *outcome.lock().unwrap_or_else(|p| p.into_inner()));
    let sold: usize = outcome.orders.iter().map(Vec::len).sum();

    let mut report = Report::new("flash-sale");
    report
        .parameter("seats", layout.seats())
        .parameter("buyers", params.buyers)
        .parameter("think_ms", params.think.as_millis())
        .parameter("hold_ttl_s", params.hold_ttl_seconds)
        .parameter("payment_window_s", params.payment_window_seconds);
    if let Some(rate) = params.queue {
        report.parameter("queue_admit_per_minute", rate);
    }
    report.elapsed_seconds = elapsed.as_secs_f64();
    report
        .operations
        .push(outcome.holds.report("hold (best)", elapsed));
    report
        .operations
        .push(outcome.checkouts.report("checkout", elapsed));
    if params.payment_window_seconds > 0 {
        report
            .operations
            .push(outcome.payments.report("payment", elapsed));
    }
    if params.queue.is_some() {
        report
            .operations
            .push(outcome.polls.report("queue join/poll", elapsed));
        report
            .operations
            .push(outcome.waits.report("wait to be admitted", elapsed));
    }
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
