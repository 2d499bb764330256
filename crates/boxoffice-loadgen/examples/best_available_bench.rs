//! Buyers asking for the best seats all at once, on either hold store: `buyers` requests
//! for `quantity` seats each, released together, for `rounds` rounds into one event of
//! `rows` rows of 1,000 seats; holds granted per second from the release to the last
//! answer, the answers' latency and statuses, and a check that no seat went twice.
//!
//! ```sh
//! cargo run --release -p boxoffice-loadgen --example best_available_bench [buyers] [quantity] [rounds] [rows] [postgres|redis]
//! ```

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use boxoffice_client::{mint_user_token, Client};
use boxoffice_server::config::HoldStoreKind;
use serde_json::{json, Value};

mod common;
use common::{ms, quantile};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let buyers: usize = args.next().map_or(Ok(500), |s| s.parse())?;
    let quantity: u32 = args.next().map_or(Ok(2), |s| s.parse())?;
    let rounds: usize = args.next().map_or(Ok(5), |s| s.parse())?;
    let rows: usize = args.next().map_or(Ok(20), |s| s.parse())?;
    let store = match args.next().as_deref() {
        None | Some("postgres") => HoldStoreKind::Postgres,
        Some("redis") => HoldStoreKind::Redis,
        Some(other) => anyhow::bail!("unknown hold store {other:?}: postgres or redis"),
    };
    let bench = common::start(8, store).await?;
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(buyers)
        .build()?;
    let api = Client::with_http(&bench.base, client.clone()).admin("bench");
    let layout: Vec<_> = (0..rows)
        .map(|r| json!({"label": format!("R{r}"), "seats": 1000}))
        .collect();
    let venue = api
        .create_venue(&serde_json::from_value(json!(
            {"name": "Arena", "sections": [{"id": "floor", "name": "Floor", "rows": layout}]}
        ))?)
        .await?
        .id;
    let event = api
        .create_event(&serde_json::from_value(json!({"venue_id": venue, "name": "Bench",
            "starts_at": "2030-01-01T20:00:00Z", "max_seats_per_user": 8,
            "ticket_types": [{"code": "standard", "name": "Standard", "price_cents": 1000, "currency": "EUR"}],
            "allocations": [{"ticket_type": "standard", "section": "floor"}]}))?)
        .await?
        .id;
    println!(
        "hold store {store:?}: {buyers} buyers × {quantity} seats released together, {rounds} rounds, {} seats",
        rows * 1000
    );
    let expiry = chrono::Utc::now() + chrono::Duration::hours(1);
    let secret = bench.jwt_secret.expose();
    let url = format!("{}/v1/events/{event}/holds", bench.base);
    let mut seats = HashSet::new();
    for round in 0..rounds {
        let calls: Vec<_> = (0..buyers)
            .map(|b| {
                let token = mint_user_token(secret, &format!("buyer-{round}-{b}"), expiry);
                let request = client
                    .post(&url)
                    .bearer_auth(token)
                    .json(&json!({"best_available": {"quantity": quantity}}));
                async move {
                    let sent = Instant::now();
                    let response = request.send().await;
                    let status = response.as_ref().map_or(0, |r| r.status().as_u16());
                    let body: Value = match response {
                        Ok(r) => r.json().await.unwrap_or(Value::Null),
                        Err(_) => Value::Null,
                    };
                    (status, body, sent.elapsed())
                }
            })
            .collect();
        let started = Instant::now();
        let answers = boxoffice_client::release::together(calls).await;
        let elapsed = started.elapsed();
        let mut statuses = BTreeMap::new();
        let mut latencies: Vec<Duration> = Vec::new();
        let mut adjacent = 0;
        for (status, body, latency) in &answers {
            *statuses.entry(*status).or_insert(0usize) += 1;
            latencies.push(*latency);
            if *status == 201 {
                adjacent += usize::from(body["adjacent"] == true);
                for seat in body["seats"].as_array().into_iter().flatten() {
                    let id = seat["id"].as_str().unwrap_or_default().to_owned();
                    anyhow::ensure!(seats.insert(id.clone()), "{id} was held twice");
                }
            }
        }
        latencies.sort();
        let granted = statuses.get(&201).copied().unwrap_or(0);
        println!(
            "round {round}: {:.0} holds/s ({granted} granted, {adjacent} side by side, in {}), statuses {statuses:?}, p50 {} p99 {} max {}",
            granted as f64 / elapsed.as_secs_f64(),
            ms(elapsed),
            ms(quantile(&latencies, 0.5)),
            ms(quantile(&latencies, 0.99)),
            ms(*latencies.last().unwrap_or(&Duration::ZERO)),
        );
    }
    bench.finish().await?;
    Ok(())
}
