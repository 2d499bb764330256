//! Idle live-update subscribers against a running server: its resident memory with N
//! streams open, and how long a change takes to reach every one of them.
//!
//! ```sh
//! bench/subscribers.sh [subscribers]     # starts a release server and runs this
//! cargo run --release -p boxoffice-loadgen --example subscribers_bench -- \
//!     <base url> <admin token> <jwt secret> <subscribers> <server pid>
//! ```
//!
//! Creates a 100-seat event, opens `subscribers` streams of it (each its own connection),
//! waits for every snapshot, reads the server's VmRSS, then holds one seat at a time, five
//! times, timing from just before each hold request until the change has arrived on every
//! stream.

use std::sync::Arc;
use std::time::{Duration, Instant};

use boxoffice_client::live::LiveEvent;
use boxoffice_client::{mint_user_token, Client};
use futures::StreamExt;
use serde_json::json;
use tokio::sync::{mpsc, Barrier};

const ROUNDS: usize = 5;
/// Streams opened at once while connecting, to stay within the server's listen backlog.
const CONNECT_BATCH: usize = 500;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [base, admin, secret, subscribers, pid] = args.as_slice() else {
        anyhow::bail!("usage: <base url> <admin token> <jwt secret> <subscribers> <server pid>");
    };
    let subscribers: usize = subscribers.parse()?;
    rlimit::increase_nofile_limit(u64::MAX)?;
    let http = reqwest::Client::builder().build()?;
    let api = Client::with_http(base, http).admin(admin);
    let venue = api
        .create_venue(&serde_json::from_value(
            json!({"name": "Club", "sections": [
            {"id": "floor", "name": "Floor", "rows": [{"label": "A", "seats": 100}]}]}),
        )?)
        .await?;
    let event = api
        .create_event(&serde_json::from_value(json!({"venue_id": venue.id, "name": "Gig",
            "starts_at": "2099-01-01T20:00:00Z",
            "ticket_types": [{"code": "standard", "name": "Standard", "price_cents": 1000, "currency": "EUR"}],
            "allocations": [{"ticket_type": "standard", "section": "floor"}]}))?)
        .await?
        .id;
    let before = rss_kib(pid)?;

    // Every subscriber reports each change's arrival on `arrived`.
    let (arrived, mut arrivals) = mpsc::unbounded_channel::<Instant>();
    let connected = Arc::new(Barrier::new(subscribers + 1));
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(subscribers);
    for batch in (0..subscribers).collect::<Vec<_>>().chunks(CONNECT_BATCH) {
        let mut opened = Vec::new();
        for _ in batch {
            opened.push(api.stream(event));
        }
        for stream in futures::future::join_all(opened).await {
            let mut stream = stream?;
            let (arrived, connected) = (arrived.clone(), connected.clone());
            tasks.push(tokio::spawn(async move {
                match stream.next().await {
                    Some(Ok(LiveEvent::Snapshot(_))) => {}
                    other => panic!("the stream began with {other:?}"),
                }
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
    println!(
        "{subscribers} streams open and snapshotted in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = rss_kib(pid)?;
    println!(
        "server resident memory: {:.1} MB before, {:.1} MB with {subscribers} streams ({:.1} KB per stream)",
        before as f64 / 1024.0,
        after as f64 / 1024.0,
        (after.saturating_sub(before)) as f64 / subscribers as f64
    );

    let buyer = mint_user_token(
        secret,
        "bench-buyer",
        chrono::Utc::now() + chrono::Duration::hours(1),
    );
    for round in 0..ROUNDS {
        let sent = Instant::now();
        api.hold_seats(event, &buyer, &[format!("floor-A-{}", round + 1).as_str()])
            .await?;
        let answered = sent.elapsed();
        let mut delays = Vec::with_capacity(subscribers);
        while delays.len() < subscribers {
            let at = tokio::time::timeout(Duration::from_secs(30), arrivals.recv())
                .await?
                .expect("subscribers are running");
            delays.push(at.duration_since(sent));
        }
        delays.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "change {}: hold answered in {:.1} ms; reached subscribers p50 {:.1} ms, p99 {:.1} ms, all {:.1} ms",
            round + 1,
            ms(answered),
            ms(delays[delays.len() / 2]),
            ms(delays[delays.len() * 99 / 100]),
            ms(delays[delays.len() - 1]),
        );
    }
    for task in tasks {
        task.abort();
    }
    Ok(())
}

/// The process's resident set, in KiB.
fn rss_kib(pid: &str) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no VmRSS for process {pid}"))
}
