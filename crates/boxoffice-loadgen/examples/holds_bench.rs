//! Holds per second through the HTTP API on either hold store: spread seats (every
//! request a different seat, all granted) and one hot seat (every request the same seat,
//! one granted).
//!
//! ```sh
//! cargo run --release -p boxoffice-loadgen --example holds_bench [seconds] [concurrency] [pool size] [postgres|redis]
//! ```
//!
//! Starts a server on a scratch database (see `common`), a 100,000-seat venue and an event;
//! `concurrency` clients send requests back to back for `seconds` per phase, from this same
//! machine. Compare with `../shared/ceilings/ceilings.sh` run in the same window.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use boxoffice_client::{mint_user_token, Client};
use boxoffice_core::ids::{EventId, VenueId};
use boxoffice_server::config::HoldStoreKind;
use serde_json::json;

mod common;
use common::{ms, quantile, Bench};

const ROWS: usize = 100;
const PER_ROW: usize = 1000;
const USERS: usize = 2000;

/// What one phase sends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// `GET /healthz`: what the client, the server and HTTP cost without any store.
    Floor,
    /// A different seat every request; every hold is granted.
    Spread,
    /// The same seat every request; one hold is granted.
    Hot,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let seconds: u64 = args.next().map_or(Ok(10), |s| s.parse())?;
    let concurrency: usize = args.next().map_or(Ok(32), |s| s.parse())?;
    let pool_size: u32 = args.next().map_or(Ok(8), |s| s.parse())?;
    let store = match args.next().as_deref() {
        None | Some("postgres") => HoldStoreKind::Postgres,
        Some("redis") => HoldStoreKind::Redis,
        Some(other) => anyhow::bail!("unknown hold store {other:?}: postgres or redis"),
    };
    println!("hold store: {store:?}");
    let bench = common::start(pool_size, store).await?;
    let result = run(&bench, Duration::from_secs(seconds), concurrency, pool_size).await;
    bench.finish().await?;
    result
}

/// The event sells the whole venue; holds last one second, so a seat is free again by the
/// time the spread phase comes back round to it and every spread hold is granted.
async fn create_event(api: &Client, venue: VenueId) -> anyhow::Result<EventId> {
    let spec = serde_json::from_value(json!({"venue_id": venue, "name": "Bench",
        "starts_at": "2030-01-01T20:00:00Z", "hold_ttl_seconds": 1, "max_hold_seconds": 1,
        "max_seats_per_user": 100,
        "ticket_types": [{"code": "standard", "name": "Standard", "price_cents": 1000, "currency": "EUR"}],
        "allocations": [{"ticket_type": "standard", "section": "floor"}]}))?;
    Ok(api.create_event(&spec).await?.id)
}

async fn run(
    bench: &Bench,
    duration: Duration,
    concurrency: usize,
    pool_size: u32,
) -> anyhow::Result<()> {
    let client = reqwest::Client::new();
    let api = Client::with_http(&bench.base, client.clone()).admin("bench");
    let rows: Vec<_> = (0..ROWS)
        .map(|r| json!({"label": format!("R{r}"), "seats": PER_ROW}))
        .collect();
    let venue = api
        .create_venue(&serde_json::from_value(json!(
            {"name": "Arena", "sections": [{"id": "floor", "name": "Floor", "rows": rows}]}
        ))?)
        .await?
        .id;
    let expiry = chrono::Utc::now() + chrono::Duration::hours(1);
    let secret = bench.jwt_secret.expose();
    let tokens: Arc<Vec<String>> = Arc::new(
        (0..USERS)
            .map(|u| mint_user_token(secret, &format!("user-{u}"), expiry))
            .collect(),
    );
    println!(
        "{concurrency} clients, {} s per phase, server pool {pool_size} connections",
        duration.as_secs()
    );

    for phase in [Phase::Floor, Phase::Spread, Phase::Hot] {
        let event = create_event(&api, venue).await?;
        sqlx::query("checkpoint").execute(&bench.pool).await?;
        tokio::time::sleep(Duration::from_secs(3)).await; // let WAL I/O settle between phases
        let next = Arc::new(AtomicUsize::new(0));
        let started = Instant::now();
        let workers: Vec<_> = (0..concurrency)
            .map(|_| {
                let (client, tokens, next) = (client.clone(), tokens.clone(), next.clone());
                let url = match phase {
                    Phase::Floor => format!("{}/healthz", bench.base),
                    _ => format!("{}/v1/events/{event}/holds", bench.base),
                };
                tokio::spawn(async move {
                    let mut seen = Vec::new();
                    while started.elapsed() < duration {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let seat = if phase == Phase::Hot {
                            0
                        } else {
                            i % (ROWS * PER_ROW)
                        };
                        let seat = format!("floor-R{}-{}", seat / PER_ROW, seat % PER_ROW + 1);
                        let sent = Instant::now();
                        let request = match phase {
                            Phase::Floor => client.get(&url),
                            _ => client
                                .post(&url)
                                .bearer_auth(&tokens[i % USERS])
                                .json(&json!({"seats": [seat]})),
                        };
                        let status = request
                            .send()
                            .await
                            .map(|r| r.status().as_u16())
                            .unwrap_or(0);
                        seen.push((status, sent.elapsed()));
                    }
                    seen
                })
            })
            .collect();
        let mut statuses = BTreeMap::new();
        let mut latencies = Vec::new();
        for worker in workers {
            for (status, latency) in worker.await? {
                *statuses.entry(status).or_insert(0usize) += 1;
                latencies.push(latency);
            }
        }
        let elapsed = started.elapsed();
        latencies.sort();
        println!(
            "{}: {:.0} requests/s ({} in {:.1} s), statuses {:?}, p50 {} p99 {}",
            match phase {
                Phase::Floor => "GET /healthz (HTTP floor of this harness)",
                Phase::Spread => "holds, spread seats",
                Phase::Hot => "holds, one hot seat",
            },
            latencies.len() as f64 / elapsed.as_secs_f64(),
            latencies.len(),
            elapsed.as_secs_f64(),
            statuses,
            ms(quantile(&latencies, 0.5)),
            ms(quantile(&latencies, 0.99)),
        );
    }
    Ok(())
}
