//! The waiting room at scale over HTTP: signed tickets, the public status and its cache
//! headers, waiting polls that make no store call, places given up or lapsed, fairness,
//! and admission that follows the hold path. (A long file: one test per promise of the
//! line at scale, several spanning two instances, with the few helpers they share.)

use std::collections::HashSet;
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use chrono::Utc;
use reqwest::{header, Method, StatusCode};
use serde_json::{json, Value};

use boxoffice_server::config::Secret;
use boxoffice_service::overload::OverloadSettings;
use boxoffice_service::queue::ticket::Tickets;

use crate::helpers::limit::{in_flight, writes_wait};
use crate::helpers::stores::{test_redis, PrivateRedis};
use crate::helpers::{
    admitted, event_with_queue, join, poll, spawn_app, spawn_app_with, As, TestApp,
};

fn code(answer: &(StatusCode, Value)) -> (StatusCode, Option<&str>) {
    (answer.0, answer.1["code"].as_str())
}

async fn leave(app: &TestApp, event: &str, ticket: &str, who: &As) -> (StatusCode, Value) {
    app.send(
        Method::DELETE,
        &format!("/v1/events/{event}/queue/{ticket}"),
        who,
        None,
    )
    .await
}

/// The line's status: the HTTP status, the `ETag`, the `Cache-Control` and the body.
async fn status(
    app: &TestApp,
    event: &str,
    etag: Option<&str>,
) -> (StatusCode, String, String, String) {
    let mut request = app
        .client
        .get(format!("{}/v1/events/{event}/queue/status", app.base));
    if let Some(etag) = etag {
        request = request.header(header::IF_NONE_MATCH, etag);
    }
    let response = request
        .header(header::ACCEPT_ENCODING, "gzip, br")
        .send()
        .await
        .unwrap();
    // One representation for every cache: never compressed, never varying.
    if response.status().is_success() {
        assert!(
            response.headers().get(header::VARY).is_none(),
            "{:?}",
            response.headers()
        );
        assert!(response.headers().get(header::CONTENT_ENCODING).is_none());
    }
    let header_of = |name| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    let (etag, cache) = (header_of(header::ETAG), header_of(header::CACHE_CONTROL));
    (
        response.status(),
        etag,
        cache,
        response.text().await.unwrap(),
    )
}

/// Waits until the line's status satisfies `done`; answers it.
async fn status_until(
    app: &TestApp,
    event: &str,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let (code, _, _, body) = status(app, event, None).await;
        assert_eq!(code, StatusCode::OK, "{body}");
        let line: Value = serde_json::from_str(&body).unwrap();
        if done(&line) {
            return line;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never {what}: {line}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_ticket_is_signed_and_one_altered_cut_or_moved_is_refused() {
    let app = spawn_app().await;
    let event = event_with_queue(&app, chrono::Duration::minutes(10), 60).await;
    let other = event_with_queue(&app, chrono::Duration::minutes(10), 60).await;
    let alice = app.buyer("alice");
    let (_, joined) = join(&app, &event, &alice).await;
    let ticket = joined["ticket"].as_str().unwrap().to_owned();
    let read = Tickets::new(&Secret::new(app.jwt_secret.clone()))
        .verify(&ticket)
        .expect("signed with the server's key");
    assert_eq!(
        (
            read.event.to_string(),
            read.user.as_str(),
            read.join,
            read.place
        ),
        (event.clone(), "alice", 1, None),
        "before the opening a ticket has no place"
    );

    let raw = URL_SAFE_NO_PAD.decode(&ticket).unwrap();
    let mut altered = raw.clone();
    altered[40] ^= 1; // the join number
    let forged = Tickets::new(&Secret::new("not the server's")).sign(&read);
    for bad in [
        URL_SAFE_NO_PAD.encode(&altered),
        URL_SAFE_NO_PAD.encode(&raw[..raw.len() - 1]),
        forged,
        "00000000-0000-0000-0000-000000000000".to_owned(),
    ] {
        let answer = poll(&app, &event, &bad, &alice).await;
        assert_eq!(
            code(&answer),
            (StatusCode::FORBIDDEN, Some("ticket_invalid")),
            "{}",
            answer.1
        );
        let answer = leave(&app, &event, &bad, &alice).await;
        assert_eq!(
            code(&answer),
            (StatusCode::FORBIDDEN, Some("ticket_invalid"))
        );
    }
    // A ticket of one line is no ticket of another.
    let answer = poll(&app, &other, &ticket, &alice).await;
    assert_eq!(
        code(&answer),
        (StatusCode::FORBIDDEN, Some("ticket_invalid"))
    );
    // Another buyer's ticket is not theirs.
    let answer = poll(&app, &event, &ticket, &app.buyer("bob")).await;
    assert_eq!(
        code(&answer),
        (StatusCode::NOT_FOUND, Some("ticket_not_found"))
    );
    // Joining again answers the same bytes.
    assert_eq!(
        join(&app, &event, &alice).await.1["ticket"],
        ticket.as_str()
    );
}

#[tokio::test]
async fn the_status_is_one_cacheable_answer_for_everyone_until_it_changes() {
    let first = spawn_app().await;
    let event = event_with_queue(&first, chrono::Duration::minutes(10), 120).await;
    let (url, secret) = (first.database_url.clone(), first.jwt_secret.clone());
    let second = spawn_app_with(move |s| {
        s.stores.database.url = url;
        s.server.jwt_secret = Secret::new(secret);
    })
    .await;
    for who in ["ann", "ben", "cid"] {
        assert_eq!(
            join(&first, &event, &first.buyer(who)).await.0,
            StatusCode::CREATED
        );
    }
    let line = status_until(&first, &event, "three waiting", |l| l["waiting"] == 3).await;
    assert_eq!(
        (
            &line["state"],
            &line["admitted_up_to"],
            &line["admit_per_minute"]
        ),
        (&json!("before_open"), &json!(0), &json!(120)),
        "{line}"
    );
    assert_eq!(line["slowed_because"], Value::Null);
    status_until(&second, &event, "three waiting", |l| l["waiting"] == 3).await;

    // Both instances answer the same bytes and tag, public for a moment.
    let (code1, etag1, cache1, body1) = status(&first, &event, None).await;
    let (code2, etag2, cache2, body2) = status(&second, &event, None).await;
    assert_eq!((code1, code2), (StatusCode::OK, StatusCode::OK));
    assert_eq!(
        (&etag1, &body1),
        (&etag2, &body2),
        "one answer for everyone"
    );
    let max_age: u32 = cache1
        .strip_prefix("public, max-age=")
        .unwrap_or_else(|| panic!("public, with a max-age: {cache1}"))
        .parse()
        .unwrap();
    assert!((1..=5).contains(&max_age), "{cache1}");
    assert_eq!(cache1, cache2);
    // Asked again with its tag: 304 and no body, while nothing changed.
    let (code, etag, _, body) = status(&first, &event, Some(&etag1)).await;
    assert_eq!(
        (code, etag.as_str(), body.as_str()),
        (StatusCode::NOT_MODIFIED, etag1.as_str(), "")
    );
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let (_, later_tag, _, later) = status(&first, &event, None).await;
    assert_eq!(
        (later_tag, later),
        (etag1.clone(), body1.clone()),
        "updated_at holds while nothing changes"
    );

    // A fourth buyer changes it: a new tag, on every instance.
    join(&first, &event, &first.buyer("dee")).await;
    let line = status_until(&second, &event, "four waiting", |l| l["waiting"] == 4).await;
    assert!(
        line["updated_at"].as_str()
            > serde_json::from_str::<Value>(&body1).unwrap()["updated_at"].as_str()
    );
    let (code, etag, _, _) = status(&second, &event, Some(&etag1)).await;
    assert_eq!(code, StatusCode::OK);
    assert_ne!(etag, etag1);

    // No waiting room, no status; no event, none either.
    let plain = first.create_event().await;
    let (code, _, _, body) = status(&first, &plain, None).await;
    assert_eq!(code, StatusCode::NOT_FOUND, "{body}");
    assert!(body.contains("queue_not_found"), "{body}");
    let (code, _, _, _) = status(&first, &uuid::Uuid::new_v4().to_string(), None).await;
    assert_eq!(code, StatusCode::NOT_FOUND);
}

/// Calls Redis has answered so far: its scripts (every waiting-room call is one).
async fn redis_calls(redis: &PrivateRedis) -> u64 {
    let info: String = ::redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut redis.connection().await)
        .await
        .unwrap();
    boxoffice_loadgen::bench::line::command_calls(&info).1
}

/// Transactions of the test's database so far, as Postgres' statistics have them.
async fn pg_transactions(app: &TestApp) -> i64 {
    let mut conn = app.db.acquire().await.unwrap();
    sqlx::query("select pg_stat_force_next_flush()")
        .execute(&mut *conn)
        .await
        .ok();
    sqlx::query("select pg_stat_clear_snapshot()")
        .execute(&mut *conn)
        .await
        .unwrap();
    sqlx::query_scalar(
        "select (xact_commit + xact_rollback)::bigint from pg_stat_database
          where datname = current_database()",
    )
    .fetch_one(&mut *conn)
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn polls_of_waiting_tickets_make_no_store_call() {
    let redis = PrivateRedis::start();
    let url = redis.url();
    let app = spawn_app_with(move |s| s.stores.redis = test_redis(url, false)).await;
    // Open, one a minute: the first is let in, everyone else waits.
    let event = event_with_queue(&app, chrono::Duration::minutes(-1), 1).await;
    let mut tickets = Vec::new();
    for i in 0..50 {
        let who = app.buyer(&format!("fan-{i}"));
        let (code, joined) = join(&app, &event, &who).await;
        assert_eq!(code, StatusCode::CREATED, "{joined}");
        tickets.push((who, joined["ticket"].as_str().unwrap().to_owned()));
    }
    // Past the first admission, so every poll below is of a waiting ticket.
    status_until(&app, &event, "one admitted", |l| l["admitted_up_to"] == 1).await;
    let waiting = &tickets[1..];

    let polls_per_ticket = 40;
    let (redis_before, pg_before) = (redis_calls(&redis).await, pg_transactions(&app).await);
    let started = tokio::time::Instant::now();
    let rounds = futures::future::join_all((0..16).map(|worker| {
        let app = &app;
        let event = &event;
        async move {
            let mut answered = 0;
            for (i, (who, ticket)) in waiting
                .iter()
                .enumerate()
                .cycle()
                .skip(worker)
                .step_by(16)
                .take(waiting.len() * polls_per_ticket / 16)
            {
                let (code, standing) = poll(app, event, ticket, who).await;
                assert_eq!(code, StatusCode::OK, "{standing}");
                assert_eq!(standing["admitted"], false, "{standing}");
                assert_eq!(standing["position"], i as u64 + 1, "{standing}");
                answered += 1;
            }
            answered
        }
    }))
    .await;
    let polls: usize = rounds.iter().sum();
    let seconds = started.elapsed().as_secs_f64();
    let (redis_after, pg_after) = (redis_calls(&redis).await, pg_transactions(&app).await);
    let (redis_calls, pg_calls) = (redis_after - redis_before, pg_after - pg_before);
    println!("{polls} waiting polls in {seconds:.2} s: {redis_calls} Redis calls, {pg_calls} Postgres transactions");
    // What the instance does anyway, whoever polls: one tick a second; the settings read
    // again every two seconds; the server's own workers.
    let redis_allowed = 2 + seconds.ceil() as u64;
    assert!(polls >= 1_900, "{polls} polls");
    assert!(
        redis_calls <= redis_allowed,
        "{polls} waiting polls in {seconds:.1} s made {redis_calls} Redis calls (at most \
         {redis_allowed} are the line's tick)"
    );
    assert!(
        (pg_calls as usize) < polls / 10,
        "{polls} waiting polls in {seconds:.1} s: {pg_calls} Postgres transactions"
    );
}

#[tokio::test]
async fn a_place_given_up_is_stepped_over_and_refused_on_every_instance() {
    let first = spawn_app().await;
    let event = event_with_queue(&first, chrono::Duration::minutes(-1), 1).await;
    let (url, secret) = (first.database_url.clone(), first.jwt_secret.clone());
    let second = spawn_app_with(move |s| {
        s.stores.database.url = url;
        s.server.jwt_secret = Secret::new(secret);
    })
    .await;
    let (ann, ben, cid) = (first.buyer("ann"), first.buyer("ben"), first.buyer("cid"));
    let mut tickets = Vec::new();
    for who in [&ann, &ben, &cid] {
        tickets.push(
            join(&first, &event, who).await.1["ticket"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    status_until(&first, &event, "ann admitted", |l| l["admitted_up_to"] == 1).await;
    // Both instances follow the line before Ben leaves.
    assert_eq!(
        poll(&second, &event, &tickets[1], &ben).await.1["position"],
        1
    );
    assert_eq!(
        leave(&first, &event, &tickets[1], &ben).await.0,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        code(&poll(&first, &event, &tickets[1], &ben).await),
        (StatusCode::NOT_FOUND, Some("ticket_not_found"))
    );
    // The other instance hears of it over the bus, well before its next read of the line
    // (a second away at most).
    let deadline = tokio::time::Instant::now() + Duration::from_millis(400);
    loop {
        let answer = poll(&second, &event, &tickets[1], &ben).await;
        if answer.0 == StatusCode::NOT_FOUND {
            assert_eq!(code(&answer).1, Some("ticket_not_found"));
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the other instance still answers {}",
            answer.1
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        code(&leave(&second, &event, &tickets[1], &ben).await),
        (StatusCode::NOT_FOUND, Some("ticket_not_found"))
    );

    // Ann buys nothing and leaves her admitted place: it goes at once, and Ben's is
    // stepped over, so Cid is let in though the rate is one a minute.
    let ann_pass = admitted(&first, &event, &tickets[0], &ann).await;
    assert!(!ann_pass.is_empty());
    assert_eq!(
        leave(&first, &event, &tickets[0], &ann).await.0,
        StatusCode::NO_CONTENT
    );
    let cid_pass = admitted(&second, &event, &tickets[2], &cid).await;
    assert!(!cid_pass.is_empty());
    let line = status_until(&first, &event, "three passed", |l| l["admitted_up_to"] == 3).await;
    assert_eq!(line["waiting"], 0, "{line}");
    // Ben joins again: a new ticket at the back.
    let (_, again) = join(&first, &event, &ben).await;
    assert_ne!(again["ticket"], tickets[1].as_str());
    assert_eq!(again["position"], 1, "{again}");
}

#[tokio::test]
async fn an_admission_not_exchanged_in_its_session_lapses_and_the_line_moves_on() {
    let app = spawn_app().await;
    let event = event_with_queue(&app, chrono::Duration::minutes(-1), 1).await;
    let (ann, ben) = (app.buyer("ann"), app.buyer("ben"));
    let ann_ticket = join(&app, &event, &ann).await.1["ticket"]
        .as_str()
        .unwrap()
        .to_owned();
    let ben_ticket = join(&app, &event, &ben).await.1["ticket"]
        .as_str()
        .unwrap()
        .to_owned();
    status_until(&app, &event, "ann admitted", |l| l["admitted_up_to"] == 1).await;
    // Ann closed her tab: her admission's second is made older than the session (300 s).
    let mut conn = boxoffice_store::redis::link::RedisLink::new(&app.redis)
        .unwrap()
        .connection()
        .await
        .unwrap();
    let ticks = format!("queue:{{{event}}}:ticks");
    let tick: String = ::redis::cmd("ZRANGE")
        .arg(&ticks)
        .arg(0)
        .arg(0)
        .query_async::<Vec<String>>(&mut conn)
        .await
        .unwrap()
        .remove(0);
    let (at, rest) = tick.split_once(':').unwrap();
    let old = format!("{}:{rest}", at.parse::<i64>().unwrap() - 301_000);
    ::redis::pipe()
        .zrem(&ticks, &tick)
        .zadd(&ticks, &old, 1)
        .query_async::<()>(&mut conn)
        .await
        .unwrap();

    // Within a tick Ben is in, a minute before the rate would have let him.
    let pass = admitted(&app, &event, &ben_ticket, &ben).await;
    assert!(!pass.is_empty());
    assert_eq!(
        code(&poll(&app, &event, &ann_ticket, &ann).await),
        (StatusCode::NOT_FOUND, Some("ticket_not_found"))
    );
    let metrics = app.metrics().await;
    let line = format!("boxoffice_queue_dropped_total{{event=\"{event}\"}} 1");
    assert!(
        metrics.lines().any(|l| l == line),
        "no {line} in\n{metrics}"
    );
    // Ann joins again at the back.
    let (_, again) = join(&app, &event, &ann).await;
    assert_ne!(again["ticket"], ann_ticket.as_str());
}

#[tokio::test]
async fn nobody_is_admitted_before_a_smaller_place() {
    let app = spawn_app().await;
    // 120 buyers join before the opening; then 20 a second are let in.
    let opens_in = chrono::Duration::milliseconds(1_500);
    let opens_at = Utc::now() + opens_in;
    let event = event_with_queue(&app, opens_in, 1_200).await;
    let tickets = futures::future::join_all((0..120).map(|i| {
        let app = &app;
        let event = &event;
        async move {
            let who = app.buyer(&format!("fan-{i}"));
            let (code, joined) = join(app, event, &who).await;
            assert_eq!(code, StatusCode::CREATED, "{joined}");
            (who, joined["ticket"].as_str().unwrap().to_owned())
        }
    }))
    .await;
    assert!(Utc::now() < opens_at, "everyone joined before the opening");
    let mut places = vec![None; tickets.len()];
    // For each ticket: the last poll (numbered in order) that saw it waiting, and the
    // first that saw it admitted.
    let mut last_waiting = vec![0u64; tickets.len()];
    let mut first_admitted: Vec<Option<u64>> = vec![None; tickets.len()];
    let mut polls = 0u64;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while first_admitted.iter().any(Option::is_none) {
        for (i, (who, ticket)) in tickets.iter().enumerate() {
            if first_admitted[i].is_some() {
                continue;
            }
            polls += 1;
            let (code, standing) = poll(&app, &event, ticket, who).await;
            assert_eq!(code, StatusCode::OK, "{standing}");
            if let Some(placed) = standing["ticket"].as_str() {
                let read = Tickets::new(&Secret::new(app.jwt_secret.clone()))
                    .verify(placed)
                    .unwrap();
                places[i] = read.place;
                // What load generators read of a ticket is what the server signed.
                assert_eq!(boxoffice_client::ticket_place(placed), read.place);
            }
            if standing["admitted"] == true {
                first_admitted[i] = Some(polls);
            } else {
                last_waiting[i] = polls;
            }
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not everyone was admitted"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Every early ticket shown a place got a distinct one in 1..=120 (those admitted at
    // their first poll after the opening were never shown one: they are the front).
    let shown: Vec<u64> = places.iter().flatten().copied().collect();
    assert_eq!(shown.iter().collect::<HashSet<_>>().len(), shown.len());
    assert!(shown.len() >= 60, "most waited: {shown:?}");
    assert!(shown.iter().all(|p| (1..=120).contains(p)));
    // Nobody admitted while a smaller place was still seen waiting.
    for a in 0..tickets.len() {
        for b in 0..tickets.len() {
            if let (Some(pa), Some(pb)) = (places[a], places[b]) {
                if pa < pb {
                    assert!(
                        last_waiting[a] < first_admitted[b].unwrap(),
                        "place {pb} was admitted (poll {:?}) while place {pa} still waited \
                         (poll {})",
                        first_admitted[b],
                        last_waiting[a]
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn admission_slows_while_the_hold_path_is_saturated_and_recovers_after() {
    // Holds may take two at once, and should answer within 50 ms.
    let app = spawn_app_with(|s| {
        s.limits.overload = Some(OverloadSettings {
            target: Duration::from_millis(50),
            floor: 2,
            ceiling: 2,
        });
        s.stores.database.lock_timeout = Duration::from_secs(60);
    })
    .await;
    let event = event_with_queue(&app, chrono::Duration::minutes(-1), 600).await;
    let plain = app.create_event().await;
    join(&app, &event, &app.buyer("ann")).await;
    let line = status_until(&app, &event, "admitting", |l| l["state"] == "admitting").await;
    assert_eq!(line["admitting_per_minute"], 600, "{line}");

    // The store is made slow: writes wait on a lock, two holds fill the limit, and the
    // next ones are refused.
    let lock = writes_wait(&app).await;
    let stuck: Vec<_> = (0..2)
        .map(|i| {
            let request = app
                .request(
                    Method::POST,
                    &format!("/v1/events/{plain}/holds"),
                    &app.buyer(&format!("s-{i}")),
                )
                .json(&json!({"seats": [format!("stalls-A-{}", i + 1)]}));
            tokio::spawn(async move { request.send().await.unwrap().status() })
        })
        .collect();
    in_flight(&app, "hold", 2.0).await;
    let slowed = {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        loop {
            let pusher = app.buyer(&format!(
                "pusher-{}",
                tokio::time::Instant::now().elapsed().as_nanos()
            ));
            let (code, _) = app.post_holds(&plain, &pusher, &["stalls-C-1"]).await;
            assert!(
                matches!(code, StatusCode::SERVICE_UNAVAILABLE | StatusCode::CREATED),
                "{code}"
            );
            let (_, _, _, body) = status(&app, &event, None).await;
            let line: Value = serde_json::from_str(&body).unwrap();
            if line["state"] == "slowed" {
                break line;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "never slowed: {line}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    assert_eq!(slowed["slowed_because"], "overload", "{slowed}");
    let rate = slowed["admitting_per_minute"].as_u64().unwrap();
    assert!((60..600).contains(&rate), "{slowed}");
    let (_, report) = app
        .send(
            Method::GET,
            &format!("/v1/events/{event}/report"),
            &As::Admin,
            None,
        )
        .await;
    assert!(
        report["queue"]["admitting_per_minute"].as_u64().unwrap() < 600,
        "the console's card shows the rate in force: {report}"
    );

    // The store recovers: admission comes back to the full rate.
    lock.rollback().await.unwrap();
    for hold in stuck {
        assert_eq!(hold.await.unwrap(), StatusCode::CREATED);
    }
    let line = status_until(&app, &event, "back to the full rate", |l| {
        l["state"] == "admitting" && l["admitting_per_minute"] == 600
    })
    .await;
    assert_eq!(line["slowed_because"], Value::Null);
}
