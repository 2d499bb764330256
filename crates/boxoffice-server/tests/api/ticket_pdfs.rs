//! Tickets' PDFs are drawn apart from the request workers: a holder draws at most two at
//! once (`429 rate_limited` past that, nothing else refused), and the door and the map
//! answer while they draw.

use futures::future::join_all;
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::spawn_app;

/// A buyer who booked 100 places of a standing floor: a PDF of 100 pages.
#[tokio::test]
async fn a_holder_draws_two_pdfs_at_once_and_the_rest_wait_their_turn_elsewhere() {
    let app = spawn_app().await;
    let venue = app.create_venue().await;
    let mut spec = crate::helpers::gala(&venue);
    spec["ga_areas"] = json!([{"code": "floor", "name": "Standing floor", "capacity": 300,
        "price_cents": 3000, "currency": "EUR", "max_per_booking": 100}]);
    let (status, created) = app.post_events(&spec).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let event = created["id"].as_str().unwrap().to_owned();
    let book = |who: &'static str| {
        let (app, event) = (&app, &event);
        async move {
            let (status, booking) = app
                .send(
                    Method::POST,
                    &format!("/v1/events/{event}/bookings"),
                    &app.buyer(who),
                    Some(&json!({"area": "floor", "quantity": 100})),
                )
                .await;
            assert_eq!(status, StatusCode::CREATED, "{booking}");
            booking["booking_id"].as_str().unwrap().to_owned()
        }
    };
    let (ann, bob) = (book("ann").await, book("bob").await);
    let pdf = |who: &'static str, booking: &str| {
        app.request(
            Method::GET,
            &format!("/v1/bookings/{booking}/tickets.pdf"),
            &app.buyer(who),
        )
        .send()
    };

    // Six of Ann's at once: two draw, four are refused at once, having drawn nothing.
    let answers = join_all((0..6).map(|_| pdf("ann", &ann))).await;
    let mut drawn = 0;
    let mut refused = 0;
    for answer in answers {
        let answer = answer.unwrap();
        match answer.status() {
            StatusCode::OK => {
                let body = answer.bytes().await.unwrap();
                assert!(body.starts_with(b"%PDF"));
                drawn += 1;
            }
            StatusCode::TOO_MANY_REQUESTS => {
                assert!(answer.headers().contains_key("retry-after"));
                let problem: serde_json::Value = answer.json().await.unwrap();
                assert_eq!(problem["code"], "rate_limited", "{problem}");
                assert!(problem["retry_after_ms"].as_u64().unwrap() > 0, "{problem}");
                refused += 1;
            }
            other => panic!("a PDF answered {other}"),
        }
    }
    assert_eq!((drawn, refused), (2, 4), "two of six drawn at once");

    // While Ann's two draw, Bob's PDF, the map and the door are not refused.
    let ann_two = join_all((0..2).map(|_| pdf("ann", &ann)));
    let others = async {
        let bobs = pdf("bob", &bob).await.unwrap();
        let map = app
            .request(
                Method::GET,
                &format!("/v1/events/{event}/availability"),
                &app.buyer("carol"),
            )
            .send()
            .await
            .unwrap();
        (bobs.status(), map.status())
    };
    let (ann_two, (bobs, map)) = tokio::join!(ann_two, others);
    assert_eq!((bobs, map), (StatusCode::OK, StatusCode::OK));
    for answer in ann_two {
        assert_eq!(
            answer.unwrap().status(),
            StatusCode::OK,
            "her places came back"
        );
    }
    // Every place given back: two again.
    let again = join_all((0..2).map(|_| pdf("ann", &ann))).await;
    for answer in again {
        assert_eq!(answer.unwrap().status(), StatusCode::OK);
    }
}
