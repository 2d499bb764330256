//! `line --buyers N`: a waiting room of millions, scaled to this machine. N buyers join an
//! event's line before it opens (joins a second); at the opening everyone polls their
//! ticket, as fast as the server answers, for the duration, while a few clients read the
//! line's public status (polls a second of each). Reported beside them: the store calls the
//! polls made (Redis commands and Postgres transactions counted on the stores while they
//! ran, per poll: a waiting ticket's poll should make none), the status requests that
//! reached an instance (behind a balancer's cache, at most one per max-age), whether anyone
//! was admitted before a smaller place, and the time from a place's admission (the public
//! counter passing it) to its buyer's pass.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use boxoffice_core::event::QueueSettings;
use boxoffice_core::ids::EventId;
use chrono::Utc;

use super::queue::{join_before_opening, PreQueue};
use super::{on_workers, status_of, Check, Layout, Report, Stats, Target};

/// What to run.
#[derive(Clone, Debug)]
pub struct Params {
    /// Buyers in the line.
    pub buyers: usize,
    /// The line's admissions per minute.
    pub admit_per_minute: u32,
    /// How long the buyers poll after the opening.
    pub duration: Duration,
    /// Requests in flight at once (joins, and polls of tickets).
    pub workers: usize,
    /// Clients reading the line's status back to back meanwhile.
    pub status_workers: usize,
    /// The Redis the server's waiting room uses, to count its commands.
    pub redis_url: Option<String>,
    /// The server's database, to count its transactions.
    pub database_url: Option<String>,
    /// The instances behind the target (their `/metrics`), to count the status requests
    /// that reached them; the target itself if none.
    pub origins: Vec<String>,
}

/// What the polls saw of one buyer.
#[derive(Clone, Default)]
struct Seen {
    place: Option<u64>,
    position: Option<u64>,
    backwards: u64,
    /// When the last poll that found it waiting was sent (ms after the opening).
    last_waiting_sent: Option<f64>,
    /// When the first answer that admitted it came (ms after the opening).
    admitted_at: Option<f64>,
}

/// Calls the Redis at `url` has answered so far: every command, and the scripts alone
/// (every waiting-room call is one script; the commands a script runs are counted among
/// every command too).
async fn redis_calls(url: &str) -> anyhow::Result<(u64, u64)> {
    let client = redis::Client::open(url)?;
    let mut conn = client.get_multiplexed_async_connection().await?;
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut conn)
        .await?;
    Ok(command_calls(&info))
}

/// Every command's calls, and the scripts' (`EVAL`, `EVALSHA`), in `INFO commandstats`.
pub fn command_calls(info: &str) -> (u64, u64) {
    let (mut all, mut scripts) = (0, 0);
    for line in info.lines() {
        let Some((name, stats)) = line
            .strip_prefix("cmdstat_")
            .and_then(|l| l.split_once(':'))
        else {
            continue;
        };
        let calls: u64 = stats
            .split(',')
            .find_map(|f| f.strip_prefix("calls="))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        all += calls;
        if name == "eval" || name == "evalsha" {
            scripts += calls;
        }
    }
    (all, scripts)
}

/// Transactions of the database at `url` so far.
async fn pg_transactions(url: &str) -> anyhow::Result<i64> {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url).await?;
    // Statistics reach the shared counters within a second; flushing ours is enough for
    // a count taken after a pause.
    let _ = sqlx::query("select pg_stat_force_next_flush()")
        .execute(&mut conn)
        .await;
    Ok(sqlx::query_scalar(
        "select (xact_commit + xact_rollback)::bigint from pg_stat_database
          where datname = current_database()",
    )
    .fetch_one(&mut conn)
    .await?)
}

/// Status requests the `origins` have answered so far, all together.
async fn status_answers(http: &reqwest::Client, origins: &[String]) -> anyhow::Result<f64> {
    let mut total = 0.0;
    for origin in origins {
        let text = http
            .get(format!("{}/metrics", origin.trim_end_matches('/')))
            .send()
            .await?
            .error_for_status()?
            .text()
            .await?;
        total += text
            .lines()
            .filter(|l| {
                l.starts_with("http_requests_total{")
                    && l.contains("route=\"/v1/events/{id}/queue/status\"")
            })
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>();
    }
    Ok(total)
}

/// The store counters at one moment.
struct Counters {
    redis: Option<(u64, u64)>,
    pg: Option<i64>,
}

async fn counters(params: &Params) -> anyhow::Result<Counters> {
    Ok(Counters {
        redis: match &params.redis_url {
            Some(url) => Some(redis_calls(url).await?),
            None => None,
        },
        pg: match &params.database_url {
            Some(url) => Some(pg_transactions(url).await?),
            None => None,
        },
    })
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// Runs the scenario and reports it.
pub async fn run(target: &Target, params: Params) -> anyhow::Result<Report> {
    let buyers = params.buyers;
    let layout = Layout::of(1_000, 600);
    let event: EventId = target.seated_event(&layout).await?;
    let mut queue = QueueSettings {
        enabled: true,
        opens_at: Utc::now() + chrono::Duration::hours(1),
        admit_per_minute: params.admit_per_minute,
        session_seconds: 600,
        shuffle_at_open: true,
    };
    target.set_queue(event, queue).await?;

    // Everyone joins before the opening.
    let PreQueue {
        tokens,
        tickets,
        stats: join_stats,
        elapsed: join_elapsed,
    } = join_before_opening(target, event, buyers, params.workers, "line").await;

    // The opening.
    queue.opens_at = Utc::now();
    target.set_queue(event, queue).await?;
    let origins = if params.origins.is_empty() {
        vec![target.api.base().to_owned()]
    } else {
        params.origins.clone()
    };
    let http = reqwest::Client::new();
    // Every instance reads the line within a second of the opening; the counters are
    // taken once the statistics of what came before are flushed.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let before = counters(&params).await?;
    let status_before = status_answers(&http, &origins).await?;
    let opened = Instant::now();
    let ms = move || opened.elapsed().as_secs_f64() * 1000.0;
    let stop = Arc::new(AtomicBool::new(false));

    // The line's public counter over time, and the crowd reading the status.
    let samples: Arc<Mutex<Vec<(f64, u64)>>> = Arc::default();
    let status_stats: Arc<Mutex<Stats>> = Arc::default();
    let mut readers = Vec::new();
    for reader in 0..params.status_workers.max(1) {
        let (api, stop, samples, stats) = (
            target.api.clone(),
            stop.clone(),
            samples.clone(),
            status_stats.clone(),
        );
        readers.push(tokio::spawn(async move {
            let mut mine = Stats::default();
            while !stop.load(Ordering::Relaxed) {
                let sent = Instant::now();
                let answer = api.line_status(event).await;
                mine.record(status_of(&answer, 200), sent.elapsed());
                if let (0, Ok(line)) = (reader, &answer) {
                    samples
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push((ms(), line.admitted_up_to));
                }
            }
            stats.lock().unwrap_or_else(|p| p.into_inner()).merge(&mine);
        }));
    }

    // Every buyer not yet admitted polls, round after round, for the duration.
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::new(Mutex::new(vec![Seen::default(); buyers]));
    let mut poll_stats = Stats::default();
    while opened.elapsed() < params.duration {
        let waiting: Arc<Vec<usize>> = Arc::new(
            seen.lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .enumerate()
                .filter(|(b, s)| s.admitted_at.is_none() && tickets[*b].is_some())
                .map(|(b, _)| b)
                .collect(),
        );
        if waiting.is_empty() {
            break;
        }
        let deadline = params.duration;
        let (api, tokens, tickets, seen) = (
            target.api.clone(),
            tokens.clone(),
            tickets.clone(),
            seen.clone(),
        );
        let (stats, _) = on_workers(params.workers, waiting.len(), move |i| {
            let (api, tokens, tickets, seen, waiting) = (
                api.clone(),
                tokens.clone(),
                tickets.clone(),
                seen.clone(),
                waiting.clone(),
            );
            async move {
                if opened.elapsed() >= deadline {
                    return 0;
                }
                let b = waiting[i];
                let ticket = tickets[b].as_deref().expect("joined");
                let sent = ms();
                let answer = api.queue_status(event, &tokens[b], ticket).await;
                let received = ms();
                if let Ok(status) = &answer {
                    let mut seen = seen.lock().unwrap_or_else(|p| p.into_inner());
                    let mine = &mut seen[b];
                    if let Some(place) = status
                        .ticket
                        .as_deref()
                        .and_then(boxoffice_client::ticket_place)
                    {
                        mine.place = Some(place);
                    }
                    if status.admitted {
                        mine.admitted_at.get_or_insert(received);
                    } else {
                        mine.last_waiting_sent = Some(sent);
                        if let Some(position) = status.position {
                            if mine.position.is_some_and(|last| position > last) {
                                mine.backwards += 1;
                            }
                            mine.position = Some(position);
                        }
                    }
                }
                status_of(&answer, 200)
            }
        })
        .await;
        poll_stats.merge(&stats);
    }
    let polled = opened.elapsed();
    stop.store(true, Ordering::Relaxed);
    for reader in readers {
        reader.await?;
    }
    let status_elapsed = opened.elapsed();
    // What the stores did while the polls ran, read once their statistics are flushed.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let after = counters(&params).await?;
    let status_after = status_answers(&http, &origins).await?;

    let seen = std::mem::take(&mut *seen.lock().unwrap_or_else(|p| p.into_inner()));
    let samples = std::mem::take(&mut *samples.lock().unwrap_or_else(|p| p.into_inner()));
    let status_stats = std::mem::take(&mut *status_stats.lock().unwrap_or_else(|p| p.into_inner()));
    let polls = poll_stats.of(200);
    let admitted = seen.iter().filter(|s| s.admitted_at.is_some()).count() as u64;
    let backwards: u64 = seen.iter().map(|s| s.backwards).sum();

    // Fairness: nobody admitted while a smaller place was still seen waiting by a poll
    // sent later (allowing the second an instance's view of the counter may lag).
    let mut placed: Vec<&Seen> = seen.iter().filter(|s| s.place.is_some()).collect();
    placed.sort_unstable_by_key(|s| s.place);
    let mut latest_waiting = f64::MIN;
    let mut overtaken = 0u64;
    for s in &placed {
        if let Some(at) = s.admitted_at {
            if latest_waiting > at + 1_000.0 {
                overtaken += 1;
            }
        }
        if let Some(sent) = s.last_waiting_sent {
            latest_waiting = latest_waiting.max(sent);
        }
    }
    // From the counter passing a place to its buyer holding the pass.
    let mut to_pass: Vec<f64> = placed
        .iter()
        .filter_map(|s| {
            let (place, at) = (s.place?, s.admitted_at?);
            let passed = samples.iter().find(|(_, up)| *up >= place)?.0;
            Some((at - passed).max(0.0))
        })
        .collect();
    to_pass.sort_unstable_by(f64::total_cmp);

    let mut report = Report::new("line");
    report
        .parameter("buyers", buyers)
        .parameter("admit_per_minute", params.admit_per_minute)
        .parameter("duration_seconds", params.duration.as_secs_f64())
        .parameter("workers", params.workers)
        .parameter("status_workers", params.status_workers)
        .parameter("origins", origins.join(" "));
    report.elapsed_seconds = (join_elapsed + polled).as_secs_f64();
    report
        .operations
        .push(join_stats.report("join", join_elapsed));
    report.operations.push(poll_stats.report("poll", polled));
    report
        .operations
        .push(status_stats.report("status", status_elapsed));
    let origin_requests = status_after - status_before;
    report
        .figure(
            "joins_per_second",
            join_stats.of(201) as f64 / join_elapsed.as_secs_f64(),
        )
        .figure("polls_per_second", polls as f64 / polled.as_secs_f64())
        .figure(
            "status_polls_per_second",
            status_stats.of(200) as f64 / status_elapsed.as_secs_f64(),
        )
        .figure("status_origin_requests", origin_requests)
        .figure(
            "status_origin_requests_per_second",
            origin_requests / status_elapsed.as_secs_f64(),
        )
        .figure("admitted", admitted as f64)
        .figure(
            "admitted_shown_a_place",
            placed.iter().filter(|s| s.admitted_at.is_some()).count() as f64,
        )
        .figure("overtaken", overtaken as f64)
        .figure("admission_to_pass_p50_ms", quantile(&to_pass, 0.5))
        .figure("admission_to_pass_p99_ms", quantile(&to_pass, 0.99));
    if let (Some(b), Some(a)) = (before.redis, after.redis) {
        let (commands, scripts) = (a.0.saturating_sub(b.0), a.1.saturating_sub(b.1));
        report
            .figure("redis_commands", commands as f64)
            .figure("redis_calls", scripts as f64)
            .figure("redis_calls_per_poll", scripts as f64 / polls.max(1) as f64);
        // Each admitted buyer's exchange, and the line's tick of every instance following
        // it (one a second, two in the first).
        let ticks = (status_elapsed.as_secs() + 3) * origins.len() as u64;
        let waiting_polls = polls.saturating_sub(admitted);
        report.figure(
            "redis_calls_per_waiting_poll",
            scripts.saturating_sub(admitted + ticks) as f64 / waiting_polls.max(1) as f64,
        );
        report.checks.push(Check::new(
            "polls of waiting tickets made no Redis call",
            scripts <= admitted + ticks,
            format!(
                "{scripts} Redis calls ({commands} commands in all) for {polls} polls: \
                 {admitted} exchanges and at most {ticks} ticks"
            ),
        ));
    }
    if let (Some(b), Some(a)) = (before.pg, after.pg) {
        let transactions = a.saturating_sub(b);
        report
            .figure("pg_transactions", transactions as f64)
            .figure(
                "pg_transactions_per_poll",
                transactions as f64 / polls.max(1) as f64,
            );
        report.checks.push(Check::new(
            "polls of waiting tickets made no Postgres call",
            (transactions as u64) < polls / 100 + 50,
            format!("{transactions} Postgres transactions for {polls} polls"),
        ));
    }
    report.checks.push(Check::new(
        "every buyer joined",
        join_stats.of(201) == buyers as u64,
        format!("{} of {buyers} joined", join_stats.of(201)),
    ));
    report.checks.push(Check::new(
        "every poll was answered",
        polls == poll_stats.count() - poll_stats.of(0),
        format!("{:?}", poll_stats.statuses),
    ));
    report.checks.push(Check::new(
        "nobody admitted before a smaller place",
        overtaken == 0 && admitted > 0,
        format!("{overtaken} overtaken; {admitted} admitted"),
    ));
    report.checks.push(Check::new(
        "no place ever moved backwards",
        backwards == 0,
        format!("{backwards} moves backwards"),
    ));
    Ok(report)
}
