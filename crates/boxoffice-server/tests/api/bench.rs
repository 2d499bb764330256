//! `boxoffice bench`'s scenarios against a real server: each runs and its checks pass; and
//! each kind of check fails when the store is deliberately broken behind the server's back.
//! Nothing here is timed: how fast is for BENCHMARKS.md.

use std::time::Duration;

use boxoffice_core::ids::EventId;
use boxoffice_loadgen::bench::{self, checks, Pace, Report, Target};

use crate::helpers::spawn_race_app_on;
use crate::helpers::stores::Store;
use crate::helpers::{sell_directly, TestApp};

fn target(app: &TestApp) -> Target {
    Target::new(&app.base, &app.admin_token, &app.jwt_secret)
        .unwrap()
        .quiet()
}

#[track_caller]
fn assert_passed(report: &Report) {
    assert!(report.passed(), "{}", report.text());
    assert!(!report.checks.is_empty(), "a scenario checks something");
}

async fn every_scenario_runs_and_its_checks_pass(store: Store) {
    let app = spawn_race_app_on(store).await;
    let target = target(&app);

    for connected in [false, true] {
        let params = bench::hot_seat::Params {
            buyers: 60,
            connected,
            rounds: 1,
            first_answers: false,
        };
        let report = bench::hot_seat::run(&target, params).await.unwrap();
        assert_passed(&report);
        assert_eq!(report.operations[0].statuses["201"], 1);
        assert_eq!(report.operations[0].statuses["409"], 59);
    }
    // Crowds answered at once, each buyer's first answer counted: one 201 a crowd.
    let params = bench::hot_seat::Params {
        buyers: 60,
        connected: false,
        rounds: 3,
        first_answers: true,
    };
    let report = bench::hot_seat::run(&target, params).await.unwrap();
    assert_passed(&report);
    assert_eq!(report.operations[0].statuses["201"], 3);
    assert_eq!(report.operations[0].statuses["409"], 177);

    let report = bench::waitlist::run(&target, 40).await.unwrap();
    assert_passed(&report);
    assert_eq!(report.figures["offers_made"], 40.0, "{}", report.text());

    let params = bench::best::Params {
        buyers: 30,
        quantity: 2,
        seats: 100,
        rounds: 2,
    };
    let report = bench::best::run(&target, params).await.unwrap();
    assert_passed(&report);
    assert_eq!(
        report.operations[0].statuses["201"],
        50,
        "{}",
        report.text()
    );

    let params = bench::holds::Params {
        seats: 300,
        duration: Duration::from_millis(800),
        pace: Pace::Closed { workers: 4 },
        users: 50,
        hold_ttl_seconds: 1,
        channels: false,
    };
    let report = bench::holds::run(&target, params).await.unwrap();
    assert_passed(&report);
    assert!(report.operations[0].requests > 0);

    // Half the rows a channel's, half the buyers in it: holds granted in both halves.
    let channelled = bench::holds::Params {
        channels: true,
        ..params
    };
    let report = bench::holds::run(&target, channelled).await.unwrap();
    assert_passed(&report);
    assert!(
        report.operations[0].statuses["201"] > 0,
        "{}",
        report.text()
    );
    assert_eq!(report.parameters["channel_rows"], "1");

    let params = bench::holds::Params {
        pace: Pace::Open { per_second: 100.0 },
        ..params
    };
    let report = bench::holds::run(&target, params).await.unwrap();
    assert_passed(&report);
    // 100 a second for 0.8 s: about 80 requests, whatever the server's speed.
    let sent = report.operations[0].requests;
    assert!((70..=90).contains(&sent), "{sent} requests sent");

    let params = bench::flash_sale::Params {
        seats: 120,
        buyers: 80,
        think: Duration::from_millis(10),
        time_limit: Duration::from_secs(60),
        hold_ttl_seconds: 1,
        queue: None,
        payment_window_seconds: 0,
    };
    let report = bench::flash_sale::run(&target, params).await.unwrap();
    assert_passed(&report);
    // 80 buyers of 1–4 seats each want more than 120 seats, or very nearly: sold out.
    assert!(report.figures["seats_sold"] >= 80.0, "{}", report.text());

    // The same behind a waiting room letting in 1,200 a minute (20 a second).
    let report = bench::flash_sale::run(
        &target,
        bench::flash_sale::Params {
            queue: Some(1_200),
            ..params
        },
    )
    .await
    .unwrap();
    assert_passed(&report);
    assert!(report.figures["seats_sold"] >= 80.0, "{}", report.text());
    let waits = report
        .operations
        .iter()
        .find(|o| o.name == "wait to be admitted")
        .expect("the waits are reported");
    assert_eq!(waits.statuses.get("200"), Some(&80), "{}", report.text());

    // The same with a payment window: every order is paid right after its checkout.
    let report = bench::flash_sale::run(
        &target,
        bench::flash_sale::Params {
            payment_window_seconds: 600,
            ..params
        },
    )
    .await
    .unwrap();
    assert_passed(&report);
    assert!(report.figures["seats_sold"] >= 80.0, "{}", report.text());
    let payments = report
        .operations
        .iter()
        .find(|o| o.name == "payment")
        .expect("the payments are reported");
    assert_eq!(
        payments.statuses.get("200").copied(),
        Some(report.figures["orders"] as u64),
        "{}",
        report.text()
    );

    let report = bench::ga_rush::run(&target, 40, 50).await.unwrap();
    assert_passed(&report);
    // 50 buyers of 1–4 places each want far more than 40: a refusal means fewer were left
    // than it asked for, so at most 3 are left (and almost always none).
    let booked = report.figures["places_booked"];
    assert!((37.0..=40.0).contains(&booked), "{}", report.text());

    // The door: 250 tickets (one booking of 100 revoked) scanned by 8 scanners at once.
    let params = bench::door::DoorParams {
        tickets: 250,
        scanners: 8,
        revoked: 100,
    };
    let report = bench::door::door(&target, params).await.unwrap();
    assert_passed(&report);
    assert_eq!(
        report.figures["revoked_list_entries"],
        100.0,
        "{}",
        report.text()
    );
    assert_eq!(report.operations[0].statuses.get("201"), Some(&150));
    // Reads and scans beside four PDFs of three pages.
    let params = bench::door::PdfParams {
        pdfs: 4,
        pages: 3,
        readers: 2,
        baseline: Duration::from_millis(300),
        guests: 400,
    };
    let report = bench::door::pdfs(&target, params).await.unwrap();
    assert_passed(&report);

    // Ten a second from opening, each advance of the line shown two seconds on: some
    // admitted, far from all fifty.
    let params = bench::queue::Params {
        buyers: 50,
        admit_per_minute: 600,
        duration: Duration::from_millis(4_500),
        workers: 4,
    };
    let report = bench::queue::run(&target, params).await.unwrap();
    assert_passed(&report);
    let admitted = report.figures["admitted"];
    assert!((1.0..=45.0).contains(&admitted), "{}", report.text());

    // The line of many, small: the stores are shared with other tests, so their calls
    // are not counted here (tests/api/line.rs counts them on a Redis of its own).
    let params = bench::line::Params {
        buyers: 200,
        admit_per_minute: 1_200,
        duration: Duration::from_millis(4_500),
        workers: 4,
        status_workers: 2,
        redis_url: None,
        database_url: None,
        origins: Vec::new(),
    };
    let report = bench::line::run(&target, params).await.unwrap();
    assert_passed(&report);
    assert!(report.figures["admitted"] >= 1.0, "{}", report.text());
    assert!(
        report.figures["status_origin_requests"] >= 1.0,
        "{}",
        report.text()
    );

    let report = bench::floor::run(
        &target,
        Pace::Closed { workers: 2 },
        Duration::from_millis(200),
    )
    .await
    .unwrap();
    assert_passed(&report);
    assert!(report.operations[0].requests > 0);

    let params = bench::seat_map::Params {
        seats: 200,
        pace: Pace::Closed { workers: 2 },
        duration: Duration::from_millis(300),
        accept_encoding: None,
        revalidate: false,
        page: false,
    };
    let report = bench::seat_map::run(&target, params).await.unwrap();
    assert_passed(&report);
    let plain = report.figures["kb_per_load"];
    assert!(plain > 10.0, "{}", report.text());
    let params = bench::seat_map::Params {
        accept_encoding: Some("gzip"),
        ..params
    };
    let report = bench::seat_map::run(&target, params).await.unwrap();
    assert_passed(&report);
    assert!(
        report.figures["kb_per_load"] * 3.0 < plain,
        "{}",
        report.text()
    );
    let params = bench::seat_map::Params {
        revalidate: true,
        ..params
    };
    let report = bench::seat_map::run(&target, params).await.unwrap();
    assert_passed(&report);
    assert!(
        report.operations[0].statuses.contains_key("304"),
        "{}",
        report.text()
    );
    // As the page loads it: the layout revalidated, then a few bytes of statuses.
    let params = bench::seat_map::Params {
        page: true,
        ..params
    };
    let report = bench::seat_map::run(&target, params).await.unwrap();
    assert_passed(&report);
    assert!(
        report.operations[0].statuses.contains_key("304") && report.figures["kb_per_load"] < 2.0,
        "{}",
        report.text()
    );

    let params = bench::browse::Params {
        subscribers: 20,
        changes: 3,
        readers: 2,
        server_pid: Some(std::process::id()),
    };
    let report = bench::browse::run(&target, params).await.unwrap();
    assert_passed(&report);
    assert!(report.figures["server_rss_mb"] > 0.0);
}

/// A seated event made as the scenarios make theirs.
async fn event(target: &Target, seats: usize) -> EventId {
    target
        .seated_event(&bench::Layout::of(seats, 60))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_checks_fail_when_the_store_is_broken() {
    let app = spawn_race_app_on(Store::Postgres).await;
    let target = target(&app);

    // A seat sold behind the load generator's back: the orders it saw do not add up.
    let e = event(&target, 10).await;
    let seat = bench::Layout::of(10, 60).seat_id(3);
    sell_directly(&app, &e.to_string(), &[seat.as_str()]).await;
    let check = checks::no_seat_sold_twice(&target, e, &[]).await.unwrap();
    assert!(!check.passed, "{check:?}");
    assert!(check.detail.contains("1 seats sold"), "{check:?}");
    // The same seat in two orders.
    let twice = vec![vec![seat.clone()], vec![seat.clone()]];
    let check = checks::no_seat_sold_twice(&target, e, &twice)
        .await
        .unwrap();
    assert!(!check.passed, "{check:?}");
    let once = vec![vec![seat.clone()]];
    assert!(
        checks::no_seat_sold_twice(&target, e, &once)
            .await
            .unwrap()
            .passed
    );

    // A hold that never lapses.
    let e = event(&target, 10).await;
    sqlx::query(
        "insert into reservation (event_id, seat_id, hold_token, user_id, status, ticket_type,
                                  price_cents, created_at, expires_at)
         values ($1, 'floor-R0-1', gen_random_uuid(), 'stuck', 'H', 'standard', 1000, now(),
                 now() + interval '1 day')",
    )
    .bind(e.0)
    .execute(&app.db)
    .await
    .unwrap();
    let check = checks::no_stranded_holds(&target, e, Duration::ZERO)
        .await
        .unwrap();
    assert!(!check.passed, "{check:?}");

    // Seats that went missing from the count.
    let check = checks::seats_add_up(&target, e, 11).await.unwrap();
    assert!(!check.passed, "{check:?}");
    assert!(checks::seats_add_up(&target, e, 10).await.unwrap().passed);

    // General-admission places lost: booked + left falls short of capacity.
    let report = bench::ga_rush::run(&target, 30, 5).await.unwrap();
    assert_passed(&report);
    let booked = report.figures["places_booked"] as u64;
    let (ga_event,): (uuid::Uuid,) =
        sqlx::query_as("select event_id from ga_area order by event_id limit 1")
            .fetch_one(&app.db)
            .await
            .unwrap();
    let ga_event = EventId(ga_event);
    assert!(
        checks::ga_adds_up(&target, ga_event, "field", booked)
            .await
            .unwrap()
            .passed
    );
    sqlx::query("update ga_area set seats_left = seats_left - 1 where event_id = $1")
        .bind(ga_event.0)
        .execute(&app.db)
        .await
        .unwrap();
    let check = checks::ga_adds_up(&target, ga_event, "field", booked)
        .await
        .unwrap();
    assert!(!check.passed, "{check:?}");
}

crate::helpers::stores::conformance!(every_scenario_runs_and_its_checks_pass);

/// Season holds (the postgres store's): granted, and every seat held in all the season's
/// events or in none after the run.
#[tokio::test]
async fn the_season_holds_scenario_runs_and_its_check_passes() {
    let app = spawn_race_app_on(Store::Postgres).await;
    let params = bench::seasons::Params {
        events: 4,
        seats: 200,
        duration: Duration::from_millis(800),
        pace: Pace::Closed { workers: 4 },
        users: 50,
        hold_ttl_seconds: 120,
    };
    let report = bench::seasons::run(&target(&app), params).await.unwrap();
    assert_passed(&report);
    let granted = report.operations[0].statuses["201"];
    assert!(granted > 0, "{}", report.text());
    let rows: i64 = sqlx::query_scalar("select count(*) from reservation")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(
        rows,
        4 * granted as i64,
        "each season hold a row in each event"
    );
}
