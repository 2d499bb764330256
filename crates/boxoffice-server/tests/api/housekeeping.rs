//! Housekeeping the server does by itself: sweeping old idempotency answers, delivered
//! outbox rows, and rows that waited 7 days for their organization's webhook.

use std::time::{Duration, Instant};

use boxoffice_store::pg::sweep::Retention;

use crate::helpers::spawn_app_with;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn old_answers_and_delivered_outbox_rows_are_swept_in_batches_and_nothing_else() {
    let app = spawn_app_with(|s| {
        s.operations.retention = Retention {
            idempotency: Duration::from_secs(3600),
            delivered_outbox: Duration::from_secs(2 * 3600),
        };
        s.operations.sweep_interval = Duration::from_millis(100);
    })
    .await;
    // More old rows than one batch deletes, and rows that must stay: fresh answers,
    // rows delivered lately, and old rows never delivered that a relay has tried.
    sqlx::query(
        "insert into idempotency (event_id, user_id, key, fingerprint, status, body, created_at)
         select gen_random_uuid(), 'u', 'old-' || i, 'f', 201, '{}'::jsonb, now() - interval '2 hours'
           from generate_series(1, 1500) i
         union all
         select gen_random_uuid(), 'u', 'fresh-' || i, 'f', 201, '{}'::jsonb, now() - interval '50 minutes'
           from generate_series(1, 3) i",
    )
    .execute(&app.db)
    .await
    .unwrap();
    sqlx::query(
        "insert into outbox (event_id, topic, payload, created_at, delivered_at, attempts)
         select gen_random_uuid(), 't', '{}'::jsonb, now() - interval '3 hours', now() - interval '3 hours', 1
           from generate_series(1, 1200)
         union all
         select gen_random_uuid(), 't', '{}'::jsonb, now() - interval '3 hours', now() - interval '1 hour', 1
           from generate_series(1, 2)
         union all
         select gen_random_uuid(), 't', '{}'::jsonb, now() - interval '10 days', null, 3
           from generate_series(1, 2)",
    )
    .execute(&app.db)
    .await
    .unwrap();

    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (answers, outbox) = (app.count("idempotency").await, app.count("outbox").await);
        if (answers, outbox) == (3, 4) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not swept: {answers} answers, {outbox} outbox rows left"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let kept: Vec<String> = sqlx::query_scalar("select key from idempotency order by key")
        .fetch_all(&app.db)
        .await
        .unwrap();
    assert_eq!(kept, ["fresh-1", "fresh-2", "fresh-3"]);
    let undelivered: i64 =
        sqlx::query_scalar("select count(*) from outbox where delivered_at is null")
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert_eq!(
        undelivered, 2,
        "undelivered rows a relay has tried are never swept, however old"
    );
}
