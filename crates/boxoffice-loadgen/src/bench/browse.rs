//! `browse --subscribers N`: N buyers watching the seat map live (one stream each) while
//! others read availability and hold seats. Reports the server's resident memory with the
//! streams open (given its pid) and how long a change takes to reach every subscriber.

use boxoffice_client::turns::kept;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use boxoffice_client::live::LiveEvent;
use futures::StreamExt;
use tokio::sync::{mpsc, Barrier};

use super::{status_of, Check, Layout, Report, Stats, Target};

/// Streams opened at once while connecting, to stay within the server's listen backlog.
const CONNECT_BATCH: usize = 500;
/// How long every subscriber may take to see a change before the check fails.
const REACH_WITHIN: Duration = Duration::from_secs(30);

/// What to run.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// Live subscribers.
    pub subscribers: usize,
    /// Holds made one after another, each timed until every subscriber has it.
    pub changes: usize,
    /// Buyers reading availability back to back meanwhile.
    pub readers: usize,
    /// The server's process id, to read its resident memory.
    pub server_pid: Option<u32>,
}

/// Runs the scenario and reports it.
pub async fn run(target: &Target, params: Params) -> anyhow::Result<Report> {
    let layout = Layout::of(params.changes.max(1), 600);
    let event = target.seated_event(&layout).await?;
    let rss_before = params.server_pid.map(rss_mb).transpose()?;

    let (arrived, mut arrivals) = mpsc::unbounded_channel::<Instant>();
    let connected = Arc::new(Barrier::new(params.subscribers + 1));
    let bar = target.progress(params.subscribers as u64, "streams open");
    let opening = Instant::now();
    let mut streams = Vec::with_capacity(params.subscribers);
    let ids: Vec<usize> = (0..params.subscribers).collect();
    for batch in ids.chunks(CONNECT_BATCH) {
        let opened =
            futures::future::join_all(batch.iter().map(|_| target.api.stream(event))).await;
        for stream in opened {
            let mut stream = stream?;
            let (arrived, connected, bar) = (arrived.clone(), connected.clone(), bar.clone());
            streams.push(tokio::spawn(async move {
                if !matches!(stream.next().await, Some(Ok(LiveEvent::Snapshot(_)))) {
                    panic!("a stream must begin with a snapshot");
                }
                bar.inc(1);
                connected.wait().await;
                while let Some(Ok(event)) = stream.next().await {
                    if matches!(event, LiveEvent::Seats(_)) {
                        let _ = arrived.send(Instant::now());
                    }
                }
            }));
        }
    }
    connected.wait().await;
    bar.finish_and_clear();
    let open_seconds = opening.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_after = params.server_pid.map(rss_mb).transpose()?;

    // Readers of availability, back to back, while the changes are made.
    let reading = Arc::new(AtomicBool::new(true));
    let readers: Vec<_> = (0..params.readers)
        .map(|_| {
            let (api, reading) = (target.api.clone(), reading.clone());
            tokio::spawn(async move {
                let mut stats = Stats::default();
                while reading.load(Ordering::Relaxed) {
                    let sent = Instant::now();
                    let answer = api.availability(event).await;
                    stats.record(status_of(&answer, 200), sent.elapsed());
                }
                stats
            })
        })
        .collect();

    let started = Instant::now();
    let token = target.buyer("browser");
    let mut holds = Stats::default();
    let mut reach = Stats::default();
    let mut missing = 0usize;
    for change in 0..params.changes {
        let seat = layout.seat_id(change);
        let sent = Instant::now();
        let seats = [seat.as_str()];
        let answer = kept(|| target.api.hold_seats(event, &token, &seats)).await;
        holds.record(status_of(&answer, 201), sent.elapsed());
        answer?;
        let mut got = 0;
        let mut last = sent;
        while got < params.subscribers {
            match tokio::time::timeout(REACH_WITHIN, arrivals.recv()).await {
                Ok(Some(at)) => {
                    got += 1;
                    last = last.max(at);
                }
                _ => break,
            }
        }
        missing += params.subscribers - got;
        // One sample per change: the time until the last subscriber had it.
        reach.record(200, last.duration_since(sent));
    }
    let elapsed = started.elapsed();
    reading.store(false, Ordering::Relaxed);
    let mut reads = Stats::default();
    for reader in readers {
        reads.merge(&reader.await?);
    }
    for stream in streams {
        stream.abort();
    }

    let mut report = Report::new("browse");
    report
        .parameter("subscribers", params.subscribers)
        .parameter("changes", params.changes)
        .parameter("readers", params.readers);
    report.elapsed_seconds = elapsed.as_secs_f64();
    report.operations.push(holds.report("hold", elapsed));
    report
        .operations
        .push(reads.report("availability", elapsed));
    report.operations.push(reach.report("change→all", elapsed));
    report.figure("streams_open_seconds", open_seconds);
    if let (Some(before), Some(after)) = (rss_before, rss_after) {
        report
            .figure("server_rss_mb_before", before)
            .figure("server_rss_mb", after)
            .figure(
                "server_kb_per_stream",
                (after - before) * 1024.0 / params.subscribers.max(1) as f64,
            );
    }
    report.checks.push(Check::new(
        "every subscriber sees every change",
        missing == 0,
        format!(
            "{missing} of {} deliveries missing after {} s",
            params.subscribers * params.changes,
            REACH_WITHIN.as_secs()
        ),
    ));
    Ok(report)
}

/// A process's resident set, in MB.
fn rss_mb(pid: u32) -> anyhow::Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no VmRSS for process {pid}"))?;
    Ok(kib / 1024.0)
}
