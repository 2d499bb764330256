//! The races: release every buyer at once, tally the answers, check the totals.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use serde_json::{json, Value};
use sqlx::Connection;
use tokio::sync::Barrier;

use crate::client::Server;

/// Answers by HTTP status.
pub type Tally = BTreeMap<u16, usize>;

/// Sends every request at the same moment; returns each answer's status and body.
async fn release(requests: Vec<reqwest::RequestBuilder>) -> anyhow::Result<Vec<(u16, Value)>> {
    let barrier = Arc::new(Barrier::new(requests.len()));
    let tasks: Vec<_> = requests
        .into_iter()
        .map(|request| {
            let barrier = barrier.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                let response = request.send().await?;
                let status = response.status().as_u16();
                Ok::<_, anyhow::Error>((status, response.json().await.unwrap_or(Value::Null)))
            })
        })
        .collect();
    let mut answers = Vec::with_capacity(tasks.len());
    for task in tasks {
        answers.push(task.await??);
    }
    Ok(answers)
}

fn tally(answers: &[(u16, Value)]) -> Tally {
    let mut counts = Tally::new();
    for (status, _) in answers {
        *counts.entry(*status).or_default() += 1;
    }
    counts
}

async fn sessions(server: &Server, n: usize) -> anyhow::Result<Vec<String>> {
    let mut tokens = Vec::with_capacity(n);
    for _ in 0..n {
        tokens.push(server.buyer().await?);
    }
    Ok(tokens)
}

/// `buyers` buyers at `places` general-admission places, one place each. Returns the line
/// to print; fails if the numbers do not add up.
pub async fn race_ga(server: &Server, buyers: usize, places: u32) -> anyhow::Result<String> {
    let event = server.create_race_event(1, places, 1).await?;
    let tokens = sessions(server, buyers).await?;
    let path = format!("/v1/events/{event}/bookings");
    let answers = release(
        tokens
            .iter()
            .map(|t| server.buyer_post(t, &path, &json!({"area": "floor", "quantity": 1})))
            .collect(),
    )
    .await?;
    let counts = tally(&answers);
    let booked = counts.get(&201).copied().unwrap_or(0);
    let refused = counts.get(&409).copied().unwrap_or(0);
    let availability = server
        .get(&format!("/v1/events/{event}/availability"))
        .await?;
    let left = availability["ga"][0]["left"]
        .as_u64()
        .context("the area reports places left")? as usize;
    let line = format!("{booked} bookings, {refused} answers of 409, {left} places left");
    if booked + refused != buyers || booked + left != places as usize || booked > places as usize {
        bail!("the numbers do not add up: {line} (all answers: {counts:?})");
    }
    Ok(line)
}

/// `buyers` buyers at one seat. Returns the line to print; fails unless exactly one holds it.
pub async fn race_seat(server: &Server, buyers: usize) -> anyhow::Result<String> {
    let event = server.create_race_event(1, 1, 1).await?;
    let tokens = sessions(server, buyers).await?;
    let path = format!("/v1/events/{event}/holds");
    let answers = release(
        tokens
            .iter()
            .map(|t| server.buyer_post(t, &path, &json!({"seats": ["hall-A-1"]})))
            .collect(),
    )
    .await?;
    let counts = tally(&answers);
    let held = counts.get(&201).copied().unwrap_or(0);
    let refused = counts.get(&409).copied().unwrap_or(0);
    let availability = server
        .get(&format!("/v1/events/{event}/availability"))
        .await?;
    let line = format!("{held} hold, {refused} answers of 409 (all answers: {counts:?})");
    if held != 1 || refused != buyers - 1 || availability["held"] != 1 {
        bail!("exactly one buyer should hold the seat: {line}");
    }
    Ok(line)
}

/// The naive booking this product exists to avoid: read the places left, let the app
/// compute the new number, write it back. Runs against a scratch table of its own (never
/// the server's tables) and drops it afterwards. Returns the line to print.
pub async fn race_ga_unsafe(
    database_url: &str,
    buyers: usize,
    places: u32,
) -> anyhow::Result<String> {
    let table = format!("race_demo_unsafe_{}", uuid::Uuid::new_v4().simple());
    let mut setup = sqlx::PgConnection::connect(database_url).await?;
    sqlx::query(&format!(
        "create table {table} (seats_left integer not null, bookings integer not null)"
    ))
    .execute(&mut setup)
    .await?;
    sqlx::query(&format!("insert into {table} values ($1, 0)"))
        .bind(places as i32)
        .execute(&mut setup)
        .await?;

    let outcome = async {
        let barrier = Arc::new(Barrier::new(buyers));
        let tasks: Vec<_> = (0..buyers)
            .map(|_| {
                let (barrier, url, table) =
                    (barrier.clone(), database_url.to_owned(), table.clone());
                tokio::spawn(async move {
                    let mut conn = sqlx::PgConnection::connect(&url).await?;
                    barrier.wait().await;
                    // Read …
                    let left: i32 = sqlx::query_scalar(&format!("select seats_left from {table}"))
                        .fetch_one(&mut conn)
                        .await?;
                    if left < 1 {
                        return Ok::<bool, anyhow::Error>(false);
                    }
                    // … the app thinks for a moment (payment, validation) …
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    // … then writes the number it computed. Nothing stops two buyers who
                    // both read "1 left" from both booking it.
                    sqlx::query(&format!(
                        "update {table} set seats_left = $1, bookings = bookings + 1"
                    ))
                    .bind(left - 1)
                    .execute(&mut conn)
                    .await?;
                    Ok(true)
                })
            })
            .collect();
        let mut booked = 0usize;
        for task in tasks {
            booked += usize::from(task.await??);
        }
        Ok::<usize, anyhow::Error>(booked)
    }
    .await;
    sqlx::query(&format!("drop table {table}"))
        .execute(&mut setup)
        .await?;
    let booked = outcome?;
    let oversold = booked.saturating_sub(places as usize);
    Ok(format!(
        "{booked} bookings for {places} places: {oversold} oversold"
    ))
}
