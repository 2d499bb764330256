//! Arranging and reading the stores directly, behind the API's back: holds and sales
//! written as the stores record them, and what the hold store holds.

use boxoffice_client::api::{SeatChange, SeatsChanged};
use boxoffice_client::live::LiveEvent;
use boxoffice_core::availability::SeatStatus;
use boxoffice_core::ids::EventId;
use boxoffice_server::config::HoldStoreKind;
use boxoffice_store::redis::holds::keys;
use boxoffice_store::redis::link::RedisLink;
use futures::StreamExt;
use serde_json::Value;

use super::TestApp;

/// Marks `seats` of `event` held until `expires_in` from now (negative: already expired), as
/// the postgres hold store records a hold.
pub async fn hold_directly(
    app: &TestApp,
    event: &str,
    seats: &[&str],
    expires_in: chrono::Duration,
) {
    let event: uuid::Uuid = event.parse().unwrap();
    sqlx::query(
        "insert into reservation (event_id, seat_id, hold_token, user_id, status, ticket_type,
                                  price_cents, created_at, expires_at)
         select $1, s, $2, 'someone', 'H', 'standard', 4500, now(), now() + $3 from unnest($4::text[]) s",
    )
    .bind(event)
    .bind(uuid::Uuid::new_v4())
    .bind(sqlx::postgres::types::PgInterval::try_from(expires_in).unwrap())
    .bind(seats)
    .execute(&app.db)
    .await
    .unwrap();
}

/// Records an order for `seats` of `event`, as checkout does.
pub async fn sell_directly(app: &TestApp, event: &str, seats: &[&str]) {
    let token = uuid::Uuid::new_v4().to_string();
    commit_order_directly(app, event, "buyer", &token, seats).await;
}

/// Records `user`'s order of `seats` from the hold `token`, as checkout commits it in
/// Postgres, and nothing else: not what the hold store does after the commit.
pub async fn commit_order_directly(
    app: &TestApp,
    event: &str,
    user: &str,
    token: &str,
    seats: &[&str],
) {
    let event: uuid::Uuid = event.parse().unwrap();
    let order = uuid::Uuid::new_v4();
    let mut tx = app.db.begin().await.unwrap();
    sqlx::query(
        "insert into ticket_order (event_id, order_id, user_id, hold_token, total_cents, currency)
         values ($1, $2, $3, $4::uuid, 0, 'EUR')",
    )
    .bind(event)
    .bind(order)
    .bind(user)
    .bind(token)
    .execute(&mut *tx)
    .await
    .unwrap();
    sqlx::query(
        "insert into order_seat (event_id, order_id, seat_id, ticket_type, price_cents)
         select $1, $2, s, 'standard', 4500 from unnest($3::text[]) s",
    )
    .bind(event)
    .bind(order)
    .bind(seats)
    .execute(&mut *tx)
    .await
    .unwrap();
    tx.commit().await.unwrap();
}

/// The seat ids a query over the test's database returns.
pub async fn seat_set(app: &TestApp, query: &'static str) -> std::collections::HashSet<String> {
    sqlx::query_scalar(query)
        .fetch_all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .collect()
}

/// Ids of the seats the hold store holds live in `event`, sorted.
pub async fn held(app: &TestApp, event: &str) -> Vec<String> {
    let mut seats: Vec<String> = app
        .holds
        .held_seats(EventId(event.parse().unwrap()))
        .await
        .expect("the hold store answers")
        .into_iter()
        .map(|h| h.seat_id)
        .collect();
    seats.sort();
    seats
}

/// Makes the hold `token` look as if it was created `created_ago` seconds ago and lapses
/// `expires_in` seconds from now (negative: it has lapsed), by the hold store's own clock,
/// as the store in use records holds. Returns the new creation time.
///
/// The change feed is told the new expiry, as it would be of a real hold's, and the
/// server has taken it in when this returns: servers refuse seats they know are held
/// without asking the store, by the expiry the feed last gave them.
pub async fn rewind_hold(
    app: &TestApp,
    event: &str,
    token: &str,
    created_ago: f64,
    expires_in: f64,
) -> chrono::DateTime<chrono::Utc> {
    let (created, seats) = rewind_in_store(app, event, token, created_ago, expires_in).await;
    let until = chrono::Utc::now() + chrono::Duration::milliseconds((expires_in * 1000.0) as i64);
    tell_the_feed(app, event, &seats, until).await;
    created
}

/// Sends the change feed these seats held until `until`, and waits until `app` has it.
async fn tell_the_feed(
    app: &TestApp,
    event: &str,
    seats: &[String],
    until: chrono::DateTime<chrono::Utc>,
) {
    let id = EventId::parse(event).unwrap();
    let mut stream = Box::pin(app.typed().stream(id).await.expect("streams"));
    // Subscribed once the snapshot is in: what is sent from now on reaches the stream.
    let first = stream.next().await.expect("a snapshot").expect("it reads");
    assert!(matches!(first, LiveEvent::Snapshot(_)), "{first:?}");
    let changes: Vec<SeatChange> = seats
        .iter()
        .map(|seat| SeatChange {
            id: seat.clone(),
            status: SeatStatus::Held,
            held_until: Some(until),
        })
        .collect();
    let payload = format!(
        "{event} seats {}",
        serde_json::to_string(&SeatsChanged {
            seats: changes.clone()
        })
        .unwrap()
    );
    sqlx::query("select pg_notify('boxoffice_live', $1)")
        .bind(payload)
        .execute(&app.db)
        .await
        .unwrap();
    let arrived = tokio::time::timeout(std::time::Duration::from_secs(5), async {
        while let Some(next) = stream.next().await {
            if let LiveEvent::Seats(changed) = next.expect("the stream reads") {
                if changed.seats == changes {
                    return;
                }
            }
        }
        panic!("the stream ended");
    })
    .await;
    assert!(
        arrived.is_ok(),
        "the server never heard of the rewound hold"
    );
}

/// Rewinds the hold in the store; answers its creation time and seats.
async fn rewind_in_store(
    app: &TestApp,
    event: &str,
    token: &str,
    created_ago: f64,
    expires_in: f64,
) -> (chrono::DateTime<chrono::Utc>, Vec<String>) {
    match app.hold_store {
        HoldStoreKind::Postgres => {
            let rows: Vec<(chrono::DateTime<chrono::Utc>, String)> = sqlx::query_as(
                "update reservation set created_at = now() - make_interval(secs => $2),
                                        expires_at = now() + make_interval(secs => $3)
                  where hold_token = $1::uuid returning created_at, seat_id",
            )
            .bind(token)
            .bind(created_ago)
            .bind(expires_in)
            .fetch_all(&app.db)
            .await
            .unwrap();
            let created = rows.first().expect("the hold exists").0;
            (created, rows.into_iter().map(|(_, seat)| seat).collect())
        }
        HoldStoreKind::Redis => {
            let event = EventId(event.parse().unwrap());
            let token: uuid::Uuid = token.parse().unwrap();
            let link = RedisLink::new(&app.redis).unwrap();
            let mut conn = link.connection().await.unwrap();
            let (user, seats): (String, String) = redis::cmd("HMGET")
                .arg(keys::hold(event, token))
                .arg(&["u", "s"])
                .query_async(&mut conn)
                .await
                .expect("the hold exists");
            let seats: Vec<String> = serde_json::from_str::<Vec<Value>>(&seats)
                .unwrap()
                .iter()
                .map(|s| s["id"].as_str().unwrap().to_owned())
                .collect();
            let mut call = REWIND.key(keys::hold(event, token));
            call.key(keys::held(event)).key(keys::user(event, &user));
            for seat in &seats {
                call.key(keys::seat(event, seat));
            }
            call.arg((created_ago * 1000.0) as i64)
                .arg((expires_in * 1000.0) as i64);
            for seat in &seats {
                call.arg(seat);
            }
            let created: i64 = call.invoke_async(&mut conn).await.unwrap();
            (
                chrono::DateTime::from_timestamp_millis(created).unwrap(),
                seats,
            )
        }
    }
}

/// Rewrites a hold's times in Redis: KEYS hold, held, user, seats...; ARGV created ago
/// (ms), expires in (ms), seat ids.... Returns the new creation time (ms).
static REWIND: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local created = now - tonumber(ARGV[1])
local expires = now + tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'c', created, 'x', expires)
for i = 4, #KEYS do
  local seat = ARGV[i - 1]
  redis.call('ZADD', KEYS[2], expires, seat)
  redis.call('ZADD', KEYS[3], expires, seat)
  if expires > now then redis.call('PEXPIREAT', KEYS[i], expires) else redis.call('DEL', KEYS[i]) end
end
if expires > now then redis.call('PEXPIREAT', KEYS[1], expires) else redis.call('DEL', KEYS[1]) end
return created
",
    )
});
