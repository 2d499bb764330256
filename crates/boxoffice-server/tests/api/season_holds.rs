//! Season holds on every hold store: one basket held in every event a season covers, all
//! or nothing; read and released whole through the season, never through an event; and
//! the race of season buyers and single-event buyers on one seat. (A long file: every test
//! runs on every store, and each sets up a season of several events before it asserts.)

use std::collections::BTreeSet;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use boxoffice_core::ids::{EventId, UserId};
use boxoffice_server::config::HoldStoreKind;
use boxoffice_store::redis::holds::keys;
use boxoffice_store::redis::link::RedisLink;

use crate::helpers::seasons::season;
use crate::helpers::stores::Store;
use crate::helpers::{buy, spawn_app_on, As, TestApp};
use crate::helpers::{race_riding_out, spawn_race_app_on, tally};

async fn hold(app: &TestApp, season: &str, who: &str, body: Value) -> (StatusCode, Value) {
    app.send(
        Method::POST,
        &format!("/v1/seasons/{season}/holds"),
        &app.buyer(who),
        Some(&body),
    )
    .await
}

/// Each event's holder of `seat` (a live hold's buyer), in the events' order, read from the
/// store itself: the reservation rows, or the seat's key and its hold's in Redis.
pub(crate) async fn holders(app: &TestApp, events: &[String], seat: &str) -> Vec<Option<String>> {
    let mut owners = Vec::new();
    for event in events {
        owners.push(holder(app, event, seat).await);
    }
    owners
}

async fn holder(app: &TestApp, event: &str, seat: &str) -> Option<String> {
    if app.hold_store == HoldStoreKind::Postgres {
        return sqlx::query_scalar(
            "select user_id from reservation
              where event_id = $1::uuid and seat_id = $2 and status = 'H' and expires_at > now()",
        )
        .bind(event)
        .bind(seat)
        .fetch_optional(&app.db)
        .await
        .unwrap();
    }
    let event = EventId(event.parse().unwrap());
    let mut conn = RedisLink::new(&app.redis)
        .unwrap()
        .connection()
        .await
        .unwrap();
    let token: Option<String> = ::redis::cmd("GET")
        .arg(keys::seat(event, seat))
        .query_async(&mut conn)
        .await
        .unwrap();
    // A season claim's passing mark ("p:...") is nobody's hold.
    let token: uuid::Uuid = token?.parse().ok()?;
    ::redis::cmd("HGET")
        .arg(keys::hold(event, token))
        .arg("u")
        .query_async(&mut conn)
        .await
        .unwrap()
}

/// How many seats are held, live, in `events` altogether, as the store counts them.
pub(crate) async fn held_in(app: &TestApp, events: &[String]) -> usize {
    let mut held = 0;
    for event in events {
        let event = EventId(event.parse().unwrap());
        held += app.holds.held_seats(event).await.unwrap().len();
    }
    held
}

/// How many seats `user` holds, live, in `events` altogether.
async fn held_by(app: &TestApp, events: &[String], user: &str) -> u32 {
    let user = UserId::parse(user).unwrap();
    let mut held = 0;
    for event in events {
        let event = EventId(event.parse().unwrap());
        held += app.holds.seats_held_by(event, &user).await.unwrap();
    }
    held
}

async fn a_season_hold_holds_the_seats_in_every_event_and_is_released_whole(store: Store) {
    let app = spawn_app_on(store).await;
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
    assert_eq!(held_in(&app, &events).await, 0);
    let (status, _) = app.send(Method::GET, &path, &app.buyer("sam"), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app
        .send(Method::DELETE, &path, &app.buyer("sam"), None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

async fn a_season_hold_is_all_or_nothing_across_its_events(store: Store) {
    let app = spawn_app_on(store).await;
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
    let before = held_in(&app, &events).await;

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
        held_in(&app, &events).await,
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

/// 100 season buyers and 100 single-night buyers (spread over the three nights) on one
/// seat at once, for several seats (each refused with a turn asks again at it, as pages
/// do): each night's seat has exactly one holder, either one
/// season buyer in every night and no night's buyer, or no season buyer and one night's
/// buyer in each night; never a season held in some nights and not others.
async fn season_buyers_and_night_buyers_on_one_seat_leave_one_owner_per_night(store: Store) {
    let app = spawn_race_app_on(store).await;
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
    }
    // Which side wins is the race's; the assertions above hold for either.
    eprintln!("season buyers won {season_wins} of 5 seats");
}

/// Season baskets that overlap (one seat in common) race as event baskets do: one winner,
/// and every loser holds nothing anywhere.
async fn overlapping_season_baskets_have_one_winner_and_losers_hold_nothing(store: Store) {
    let app = spawn_race_app_on(store).await;
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
    let won = answers
        .iter()
        .position(|(status, _)| *status == StatusCode::CREATED)
        .unwrap();
    let winner = format!("fan-{won}");
    assert_eq!(
        held_in(&app, &events).await,
        6,
        "two seats in each of three nights"
    );
    assert_eq!(held_by(&app, &events, &winner).await, 6);
    assert_eq!(
        holders(&app, &events, "stalls-A-2").await,
        vec![Some(winner.clone()); 3]
    );
}

async fn a_season_hold_is_extended_in_every_event_at_once(store: Store) {
    let app = spawn_app_on(store).await;
    let (events, season) = season(&app).await;
    let (status, held) = hold(&app, &season, "sam", json!({"seats": ["stalls-A-2"]})).await;
    assert_eq!(status, StatusCode::CREATED, "{held}");
    let token = held["hold_token"].as_str().unwrap();
    let before: chrono::DateTime<chrono::Utc> =
        serde_json::from_value(held["expires_at"].clone()).unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let path = format!("/v1/seasons/{season}/holds/{token}/extend");
    let (status, _) = app.send(Method::POST, &path, &app.buyer("eve"), None).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, extended) = app.send(Method::POST, &path, &app.buyer("sam"), None).await;
    assert_eq!(status, StatusCode::OK, "{extended}");
    let expires_at: chrono::DateTime<chrono::Utc> =
        serde_json::from_value(extended["expires_at"].clone()).unwrap();
    assert!(
        expires_at >= before + chrono::Duration::seconds(1),
        "{before} -> {expires_at}"
    );
    assert_eq!(
        holders(&app, &events, "stalls-A-2").await,
        vec![Some("sam".to_owned()); 3]
    );

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

async fn best_available_for_a_season_picks_seats_free_in_every_event(store: Store) {
    let app = spawn_app_on(store).await;
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
    assert_eq!(held_by(&app, &events, "ivy").await, 0);
}

/// Where covered events have their waiting room on, a season hold needs the buyer's pass
/// of each: the refusal names the events still lacking one, and nothing is held. The hold
/// keeps the passes, and its checkout ends them, as an event's does.
async fn a_season_hold_needs_a_pass_of_each_event_whose_waiting_room_is_on(store: Store) {
    use crate::helpers::join_and_wait;
    let app = spawn_app_on(store).await;
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
    assert_eq!(held_in(&app, &events).await, 0);

    let (_, third) = join_and_wait(&app, &events[2], &sam).await;
    let (status, held) = with_passes(vec![first.clone(), third.clone()]).await;
    assert_eq!(status, StatusCode::CREATED, "{held}");
    assert_eq!(
        holders(&app, &events, "stalls-A-2").await,
        vec![Some("sam".to_owned()); 3]
    );

    // One pass, one share: the season bought, its passes have ended, in each event.
    let (status, order) = app
        .send(
            Method::POST,
            &format!("/v1/seasons/{season}/orders"),
            &sam,
            Some(&json!({"hold_token": held["hold_token"]})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{order}");
    let ended: Vec<String> =
        sqlx::query_scalar("select event_id::text from pass_ended order by event_id::text")
            .fetch_all(&app.db)
            .await
            .unwrap();
    let mut queued = vec![events[0].clone(), events[2].clone()];
    queued.sort();
    assert_eq!(ended, queued);
    let again = app
        .request(Method::POST, &format!("/v1/seasons/{season}/holds"), &sam)
        .header("Boxoffice-Pass", format!("{first}, {third}"))
        .json(&json!({"seats": ["stalls-A-3"]}));
    let (status, problem) = crate::helpers::read(again.send().await.unwrap()).await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("queue_required")),
        "{problem}"
    );
    // The refusal names the nights whose passes ended, so the page knows where to queue.
    let named: Vec<String> = serde_json::from_value(problem["event_ids"].clone())
        .unwrap_or_else(|_| panic!("the events whose passes ended: {problem}"));
    assert!(
        !named.is_empty() && named.iter().all(|e| queued.contains(e)),
        "{problem}"
    );
    let night = app
        .request(
            Method::POST,
            &format!("/v1/events/{}/holds", events[0]),
            &sam,
        )
        .header("Boxoffice-Pass", first)
        .json(&json!({"seats": ["stalls-A-3"]}));
    let (status, problem) = crate::helpers::read(night.send().await.unwrap()).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{problem}");
    assert_eq!(held_by(&app, &events, "sam").await, 0, "nothing held since");
}

/// On the redis store a seat a season claim has marked (between the claim's two rounds) is
/// neither free nor taken: an event's buyer, or another season's, waits for the claim's
/// outcome and holds the seat once the claim lets it go; a mark that outlives the wait (its
/// claim's server gone) answers 503 and holds nothing, until it lapses.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_seat_a_season_claim_has_marked_waits_for_the_claims_outcome() {
    let app = spawn_app_on(Store::Redis).await;
    let (events, season) = season(&app).await;
    let night = EventId(events[0].parse().unwrap());
    let mut conn = RedisLink::new(&app.redis)
        .unwrap()
        .connection()
        .await
        .unwrap();
    let mark = |seat: &'static str, ms: u64| {
        let mut set = ::redis::cmd("SET");
        set.arg(keys::seat(night, seat))
            .arg(format!("p:{}", uuid::Uuid::new_v4()))
            .arg("PX")
            .arg(ms);
        set
    };
    // The event's state loaded, as in any sale.
    let (status, _) = app
        .post_holds(&events[0], &app.buyer("ann"), &["stalls-B-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED);

    let _: () = mark("stalls-A-1", 600)
        .query_async(&mut conn)
        .await
        .unwrap();
    let asked = std::time::Instant::now();
    let (status, body) = app
        .post_holds(&events[0], &app.buyer("eve"), &["stalls-A-1"])
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert!(
        asked.elapsed() >= std::time::Duration::from_millis(300),
        "held only once the mark went"
    );
    assert_eq!(
        holder(&app, &events[0], "stalls-A-1").await.as_deref(),
        Some("eve")
    );

    let _: () = mark("stalls-A-2", 600)
        .query_async(&mut conn)
        .await
        .unwrap();
    let (status, held) = hold(&app, &season, "sam", json!({"seats": ["stalls-A-2"]})).await;
    assert_eq!(status, StatusCode::CREATED, "{held}");
    assert_eq!(
        holders(&app, &events, "stalls-A-2").await,
        vec![Some("sam".to_owned()); 3]
    );

    let _: () = mark("stalls-A-3", 20_000)
        .query_async(&mut conn)
        .await
        .unwrap();
    let (status, problem) = app
        .post_holds(&events[0], &app.buyer("eve"), &["stalls-A-3"])
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{problem}");
    let (status, problem) = hold(&app, &season, "tom", json!({"seats": ["stalls-A-3"]})).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{problem}");
    assert_eq!(
        held_by(&app, &events, "tom").await,
        0,
        "nothing held anywhere"
    );
    assert_eq!(holders(&app, &events, "stalls-A-3").await, vec![None; 3]);
}

crate::helpers::stores::conformance!(
    a_season_hold_holds_the_seats_in_every_event_and_is_released_whole,
    a_season_hold_is_all_or_nothing_across_its_events,
    season_buyers_and_night_buyers_on_one_seat_leave_one_owner_per_night,
    overlapping_season_baskets_have_one_winner_and_losers_hold_nothing,
    a_season_hold_is_extended_in_every_event_at_once,
    best_available_for_a_season_picks_seats_free_in_every_event,
    a_season_hold_needs_a_pass_of_each_event_whose_waiting_room_is_on,
);
