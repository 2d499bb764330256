//! The postgres store's claims sent together: each claim of a batch is judged as if it
//! came alone, after the ones before it, whatever its company does (waits on a lock, times
//! out, fails).
//!
//! These servers run without the adaptive limit: what is tested is the store's batch, and
//! a batch needs more claims in flight at once than the limit's floor lets through.

use std::collections::BTreeMap;
use std::time::Duration;

use reqwest::StatusCode;

use crate::helpers::{big_event, hold_request, race, tally};
use crate::helpers::{held, read, spawn_app, spawn_app_with, TestApp};

/// The postgres store sends the claims waiting on an instance together, in one call. While
/// two buyers' claims wait on their locks (taken elsewhere), every other claim is settled,
/// each judged as if it came alone: distinct seats are all held, a seat wanted by ten is
/// held once, a buyer asking five times with a limit of two gets two. The two waiting are
/// claimed, alone, once their locks are let go, and each seat ends up held once.
#[tokio::test]
async fn claims_sent_together_are_judged_one_by_one_and_a_stuck_one_holds_up_none() {
    let app = spawn_app_with(|s| {
        s.stores.database.pool_size = 8;
        s.stores.database.acquire_timeout = Duration::from_secs(30);
        s.limits.overload = None;
        // Longer than the whole test: the stuck claims wait for the test, not a timeout.
        s.stores.database.lock_timeout = Duration::from_secs(60);
        s.limits.request_timeout = Duration::from_secs(60);
    })
    .await;
    let event = big_event(&app, 2, 20, 2).await;
    let locks = app.user_locks(&event, &["alice", "carol"]).await;
    let stuck: Vec<_> = [("alice", "floor-R1-1"), ("carol", "floor-R1-2")]
        .into_iter()
        .map(|(user, seat)| {
            let request = hold_request(&app, &event, user, &[seat.to_owned()]);
            tokio::spawn(async move { read(request.send().await.unwrap()).await.0 })
        })
        .collect();
    while app.claims_waiting_on_a_buyer().await < 2 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    let mut requests: Vec<_> = (1..=20)
        .map(|n| {
            hold_request(
                &app,
                &event,
                &format!("fan-{n}"),
                &[format!("floor-R0-{n}")],
            )
        })
        .collect();
    requests.extend((0..10).map(|i| {
        hold_request(
            &app,
            &event,
            &format!("buyer-{i}"),
            &["floor-R1-10".to_owned()],
        )
    }));
    requests
        .extend((11..=15).map(|n| hold_request(&app, &event, "dave", &[format!("floor-R1-{n}")])));
    let answers = race(requests).await;
    assert_eq!(
        tally(&answers[..20]),
        BTreeMap::from([(201, 20)]),
        "distinct seats are all held"
    );
    assert_eq!(
        tally(&answers[20..30]),
        BTreeMap::from([(201, 1), (409, 9)]),
        "one seat is held once"
    );
    assert_eq!(
        tally(&answers[30..]),
        BTreeMap::from([(201, 2), (409, 3)]),
        "a buyer's limit is kept"
    );
    assert!(answers[30..]
        .iter()
        .filter(|(s, _)| *s == StatusCode::CONFLICT)
        .all(|(_, p)| p["code"] == "hold_limit_exceeded"));
    assert!(
        stuck.iter().all(|s| !s.is_finished()),
        "the claims behind the locks are still waiting"
    );

    locks.commit().await.unwrap();
    for s in stuck {
        assert_eq!(s.await.unwrap(), StatusCode::CREATED);
    }
    let held = held(&app, &event).await;
    assert_eq!(held.len(), 25, "{held:?}");
    assert_eq!(
        held.iter().collect::<std::collections::BTreeSet<_>>().len(),
        25,
        "each seat is held once"
    );
    assert_eq!(app.count("reservation").await, 25);
}

/// A batch of claims that fails as a whole, here on a statement timeout one slow claim
/// met, answers for none of its claims: each is claimed again alone, and only the slow one
/// fails (503, as a statement timeout alone answers).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_statement_timeout_in_a_batch_fails_only_the_claim_that_met_it() {
    let app = spawn_app_with(|s| {
        s.stores.database.pool_size = 8;
        s.stores.database.acquire_timeout = Duration::from_secs(30);
        s.limits.overload = None;
        s.stores.database.statement_timeout = Duration::from_secs(2);
        s.limits.request_timeout = Duration::from_secs(60);
    })
    .await;
    let event = big_event(&app, 2, 20, 2).await;
    // A slowpoke's seat sleeps on its way into the reservation table, past any statement's
    // time: whatever statement claims it times out.
    for statement in [
        "create function slow_claim() returns trigger language plpgsql
           as $$ begin perform pg_sleep(60); return new; end $$",
        "create trigger slow_claim before insert on reservation for each row
           when (new.user_id like 'slowpoke%') execute function slow_claim()",
    ] {
        sqlx::query(statement).execute(&app.db).await.unwrap();
    }
    let sleeping = || async {
        sqlx::query_scalar::<_, i64>(
            "select count(*) from pg_stat_activity
              where wait_event = 'PgSleep' and datname = current_database()",
        )
        .fetch_one(&app.db)
        .await
        .unwrap()
    };
    // Every lane of the store (one per core) busy with a slowpoke of its own, so that the
    // claims sent next all wait, and the first lane free takes them in one batch.
    let lanes = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut busy = Vec::new();
    for n in 1..=lanes {
        let request = hold_request(
            &app,
            &event,
            &format!("slowpoke-{n}"),
            &[format!("floor-R1-{n}")],
        );
        busy.push(tokio::spawn(async move {
            read(request.send().await.unwrap()).await.0
        }));
        while sleeping().await < n as i64 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    let mut requests: Vec<_> = (1..=20)
        .map(|n| {
            hold_request(
                &app,
                &event,
                &format!("fan-{n}"),
                &[format!("floor-R0-{n}")],
            )
        })
        .collect();
    requests.push(hold_request(
        &app,
        &event,
        "slowpoke-last",
        &["floor-R1-20".to_owned()],
    ));
    let answers = race(requests).await;
    assert_eq!(
        tally(&answers[..20]),
        BTreeMap::from([(201, 20)]),
        "the slow claim's company is held: {answers:?}"
    );
    assert_eq!(
        answers[20].0,
        StatusCode::SERVICE_UNAVAILABLE,
        "{:?}",
        answers[20]
    );
    for slowpoke in busy {
        assert_eq!(slowpoke.await.unwrap(), StatusCode::SERVICE_UNAVAILABLE);
    }
    let held = held(&app, &event).await;
    let mut expected: Vec<String> = (1..=20).map(|n| format!("floor-R0-{n}")).collect();
    expected.sort();
    assert_eq!(held, expected, "the fans' seats are held, no slowpoke's");
}

/// One call of `boxoffice_claim_holds`, as a lane of the postgres store sends it, made up
/// so that every path of it runs: the holds whose seats and buyer come up nowhere else
/// are claimed in one statement, every other hold one by one; each answers what it would
/// alone, after the holds before it.
#[tokio::test]
async fn a_batch_answers_each_hold_as_if_alone_however_it_is_claimed() {
    let app = spawn_app().await;
    let event = big_event(&app, 1, 20, 2).await;
    for (user, seats) in [
        ("other", vec!["floor-R0-2"]),
        ("fan-3", vec!["floor-R0-18", "floor-R0-19"]),
    ] {
        let seats: Vec<String> = seats.into_iter().map(str::to_owned).collect();
        let (status, body) = read(
            hold_request(&app, &event, user, &seats)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let answers = claim_together(
        &app,
        &event,
        &[
            ("fan-1", &["floor-R0-1"]),
            ("fan-2", &["floor-R0-2"]),
            ("fan-3", &["floor-R0-3"]),
            ("x-1", &["floor-R0-4"]),
            ("x-2", &["floor-R0-4"]),
            ("dave", &["floor-R0-5"]),
            ("dave", &["floor-R0-6"]),
            ("dave", &["floor-R0-7"]),
            ("erin", &["floor-R0-2", "floor-R0-8"]),
            ("fan-4", &["floor-R0-10"]),
        ],
    )
    .await;
    let expected = [
        ("held", vec!["floor-R0-1"]),
        ("unavailable", vec!["floor-R0-2"]),
        ("limit", vec![]),
        ("held", vec!["floor-R0-4"]),
        ("unavailable", vec!["floor-R0-4"]),
        ("held", vec!["floor-R0-5"]),
        ("held", vec!["floor-R0-6"]),
        ("limit", vec![]),
        ("unavailable", vec!["floor-R0-2"]),
        ("held", vec!["floor-R0-10"]),
    ];
    assert_eq!(answers, answer_list(&expected));

    // A buyer whose lock is taken elsewhere makes the one statement give up: its holds
    // are claimed one by one, and only that buyer's is left for the server to retry.
    let locks = app.user_locks(&event, &["zed"]).await;
    let answers = claim_together(
        &app,
        &event,
        &[
            ("fan-5", &["floor-R0-11"]),
            ("zed", &["floor-R0-12"]),
            ("fan-6", &["floor-R0-13"]),
        ],
    )
    .await;
    locks.rollback().await.unwrap();
    let expected = [
        ("held", vec!["floor-R0-11"]),
        ("retry", vec![]),
        ("held", vec!["floor-R0-13"]),
    ];
    assert_eq!(answers, answer_list(&expected));

    // Baskets of two go in the one statement too, each counted whole against its buyer's
    // limit (other holds one seat, of two); one that would get some of its seats and not
    // all (floor-R0-18 is fan-3's) makes the statement roll back, and every hold of it is
    // claimed alone: all or nothing for each.
    let answers = claim_together(
        &app,
        &event,
        &[
            ("gus", &["floor-R0-14", "floor-R0-15"]),
            ("hal", &["floor-R0-16", "floor-R0-18"]),
            ("ivy", &["floor-R0-17"]),
            ("other", &["floor-R0-20", "floor-R0-9"]),
        ],
    )
    .await;
    let expected = [
        ("held", vec!["floor-R0-14", "floor-R0-15"]),
        ("unavailable", vec!["floor-R0-18"]),
        ("held", vec!["floor-R0-17"]),
        ("limit", vec![]),
    ];
    assert_eq!(answers, answer_list(&expected));

    let owners: BTreeMap<String, String> =
        sqlx::query_as("select seat_id, user_id from reservation where status = 'H'")
            .fetch_all(&app.db)
            .await
            .unwrap()
            .into_iter()
            .collect();
    let expected: BTreeMap<String, String> = [
        ("1", "fan-1"),
        ("2", "other"),
        ("4", "x-1"),
        ("5", "dave"),
        ("6", "dave"),
        ("10", "fan-4"),
        ("11", "fan-5"),
        ("13", "fan-6"),
        ("14", "gus"),
        ("15", "gus"),
        ("17", "ivy"),
        ("18", "fan-3"),
        ("19", "fan-3"),
    ]
    .into_iter()
    .map(|(n, user)| (format!("floor-R0-{n}"), user.to_owned()))
    .collect();
    assert_eq!(owners, expected);
}

type Answers = Vec<(String, Vec<String>)>;

fn answer_list(expected: &[(&str, Vec<&str>)]) -> Answers {
    expected
        .iter()
        .map(|(outcome, seats)| {
            let seats = seats.iter().map(|s| (*s).to_owned()).collect();
            ((*outcome).to_owned(), seats)
        })
        .collect()
}

/// Claims `holds` (buyer, basket in seat order) in one call of `boxoffice_claim_holds`
/// with the event's settings, on a connection of its own (the test's pool stays free for
/// the test's locks and looks), and returns each hold's outcome and seats, in order.
async fn claim_together(app: &TestApp, event: &str, holds: &[(&str, &[&str])]) -> Answers {
    use sqlx::Connection;
    let mut db = sqlx::PgConnection::connect(&app.database_url)
        .await
        .expect("a connection of the claim's own");
    let event: uuid::Uuid = event.parse().unwrap();
    let (ttl, max): (i32, i32) = sqlx::query_as(
        "select hold_ttl_seconds, max_seats_per_user from event where event_id = $1",
    )
    .bind(event)
    .fetch_one(&mut db)
    .await
    .unwrap();
    let n = holds.len();
    let (baskets, seats): (Vec<i32>, Vec<&str>) = holds
        .iter()
        .zip(1..)
        .flat_map(|((_, basket), i)| basket.iter().map(move |s| (i, *s)))
        .unzip();
    let rows: Vec<(i32, String, Option<String>)> = sqlx::query_as(
        "select hold, outcome, seat_id from boxoffice_claim_holds($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(vec![event; n])
    .bind((0..n).map(|_| uuid::Uuid::new_v4()).collect::<Vec<_>>())
    .bind(holds.iter().map(|(user, _)| *user).collect::<Vec<_>>())
    .bind(vec![f64::from(ttl); n])
    .bind(vec![i64::from(max); n])
    .bind(vec![None::<uuid::Uuid>; n])
    .bind(vec![None::<String>; n])
    .bind(baskets)
    .bind(seats)
    .fetch_all(&mut db)
    .await
    .unwrap();
    (1..=n as i32)
        .map(|i| {
            let mine: Vec<_> = rows.iter().filter(|r| r.0 == i).collect();
            assert!(!mine.is_empty(), "hold {i} is answered: {rows:?}");
            assert!(mine.iter().all(|r| r.1 == mine[0].1), "{rows:?}");
            let seats = mine.iter().filter_map(|r| r.2.clone()).collect();
            (mine[0].1.clone(), seats)
        })
        .collect()
}

/// The buyers' locks are taken before the statement that claims their seats, so its
/// snapshot sees the holds committed by whoever had a lock first: a buyer at the limit is
/// refused even when the hold that put them there commits while the batch waits for the
/// lock.
#[tokio::test]
async fn a_batch_that_waited_for_a_buyer_counts_what_they_committed_meanwhile() {
    let app = spawn_app().await;
    let event = big_event(&app, 3, 20, 1).await;
    let event_id: uuid::Uuid = event.parse().unwrap();
    for n in 1..=20 {
        let dave = format!("dave-{n}");
        let mut locks = app.user_locks(&event, &[&dave]).await;
        sqlx::query(
            "insert into reservation (event_id, seat_id, hold_token, user_id, status, ticket_type,
                                      price_cents, created_at, expires_at)
             values ($1, $2, gen_random_uuid(), $3, 'H', 'standard', 1000, now(),
                     now() + interval '1 hour')",
        )
        .bind(event_id)
        .bind(format!("floor-R2-{n}"))
        .bind(&dave)
        .execute(&mut *locks)
        .await
        .unwrap();
        let fan_seat = format!("floor-R0-{n}");
        let dave_seat = format!("floor-R1-{n}");
        let fan = format!("fan-{n}");
        let holds: [(&str, &[&str]); 2] = [(&fan, &[&fan_seat]), (&dave, &[&dave_seat])];
        // (Or after two seconds, should the batch not wait at all.)
        let commit_once_waited_for = async {
            let since = std::time::Instant::now();
            while since.elapsed() < Duration::from_secs(2) {
                if app.claims_waiting_on_a_buyer().await > 0 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            locks.commit().await.unwrap();
        };
        let (answers, ()) =
            tokio::join!(claim_together(&app, &event, &holds), commit_once_waited_for);
        assert_eq!(
            answers[0],
            ("held".to_owned(), vec![fan_seat]),
            "{answers:?}"
        );
        match answers[1].0.as_str() {
            "limit" => return,
            // The lock came too late for the batch (it waits 100 ms): try again.
            "retry" => continue,
            other => panic!("dave, at the limit, was answered {other}: {answers:?}"),
        }
    }
    panic!("the batch never got the lock in time");
}
