//! `boxoffice race ga --unsafe`: the naive read-then-write booking, overselling on a
//! scratch table of its own. It never touches the server, nor any of its tables.

use std::sync::Arc;
use std::time::Duration;

use sqlx::AssertSqlSafe;
use sqlx::Connection;
use tokio::sync::Barrier;

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
    sqlx::query(AssertSqlSafe(format!(
        "create table {table} (seats_left integer not null, bookings integer not null)"
    )))
    .execute(&mut setup)
    .await?;
    sqlx::query(AssertSqlSafe(format!("insert into {table} values ($1, 0)")))
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
                    let left: i32 = sqlx::query_scalar(AssertSqlSafe(format!(
                        "select seats_left from {table}"
                    )))
                    .fetch_one(&mut conn)
                    .await?;
                    if left < 1 {
                        return Ok::<bool, anyhow::Error>(false);
                    }
                    // … the app thinks for a moment (payment, validation) …
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    // … then writes the number it computed. Nothing stops two buyers who
                    // both read "1 left" from both booking it.
                    sqlx::query(AssertSqlSafe(format!(
                        "update {table} set seats_left = $1, bookings = bookings + 1"
                    )))
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
    sqlx::query(AssertSqlSafe(format!("drop table {table}")))
        .execute(&mut setup)
        .await?;
    let booked = outcome?;
    let oversold = booked.saturating_sub(places as usize);
    Ok(format!(
        "{booked} bookings for {places} places: {oversold} oversold"
    ))
}
