//! The races: release every buyer at once, tally the answers, check the totals.

use std::collections::BTreeMap;

use anyhow::{bail, Context};
use boxoffice_client::api::BookingBody;

use crate::client::Server;

/// Answers by HTTP status.
pub type Tally = BTreeMap<u16, usize>;

/// Runs `call` once per buyer, every one released at the same moment, each keeping the
/// turns the server gives (as the buyer's page does); returns each final answer's status
/// (a problem's status, or the call's success status).
async fn release<F, Fut>(tokens: &[String], success: u16, call: F) -> anyhow::Result<Vec<u16>>
where
    F: Fn(String) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = boxoffice_client::Result<()>> + Send + 'static,
{
    let calls = tokens
        .iter()
        .map(|token| {
            let (call, token) = (call.clone(), token.clone());
            async move {
                match boxoffice_client::turns::kept(|| call(token.clone())).await {
                    Ok(()) => Ok(success),
                    Err(boxoffice_client::Error::Problem(p)) => Ok(p.status),
                    Err(e) => Err(anyhow::Error::from(e)),
                }
            }
        })
        .collect();
    boxoffice_client::release::together(calls)
        .await
        .into_iter()
        .collect()
}

fn tally(answers: &[u16]) -> Tally {
    let mut counts = Tally::new();
    for status in answers {
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
    let client = server.client.clone();
    let answers = release(&tokens, 201, move |token| {
        let client = client.clone();
        async move {
            let body = BookingBody {
                area: "floor".into(),
                quantity: 1,
            };
            client.book(event, &token, &body, None).await.map(drop)
        }
    })
    .await?;
    let counts = tally(&answers);
    let booked = counts.get(&201).copied().unwrap_or(0);
    let refused = counts.get(&409).copied().unwrap_or(0);
    let availability = server.client.availability(event).await?;
    let left = availability
        .ga
        .first()
        .context("the area reports places left")?
        .left as usize;
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
    let client = server.client.clone();
    let answers = release(&tokens, 201, move |token| {
        let client = client.clone();
        async move {
            client
                .hold_seats(event, &token, &["hall-A-1"])
                .await
                .map(drop)
        }
    })
    .await?;
    let counts = tally(&answers);
    let held = counts.get(&201).copied().unwrap_or(0);
    let refused = counts.get(&409).copied().unwrap_or(0);
    let availability = server.client.availability(event).await?;
    let line = format!("{held} hold, {refused} answers of 409 (all answers: {counts:?})");
    if held != 1 || refused != buyers - 1 || availability.counts.held != 1 {
        bail!("exactly one buyer should hold the seat: {line}");
    }
    Ok(line)
}
