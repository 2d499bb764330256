//! Season holds on the postgres store: one basket held in every event a season covers, all
//! or nothing; read and released whole through the season, never through an event; and
//! the race of season buyers and single-event buyers on one seat.

use std::collections::BTreeSet;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::stores::Store;
use crate::helpers::{buy, spawn_app, spawn_app_on, As, TestApp};
use crate::helpers::{race_riding_out, spawn_race_app, tally};

/// Three nights on Riverside Hall and their season (stalls row A and the circle; a partial
/// of the first two nights at 200.00 a season seat); the nights and the season's id.
pub(crate) async fn season(app: &TestApp) -> (Vec<String>, String) {
    let (_, events) = crate::seasons::three_nights(app).await;
    let (status, body) = app
        .send(
            Method::POST,
            "/v1/seasons",
            &As::Admin,
            Some(&json!({
                "name": "2027 Season",
                "event_ids": events,
                "ticket_types": [
                    {"code": "season", "name": "Season seat", "price_cents": 36000, "currency": "EUR"}],
                "allocations": [{"ticket_type": "season", "section": "stalls", "rows": ["A"]},
                                {"ticket_type": "season", "section": "circle"}],
                "partials": [{"code": "autumn", "name": "Autumn half",
                              "event_ids": [events[0], events[1]], "prices": {"season": 20000}}]
            })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    (events, body["id"].as_str().unwrap().to_owned())
}

async fn hold(app: &TestApp, season: &str, who: &str, body: Value) -> (StatusCode, Value) {
    app.send(
        Method::POST,
        &format!("/v1/seasons/{season}/holds"),
        &app.buyer(who),
        Some(&body),
    )
    .await
}

/// Each event's holder of `seat` (from the reservation rows), in the events' order.
async fn holders(app: &TestApp, events: &[String], seat: &str) -> Vec<Option<String>> {
    let mut owners = Vec::new();
    for event in events {
        let owner: Option<String> = sqlx::query_scalar(
            "select user_id from reservation
              where event_id = $1::uuid and seat_id = $2 and status = 'H' and expires_at > now()",
        )
        .bind(event)
        .bind(seat)
        .fetch_optional(&app.db)
        .await
        .unwrap();
        owners.push(owner);
    }
    owners
}

#[tokio::test]
async fn a_season_hold_holds_the_seats_in_every_event_and_is_released_whole() {
    let app = spawn_app().await;
    let (events, season) = season(&app).await;
    let (status, held) = hold(
        &app,
        &season,
        "sam",
        json!({"seats": ["stalls-A-2", "circle-A-1"]}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{held}");
    assert_eq!(held["season_id"], season.as_str());
    assert_eq!(held["event_ids"], json!(events));
    assert_eq!(held["total_cents"], 72000);
    assert_eq!(held["currency"], "EUR");
    let seats: Vec<&str> = held["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(seats, ["circle-A-1", "stalls-A-2"]);
    let token = held["hold_token"].as_str().unwrap();

    // Held in every night: each map shows it, and a night's own buyer cannot have it.
    for event in &events {
        let statuses = app.seat_statuses(event).await;
        assert_eq!(statuses["stalls-A-2"], "held");
        assert_eq!(statuses["circle-A-1"], "held");
        let (status, body) = app
            .post_holds(event, &app.buyer("eve"), &["stalls-A-2"])
            .await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
    }
    assert_eq!(
        holders(&app, &events, "stalls-A-2").await,
        vec![Some("sam".to_owned()); 3]
    );

    // Read back by its owner only; no event route reaches it by the season's token.
    let path = format!("/v1/seasons/{season}/holds/{token}");
    let (status, read) = app.send(Method::GET, &path, &app.buyer("sam"), None).await;
    assert_eq!(status, StatusCode::OK, "{read}");
    assert_eq!(read["seats"], held["seats"]);
    assert_eq!(read["expires_at"], held["expires_at"]);
    let (status, _) = app.send(Method::GET, &path, &app.buyer("eve"), None).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = app
        .send(Method::DELETE, &path, &app.buyer("eve"), None)
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    for event in &events {
        let event_path = format!("/v1/events/{event}/holds/{token}");
        let (status, _) = app
            .send(Method::DELETE, &event_path, &app.buyer("sam"), None)
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, _) = app
            .send(Method::GET, &event_path, &app.buyer("sam"), None)
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
    assert_eq!(
        holders(&app, &events, "circle-A-1").await,
        vec![Some("sam".to_owned()); 3]
    );

    // Released whole: free in every night, and gone.
    let (status, _) = app
        .send(Method::DELETE, &path, &app.buyer("sam"), None)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(holders(&app, &events, "stalls-A-2").await, vec![None; 3]);
    assert_eq!(app.count("reservation").await, 0);
    let (status, _) = app.send(Method::GET, &path, &app.buyer("sam"), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app
        .send(Method::DELETE, &path, &app.buyer("sam"), None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_season_hold_is_all_or_nothing_across_its_events() {
    let app = spawn_app().await;
    let (events, season) = season(&app).await;
    // Night 2 has sold stalls-A-1; night 3's buyer holds three seats of four.
    buy(&app, &events[1], "nia", &["stalls-A-1"]).await;
    let (status, _) = app
        .post_holds(
            &events[2],
            &app.buyer("sam"),
            &["stalls-B-1", "stalls-B-2", "stalls-B-3"],
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let before = app.count("reservation").await;

    let (status, problem) = hold(
        &app,
        &season,
        "tom",
        json!({"seats": ["stalls-A-1", "stalls-A-3"]}),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{problem}");
    assert_eq!(problem["code"], "seat_unavailable");
    assert_eq!(
        problem["seats"],
        json!([{"id": "stalls-A-1", "label": "Stalls, Row A, Seat 1", "event_id": events[1]}])
    );
    // Not the season's seat.
    let (status, problem) = hold(&app, &season, "tom", json!({"seats": ["stalls-C-1"]})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{problem}");
    assert_eq!(problem["seats"].as_array().unwrap().len(), 3, "{problem}");
    // Night 3's limit of 4: sam holds 3 there already.
    let (status, problem) = hold(
        &app,
        &season,
        "sam",
        json!({"seats": ["stalls-A-3", "stalls-A-4"]}),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{problem}");
    assert_eq!(problem["code"], "hold_limit_exceeded");
    assert_eq!(
        app.count("reservation").await,
        before,
        "nothing held anywhere"
    );
    for seat in ["stalls-A-3", "stalls-A-4"] {
        assert_eq!(holders(&app, &events, seat).await, vec![None; 3]);
    }

    // The autumn half covers nights 1 and 2 only: night 3's limit is no matter there, and
    // its seats cost the partial's price.
    let (status, held) = hold(
        &app,
        &season,
        "sam",
        json!({"seats": ["stalls-A-3", "stalls-A-4"], "partial": "autumn"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{held}");
    assert_eq!(held["event_ids"], json!([events[0], events[1]]));
    assert_eq!(held["total_cents"], 40000);
    assert_eq!(held["partial"], "autumn");
    assert_eq!(
        holders(&app, &events, "stalls-A-3").await,
        vec![Some("sam".to_owned()), Some("sam".to_owned()), None]
    );
    let token = held["hold_token"].as_str().unwrap();
    let (status, read) = app
        .send(
            Method::GET,
            &format!("/v1/seasons/{season}/holds/{token}"),
            &app.buyer("sam"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{read}");
    assert_eq!(read["partial"], "autumn");
    assert_eq!(read["event_ids"], json!([events[0], events[1]]));

    // Bad baskets change nothing.
    let (status, _) = hold(&app, &season, "tom", json!({"seats": []})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let (status, _) = hold(&app, &season, "tom", json!({"seats": ["stalls-Z-9"]})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let (status, _) = hold(
        &app,
        &season,
        "tom",
        json!({"seats": ["circle-A-1"], "partial": "spring"}),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_redis_store_says_it_cannot_hold_a_season() {
    let app = spawn_app_on(Store::Redis).await;
    let (events, season) = season(&app).await;
    let (status, problem) = hold(&app, &season, "sam", json!({"seats": ["stalls-A-2"]})).await;
    assert_eq!(status, StatusCode::NOT_IMPLEMENTED, "{problem}");
    assert_eq!(problem["code"], "not_implemented");
    assert_eq!(app.count("reservation").await, 0);
    assert_eq!(
        app.seat_statuses(&events[0]).await["stalls-A-2"],
        "available"
    );
}

/// 100 season buyers and 100 single-night buyers (spread over the three nights) on one
/// seat at once, for several seats (each refused with a turn asks again at it, as pages
/// do): each night's seat has exactly one holder, either one
/// season buyer in every night and no night's buyer, or no season buyer and one night's
/// buyer in each night; never a season held in some nights and not others.
#[tokio::test]
async fn season_buyers_and_night_buyers_on_one_seat_leave_one_owner_per_night() {
    let app = spawn_race_app().await;
    let (events, season) = season(&app).await;
    let mut season_wins = 0;
    for (round, seat) in [
        "stalls-A-1",
        "stalls-A-2",
        "stalls-A-3",
        "circle-A-1",
        "circle-A-2",
    ]
    .into_iter()
    .enumerate()
    {
        let mut requests = Vec::new();
        for b in 0..100 {
            requests.push(
                app.request(
                    Method::POST,
                    &format!("/v1/seasons/{season}/holds"),
                    &app.buyer(&format!("season-{round}-{b}")),
                )
                .json(&json!({"seats": [seat]})),
            );
            let night = &events[b % 3];
            requests.push(
                app.request(
                    Method::POST,
                    &format!("/v1/events/{night}/holds"),
                    &app.buyer(&format!("night-{round}-{b}")),
                )
                .json(&json!({"seats": [seat]})),
            );
        }
        let answers = race_riding_out(requests).await;
        let (seasons, nights): (Vec<_>, Vec<_>) = answers
            .into_iter()
            .enumerate()
            .partition(|(i, _)| i % 2 == 0);
        let seasons: Vec<_> = seasons.into_iter().map(|(_, a)| a).collect();
        let nights: Vec<_> = nights.into_iter().map(|(_, a)| a).collect();
        let owners = holders(&app, &events, seat).await;
        let season_tally = tally(&seasons);
        let night_tally = tally(&nights);
        if season_tally.get(&201) == Some(&1) {
            season_wins += 1;
            assert_eq!(season_tally, [(201, 1), (409, 99)].into(), "{seat}");
            assert_eq!(night_tally, [(409, 100)].into(), "{seat}");
            let winner = seasons
                .iter()
                .find(|(s, _)| *s == StatusCode::CREATED)
                .unwrap();
            assert_eq!(winner.1["event_ids"], json!(events));
            let distinct: BTreeSet<_> = owners.iter().collect();
            assert_eq!(
                distinct.len(),
                1,
                "one season buyer in every night: {owners:?}"
            );
            assert!(owners[0].as_deref().unwrap().starts_with("season-"));
        } else {
            assert_eq!(season_tally, [(409, 100)].into(), "{seat}");
            assert_eq!(night_tally, [(201, 3), (409, 97)].into(), "{seat}");
            for owner in &owners {
                assert!(
                    owner.as_deref().unwrap().starts_with("night-"),
                    "{owners:?}"
                );
            }
        }
        let rows: i64 = sqlx::query_scalar("select count(*) from reservation where seat_id = $1")
            .bind(seat)
            .fetch_one(&app.db)
            .await
            .unwrap();
        assert_eq!(rows, 3, "one row per night for {seat}");
    }
    // Which side wins is the race's; the assertions above hold for either.
    eprintln!("season buyers won {season_wins} of 5 seats");
}

/// Season baskets that overlap (one seat in common) race as event baskets do: one winner,
/// and every loser holds nothing anywhere.
#[tokio::test]
async fn overlapping_season_baskets_have_one_winner_and_losers_hold_nothing() {
    let app = spawn_race_app().await;
    let (events, season) = season(&app).await;
    let requests = (0..60)
        .map(|b| {
            let seats = if b % 2 == 0 {
                ["stalls-A-1", "stalls-A-2"]
            } else {
                ["stalls-A-2", "stalls-A-3"]
            };
            app.request(
                Method::POST,
                &format!("/v1/seasons/{season}/holds"),
                &app.buyer(&format!("fan-{b}")),
            )
            .json(&json!({ "seats": seats }))
        })
        .collect();
    let answers = race_riding_out(requests).await;
    assert_eq!(tally(&answers), [(201, 1), (409, 59)].into());
    let users: Vec<(String, i64)> =
        sqlx::query_as("select user_id, count(*) from reservation group by user_id")
            .fetch_all(&app.db)
            .await
            .unwrap();
    assert_eq!(users.len(), 1, "{users:?}");
    assert_eq!(users[0].1, 6, "two seats in each of three nights");
    let winner = &users[0].0;
    for seat in ["stalls-A-2"] {
        assert_eq!(
            holders(&app, &events, seat).await,
            vec![Some(winner.clone()); 3]
        );
    }
}

#[tokio::test]
async fn a_season_hold_is_extended_in_every_event_at_once() {
    let app = spawn_app().await;
    let (events, season) = season(&app).await;
    let (status, held) = hold(&app, &season, "sam", json!({"seats": ["stalls-A-2"]})).await;
    assert_eq!(status, StatusCode::CREATED, "{held}");
    let token = held["hold_token"].as_str().unwrap();
    // Close to lapsing everywhere.
    sqlx::query("update reservation set expires_at = now() + interval '5 seconds'")
        .execute(&app.db)
        .await
        .unwrap();
    let path = format!("/v1/seasons/{season}/holds/{token}/extend");
    let (status, _) = app.send(Method::POST, &path, &app.buyer("eve"), None).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, extended) = app.send(Method::POST, &path, &app.buyer("sam"), None).await;
    assert_eq!(status, StatusCode::OK, "{extended}");
    let expires_at: chrono::DateTime<chrono::Utc> =
        serde_json::from_value(extended["expires_at"].clone()).unwrap();
    assert!(expires_at > chrono::Utc::now() + chrono::Duration::seconds(60));
    let rows: Vec<(String, chrono::DateTime<chrono::Utc>)> =
        sqlx::query_as("select event_id::text, expires_at from reservation order by event_id")
            .fetch_all(&app.db)
            .await
            .unwrap();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|(_, at)| *at == expires_at), "{rows:?}");
    let mut nights: Vec<String> = rows.into_iter().map(|(e, _)| e).collect();
    nights.sort();
    let mut expected = events.clone();
    expected.sort();
    assert_eq!(nights, expected);

    let (_, read) = app
        .send(
            Method::GET,
            &format!("/v1/seasons/{season}/holds/{token}"),
            &app.buyer("sam"),
            None,
        )
        .await;
    assert_eq!(read["expires_at"], extended["expires_at"]);
    let other = format!("/v1/seasons/{season}/holds/{}/extend", uuid::Uuid::new_v4());
    let (status, problem) = app
        .send(Method::POST, &other, &app.buyer("sam"), None)
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("hold_not_live"))
    );
}

#[tokio::test]
async fn best_available_for_a_season_picks_seats_free_in_every_event() {
    let app = spawn_app().await;
    let (events, season) = season(&app).await;
    // The middle of stalls row A is taken on the second night alone.
    let row: Vec<String> = app
        .seat_statuses(&events[1])
        .await
        .into_keys()
        .filter(|id| id.starts_with("stalls-A-"))
        .collect();
    for seat in &row {
        let (status, _) = app
            .post_holds(&events[1], &app.buyer(&format!("night-{seat}")), &[seat])
            .await;
        assert_eq!(status, StatusCode::CREATED);
        if app
            .seat_statuses(&events[1])
            .await
            .values()
            .filter(|s| *s == "held")
            .count()
            * 2
            >= row.len()
        {
            break;
        }
    }
    let taken: BTreeSet<String> = app
        .seat_statuses(&events[1])
        .await
        .into_iter()
        .filter(|(_, status)| status == "held")
        .map(|(id, _)| id)
        .collect();

    let (status, held) = hold(
        &app,
        &season,
        "sam",
        json!({"best_available": {"quantity": 2, "ticket_type": "season"}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{held}");
    assert_eq!(held["adjacent"], true);
    let seats: Vec<String> = held["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(seats.len(), 2);
    for seat in &seats {
        assert!(seat.starts_with("stalls-A-"), "{seats:?}");
        assert!(!taken.contains(seat), "{seat} is taken on the second night");
        assert_eq!(
            holders(&app, &events, seat).await,
            vec![Some("sam".to_owned()); 3]
        );
    }

    for (body, field) in [
        (
            json!({"best_available": {"quantity": 0}}),
            "best_available.quantity",
        ),
        (
            json!({"best_available": {"quantity": 1, "ticket_type": "nope"}}),
            "best_available.ticket_type",
        ),
        (
            json!({"seats": ["stalls-A-1"], "best_available": {"quantity": 1}}),
            "seats",
        ),
        (json!({"partial": "autumn"}), "seats"),
    ] {
        let (status, problem) = hold(&app, &season, "ivy", body).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
        assert_eq!(problem["errors"][0]["field"], field, "{problem}");
    }
    let rows: i64 = sqlx::query_scalar("select count(*) from reservation where user_id = 'ivy'")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(rows, 0);
}

/// Where covered events have their waiting room on, a season hold needs the buyer's pass
/// of each: the refusal names the events still lacking one, and nothing is held.
#[tokio::test]
async fn a_season_hold_needs_a_pass_of_each_event_whose_waiting_room_is_on() {
    use crate::helpers::join_and_wait;
    let app = spawn_app().await;
    let (events, season) = season(&app).await;
    for event in [&events[0], &events[2]] {
        let queue = json!({"queue": {"enabled": true, "opens_at": chrono::Utc::now(),
                                     "admit_per_minute": 6000, "session_seconds": 300}});
        let (status, body) = app
            .send(
                Method::PATCH,
                &format!("/v1/events/{event}"),
                &As::Admin,
                Some(&queue),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let sam = app.buyer("sam");
    let with_passes = |passes: Vec<String>| {
        let mut request = app
            .request(Method::POST, &format!("/v1/seasons/{season}/holds"), &sam)
            .json(&json!({"seats": ["stalls-A-2"]}));
        if !passes.is_empty() {
            request = request.header("Boxoffice-Pass", passes.join(", "));
        }
        async move { crate::helpers::read(request.send().await.unwrap()).await }
    };
    let (status, problem) = with_passes(vec![]).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("queue_required")),
        "{problem}"
    );
    assert_eq!(problem["event_ids"], json!([events[0], events[2]]));
    let (_, first) = join_and_wait(&app, &events[0], &sam).await;
    let (status, problem) = with_passes(vec![first.clone()]).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{problem}");
    assert_eq!(problem["event_ids"], json!([events[2]]));
    let none: i64 = sqlx::query_scalar("select count(*) from reservation")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(none, 0);

    let (_, third) = join_and_wait(&app, &events[2], &sam).await;
    let (status, held) = with_passes(vec![first, third]).await;
    assert_eq!(status, StatusCode::CREATED, "{held}");
    assert_eq!(
        holders(&app, &events, "stalls-A-2").await,
        vec![Some("sam".to_owned()); 3]
    );
}
