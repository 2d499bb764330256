//! A waiting-room pass buys one share: the seats held and bought under it never exceed
//! the event's `max_seats_per_user`, however its requests interleave, and a pass that
//! ended (its buyer checked out, released every hold, or gave the ticket up) is refused
//! by every instance, on every hold store.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::stores::Store;
use crate::helpers::{another_instance, read, As, TestApp};
use crate::helpers::{event_with_queue, hold_with_pass, join_and_wait};
use crate::helpers::{race, spawn_race_app_on};

/// A hold of `seats` by `who` under `pass`, not yet sent.
fn hold_under(
    app: &TestApp,
    event: &str,
    who: &As,
    pass: &str,
    seats: &[&str],
) -> reqwest::RequestBuilder {
    app.request(Method::POST, &format!("/v1/events/{event}/holds"), who)
        .header("Boxoffice-Pass", pass)
        .json(&json!({ "seats": seats }))
}

/// A booking of one standing place by `who` under `pass`, and its answer.
async fn book_under(app: &TestApp, event: &str, who: &As, pass: &str) -> (StatusCode, Value) {
    let request = app
        .request(Method::POST, &format!("/v1/events/{event}/bookings"), who)
        .header("Boxoffice-Pass", pass)
        .json(&json!({"area": "floor", "quantity": 1}));
    read(request.send().await.unwrap()).await
}

/// Seats sold to `user` in `event`, and seats `user` holds there now.
async fn share(app: &TestApp, event: &str, user: &str) -> (i64, i64) {
    let event: uuid::Uuid = event.parse().unwrap();
    let sold: i64 = sqlx::query_scalar(
        "select count(*) from order_seat s join ticket_order o using (event_id, order_id)
          where s.event_id = $1 and o.user_id = $2 and not s.released",
    )
    .bind(event)
    .bind(user)
    .fetch_one(&app.db)
    .await
    .unwrap();
    let held = app
        .send(
            Method::GET,
            &format!("/v1/events/{event}/seats"),
            &As::Nobody,
            None,
        )
        .await
        .1["seats"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["status"] == "held")
        .count() as i64;
    (sold, held)
}

fn code(answer: &(StatusCode, Value)) -> (u16, &str) {
    (answer.0.as_u16(), answer.1["code"].as_str().unwrap_or(""))
}

/// Alice (limit 4) holds two seats, then checks them out while eight holds of one seat
/// each go in under the same pass. A hold the store judges before the checkout counts
/// its two seats (two more at most); one after it meets the ended pass. Then every hold
/// that got through is checked out: four seats bought at most, and the pass holds nothing.
async fn a_pass_buys_one_share_however_its_requests_interleave(store: Store) {
    let app = spawn_race_app_on(store).await;
    let event = event_with_queue(&app, chrono::Duration::zero(), 600_000).await;
    let alice = app.buyer("alice");
    let (_, pass) = join_and_wait(&app, &event, &alice).await;
    let (status, first) = read(
        hold_under(&app, &event, &alice, &pass, &["stalls-B-1", "stalls-B-2"])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    let token = first["hold_token"].as_str().unwrap();

    let mut requests = vec![app
        .request(Method::POST, &format!("/v1/events/{event}/orders"), &alice)
        .json(&json!({ "hold_token": token }))];
    for row in ["A", "C"] {
        for n in 1..=4 {
            let seat = format!("stalls-{row}-{n}");
            requests.push(hold_under(&app, &event, &alice, &pass, &[&seat]));
        }
    }
    let answers = race(requests).await;
    assert_eq!(answers[0].0, StatusCode::CREATED, "{}", answers[0].1);
    let mut granted = Vec::new();
    for answer in &answers[1..] {
        match code(answer) {
            (201, _) => granted.push(answer.1["hold_token"].as_str().unwrap().to_owned()),
            (403, "queue_required") | (409, "hold_limit_exceeded") => {}
            other => panic!("unexpected answer {other:?}: {}", answer.1),
        }
    }
    assert!(
        granted.len() <= 2,
        "{} holds beside a checkout of two, with a limit of four",
        granted.len()
    );
    for token in &granted {
        let (status, order) = app.post_orders(&event, &alice, token).await;
        assert_eq!(status, StatusCode::CREATED, "{order}");
    }
    let (sold, held) = share(&app, &event, "alice").await;
    assert_eq!((sold, held), (2 + granted.len() as i64, 0));
    assert!(sold <= 4, "one pass bought {sold} seats with a limit of 4");

    // The pass is spent: no more holds, whatever the seats.
    let (status, problem) = hold_with_pass(&app, &event, &alice, &pass, "circle-A-1").await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("queue_required")),
        "{problem}"
    );
}

/// An instance started after Alice checked out has no memory of her pass: the store's
/// word refuses it there, for seats and for places alike.
async fn an_ended_pass_is_refused_by_an_instance_that_never_heard_of_it(store: Store) {
    let first = crate::helpers::spawn_app_on(store).await;
    let event = event_with_queue(&first, chrono::Duration::zero(), 600_000).await;
    let alice = first.buyer("alice");
    let (_, pass) = join_and_wait(&first, &event, &alice).await;
    let (status, hold) = hold_with_pass(&first, &event, &alice, &pass, "stalls-B-1").await;
    assert_eq!(status, StatusCode::CREATED, "{hold}");
    let (status, order) = first
        .post_orders(&event, &alice, hold["hold_token"].as_str().unwrap())
        .await;
    assert_eq!(status, StatusCode::CREATED, "{order}");

    let second = another_instance(&first, store).await;
    let alice = second.buyer("alice");
    let (status, problem) = hold_with_pass(&second, &event, &alice, &pass, "stalls-B-2").await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("queue_required")),
        "{problem}"
    );
    assert_eq!(
        code(&book_under(&second, &event, &alice, &pass).await),
        (403, "queue_required")
    );
    assert_eq!(second.count("ga_booking").await, 0);
}

/// Two releases of a buyer's last two holds, at once: whichever finishes last sees
/// neither hold, and the pass ends. Four buyers, four races.
async fn releasing_the_last_holds_at_once_ends_the_pass(store: Store) {
    let app = spawn_race_app_on(store).await;
    let event = event_with_queue(&app, chrono::Duration::zero(), 600_000).await;
    for n in 1..=4 {
        let buyer = app.buyer(&format!("buyer-{n}"));
        let (_, pass) = join_and_wait(&app, &event, &buyer).await;
        let mut releases = Vec::new();
        for seat in [format!("stalls-A-{n}"), format!("stalls-C-{n}")] {
            let (status, hold) = hold_with_pass(&app, &event, &buyer, &pass, &seat).await;
            assert_eq!(status, StatusCode::CREATED, "{hold}");
            let token = hold["hold_token"].as_str().unwrap();
            releases.push(app.request(
                Method::DELETE,
                &format!("/v1/events/{event}/holds/{token}"),
                &buyer,
            ));
        }
        let answers = race(releases).await;
        assert!(
            answers.iter().all(|(s, _)| *s == StatusCode::NO_CONTENT),
            "{answers:?}"
        );
        let (status, problem) =
            hold_with_pass(&app, &event, &buyer, &pass, &format!("stalls-B-{n}")).await;
        assert_eq!(
            (status, problem["code"].as_str()),
            (StatusCode::FORBIDDEN, Some("queue_required")),
            "round {n}: {problem}"
        );
    }
}

/// A buyer admitted, with their pass, gives their ticket up: the pass ends with it, as a
/// checkout would end it. A hold under it is refused from then on, here and on an instance
/// that never saw the ticket, and so is a booking; a hold made before stays the buyer's to
/// buy. Joining again queues anew at the back, without a pass.
async fn giving_up_an_exchanged_ticket_ends_its_pass(store: Store) {
    let first = crate::helpers::spawn_app_on(store).await;
    let event = event_with_queue(&first, chrono::Duration::zero(), 600_000).await;
    let alice = first.buyer("alice");
    let (ticket, pass) = join_and_wait(&first, &event, &alice).await;
    let (status, before) = hold_with_pass(&first, &event, &alice, &pass, "stalls-B-1").await;
    assert_eq!(status, StatusCode::CREATED, "{before}");
    let (status, body) = first
        .send(
            Method::DELETE,
            &format!("/v1/events/{event}/queue/{ticket}"),
            &alice,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");

    let second = another_instance(&first, store).await;
    for app in [&first, &second] {
        let (status, problem) = hold_with_pass(app, &event, &alice, &pass, "stalls-B-2").await;
        assert_eq!(
            (status, problem["code"].as_str()),
            (StatusCode::FORBIDDEN, Some("queue_required")),
            "{problem}"
        );
        assert_eq!(
            code(&book_under(app, &event, &alice, &pass).await),
            (403, "queue_required")
        );
    }
    let (status, order) = first
        .post_orders(&event, &alice, before["hold_token"].as_str().unwrap())
        .await;
    assert_eq!(status, StatusCode::CREATED, "{order}");
    assert_eq!(share(&first, &event, "alice").await, (1, 0));
    assert_eq!(first.count("ga_booking").await, 0);
    // Joining again: a new ticket, at the back.
    let (status, again) = crate::helpers::join(&first, &event, &alice).await;
    assert_eq!(status, StatusCode::CREATED, "{again}");
    assert_ne!(again["ticket"], ticket.as_str());
}

crate::helpers::stores::conformance!(
    a_pass_buys_one_share_however_its_requests_interleave,
    an_ended_pass_is_refused_by_an_instance_that_never_heard_of_it,
    releasing_the_last_holds_at_once_ends_the_pass,
    giving_up_an_exchanged_ticket_ends_its_pass,
);
