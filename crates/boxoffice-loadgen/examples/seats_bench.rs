//! Benchmark of `GET /v1/events/{id}/seats` and `/availability` on a 100,000-seat venue.
//!
//! Starts a server on a scratch database, creates the venue and an event with 10% of the
//! seats held and 10% sold, then times sequential requests end to end (through the socket,
//! body read in full). Run it in release mode:
//!
//! ```sh
//! cargo run --release -p boxoffice-loadgen --example seats_bench [requests]
//! ```
//!
//! `BOXOFFICE_TEST_DATABASE_URL` names the Postgres server (default
//! `postgres://postgres@127.0.0.1:5432`). The scratch database is dropped at the end.

use std::time::Instant;

use serde_json::json;

mod common;
use common::{ms, quantile};

const SECTIONS: usize = 4;
const ROWS: usize = 50;
const SEATS_PER_ROW: u32 = 500;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let requests: usize = std::env::args().nth(1).map_or(Ok(100), |n| n.parse())?;
    let bench = common::start(16, boxoffice_server::config::HoldStoreKind::Postgres).await?;
    let result = run(&bench, requests).await;
    bench.finish().await?;
    result
}

async fn run(bench: &common::Bench, requests: usize) -> anyhow::Result<()> {
    let (base, pool) = (&bench.base, &bench.pool);
    let client = reqwest::Client::new();

    let sections: Vec<_> = (0..SECTIONS)
        .map(|s| {
            let rows: Vec<_> = (0..ROWS).map(|r| json!({"label": format!("R{r}"), "seats": SEATS_PER_ROW})).collect();
            json!({"id": format!("s{s}"), "name": format!("Section {s}"), "origin": {"x": 0, "y": s * 60}, "rows": rows})
        })
        .collect();
    let api = boxoffice_client::Client::with_http(base, client.clone()).admin("bench");
    let started = Instant::now();
    let venue = api
        .create_venue(&serde_json::from_value(
            json!({"name": "Stadium", "sections": sections}),
        )?)
        .await?;
    println!(
        "created a venue of {} seats in {:?}",
        venue.seat_count,
        started.elapsed()
    );

    let started = Instant::now();
    let event = api
        .create_event(&serde_json::from_value(json!({"venue_id": venue.id, "name": "Final", "starts_at": "2030-06-01T18:00:00Z",
            "ticket_types": [{"code": "standard", "name": "Standard", "price_cents": 4500, "currency": "EUR"},
                             {"code": "premium", "name": "Premium", "price_cents": 9000, "currency": "EUR"}],
            "allocations": [{"ticket_type": "standard", "section": "s0"}, {"ticket_type": "standard", "section": "s1"},
                            {"ticket_type": "standard", "section": "s2"},
                            {"ticket_type": "premium", "section": "s0", "rows": ["R0", "R1", "R2"]}]}))?)
        .await?;
    let event_id = event.id.0;
    println!(
        "created an event allocating {} seats in {:?}",
        3 * ROWS * SEATS_PER_ROW as usize,
        started.elapsed()
    );

    // Every tenth seat held, every tenth (offset by five) sold: arranged in the tables as the
    // postgres stores record them, since 20,000 seats through the API would take longer than
    // the measurement.
    sqlx::query(
        "insert into reservation (event_id, seat_id, hold_token, user_id, status, ticket_type,
                                  price_cents, created_at, expires_at)
         select $1, seat_id, gen_random_uuid(), 'bench', 'H', 'standard', 4500, now(), now() + interval '1 hour'
           from seat where position % 10 = 0 and venue_id = (select venue_id from event where event_id = $1)",
    )
    .bind(event_id)
    .execute(pool)
    .await?;
    let order = uuid::Uuid::new_v4();
    sqlx::query("insert into ticket_order (event_id, order_id, user_id, hold_token, total_cents, currency) values ($1, $2, 'bench', gen_random_uuid(), 0, 'EUR')")
        .bind(event_id)
        .bind(order)
        .execute(pool)
        .await?;
    sqlx::query(
        "insert into order_seat (event_id, order_id, seat_id, ticket_type, price_cents)
         select $1, $2, seat_id, 'standard', 4500
           from seat where position % 10 = 5 and venue_id = (select venue_id from event where event_id = $1)",
    )
    .bind(event_id)
    .bind(order)
    .execute(pool)
    .await?;

    for path in ["seats", "availability"] {
        let url = format!("{base}/v1/events/{event_id}/{path}");
        let started = Instant::now();
        let first = client
            .get(&url)
            .send()
            .await?
            .error_for_status()?
            .bytes()
            .await?;
        let cold = started.elapsed();
        let mut times = Vec::with_capacity(requests);
        for _ in 0..requests {
            let started = Instant::now();
            let body = client
                .get(&url)
                .send()
                .await?
                .error_for_status()?
                .bytes()
                .await?;
            times.push(started.elapsed());
            assert_eq!(body.len(), first.len());
        }
        times.sort();
        let pct = |p: f64| quantile(&times, p);
        println!(
            "GET /v1/events/{{id}}/{path}: {} bytes; first (seat map not cached) {}; {requests} more: p50 {} p90 {} p99 {} max {}",
            first.len(),
            ms(cold),
            ms(pct(0.5)),
            ms(pct(0.9)),
            ms(pct(0.99)),
            ms(times[times.len() - 1]),
        );
    }
    Ok(())
}
