//! The service's flows called directly, without HTTP: the services built as a server
//! builds them ([`Services::builder`]) over a real Postgres database of the test's own and
//! the postgres hold store.

use std::sync::Arc;
use std::time::Duration;

use boxoffice_core::event::{EventSpec, QueueSettings};
use boxoffice_core::ids::{EventId, UserId, VenueId};
use boxoffice_core::venue::VenueSpec;
use boxoffice_service::bookings::PlacesWanted;
use boxoffice_service::overload::{OverloadSettings, Path};
use boxoffice_service::{basket, best_available, bookings, events, holds, Error, Secret, Services};
use boxoffice_store::pg::db::{self, DbConfig};
use boxoffice_store::pg::holds::PgHoldStore;
use boxoffice_store::redis::link::RedisConfig;
use serde_json::json;

/// A database of the test's own, dropped when the test ends (named as the server's tests
/// name theirs, so a crashed run's is swept by them).
struct TestDb {
    url: String,
    services: Services,
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let url = self.url.clone();
        std::thread::spawn(move || {
            tokio::runtime::Runtime::new()
                .expect("a runtime")
                .block_on(db::drop_database(&url))
        })
        .join()
        .expect("the drop ran")
        .expect("the test database is dropped");
    }
}

async fn services() -> TestDb {
    services_with(|builder| builder).await
}

/// [`services`], built with what `build` adds.
async fn services_with(
    build: impl FnOnce(boxoffice_service::ServicesBuilder) -> boxoffice_service::ServicesBuilder,
) -> TestDb {
    let server = std::env::var("BOXOFFICE_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into());
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    let name = format!(
        "boxoffice_test_{created}_{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    );
    let url = format!("{server}/{name}");
    db::ensure_database(&url).await.expect("database created");
    let mut config = DbConfig::new(&url);
    config.pool_size = 8;
    config.acquire_timeout = std::time::Duration::from_secs(30);
    let pool = db::connect_lazy(&config).expect("a pool");
    db::migrate(&pool).await.expect("migrated");
    let holds = Arc::new(PgHoldStore::new(pool.clone()));
    let services = build(Services::builder(
        pool,
        holds,
        &RedisConfig::new("redis://127.0.0.1:6379"),
        &Secret::new("flows-secret"),
    ))
    .build()
    .expect("services");
    TestDb { url, services }
}

/// A hall of one section, `rows` × `per_row`, and an event selling all of it at one
/// ticket type, with a standing area of 50.
async fn event(state: &Services, rows: usize, per_row: u32) -> EventId {
    let rows: Vec<_> = (0..rows)
        .map(|r| json!({"label": format!("R{r}"), "seats": per_row}))
        .collect();
    let venue: VenueSpec = serde_json::from_value(
        json!({"name": "Hall", "sections": [{"id": "floor", "name": "Floor", "rows": rows}]}),
    )
    .expect("a venue spec");
    let venue_id = VenueId::new();
    boxoffice_store::pg::venues::insert_venue(
        &state.pool,
        venue_id,
        boxoffice_core::ids::OrganizationId::DEFAULT,
        &venue.into_layout().expect("a layout"),
        None,
    )
    .await
    .expect("venue stored");
    let spec: EventSpec = serde_json::from_value(json!({
        "venue_id": venue_id, "name": "Flows", "starts_at": "2030-01-01T20:00:00Z",
        "max_seats_per_user": 4,
        "ticket_types": [{"code": "standard", "name": "Standard", "price_cents": 1000, "currency": "EUR"}],
        "allocations": [{"ticket_type": "standard", "section": "floor"}],
        "ga_areas": [{"code": "standing", "name": "Standing", "capacity": 50,
                      "price_cents": 500, "currency": "EUR", "max_per_booking": 10}]}))
    .expect("an event spec");
    let actor = boxoffice_service::organizations::Actor {
        key_id: None,
        key_name: "flows".into(),
        role: boxoffice_core::access::Role::Platform,
        request_id: None,
    };
    events::create(
        state,
        boxoffice_core::ids::OrganizationId::DEFAULT,
        spec,
        &actor,
    )
    .await
    .expect("event created")
}

fn user(name: &str) -> UserId {
    UserId::parse(name).expect("a user id")
}

/// What the tasks answered, in order.
async fn answers<T>(tasks: Vec<tokio::task::JoinHandle<T>>) -> Vec<T> {
    futures::future::join_all(tasks)
        .await
        .into_iter()
        .map(|joined| joined.expect("the task ran"))
        .collect()
}

async fn rows(state: &Services, event: EventId) -> i64 {
    sqlx::query_scalar("select count(*) from reservation where event_id = $1")
        .bind(event.0)
        .fetch_one(&state.pool)
        .await
        .expect("counted")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_buyers_at_one_seat_through_the_flow_leave_one_holder() {
    let test = services().await;
    let state = &test.services;
    let event = event(state, 2, 10).await;
    let seat = vec!["floor-R0-1".to_owned()];
    // Released together: every task waits at the barrier until all hundred are there.
    let barrier = Arc::new(tokio::sync::Barrier::new(100));
    let tasks: Vec<_> = (0..100)
        .map(|i| {
            let (state, seat, barrier) = (state.clone(), seat.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                holds::create_hold(&state, event, &user(&format!("b{i}")), None, None, &seat).await
            })
        })
        .collect();
    let answers = answers(tasks).await;
    let held = answers.iter().filter(|a| a.is_ok()).count();
    let refused = answers
        .iter()
        .filter(|a| matches!(a, Err(Error::SeatsUnavailable(seats)) if seats.len() == 1))
        .count();
    assert_eq!((held, refused), (1, 99));
    let holders: Vec<(String, String)> =
        sqlx::query_as("select seat_id, user_id from reservation where event_id = $1")
            .bind(event.0)
            .fetch_all(&state.pool)
            .await
            .unwrap();
    let winner = answers.iter().find_map(|a| a.as_ref().ok()).unwrap();
    assert_eq!(
        holders,
        [(seat[0].clone(), winner.hold.user_id.as_str().to_owned())]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn while_the_waiting_room_is_on_no_flow_holds_or_books_without_a_pass() {
    let test = services().await;
    let state = &test.services;
    let event = event(state, 2, 10).await;
    let queue: QueueSettings = serde_json::from_value(json!({
        "enabled": true, "opens_at": "2029-01-01T00:00:00Z", "admit_per_minute": 60}))
    .unwrap();
    events::set_queue(state, event, Some(&queue), None)
        .await
        .unwrap();
    let buyer = user("no-pass");
    let seats = vec!["floor-R0-1".to_owned()];

    let hold = holds::create_hold(state, event, &buyer, None, None, &seats).await;
    let forged = holds::create_hold(state, event, &buyer, None, Some("forged"), &seats).await;
    let best = best_available::hold_best_available(
        state,
        event,
        &buyer,
        None,
        None,
        best_available::BestAsk {
            quantity: 1,
            ticket_type: None,
            accessible: false,
        },
    )
    .await;
    let grow = basket::add_seats(
        state,
        event,
        Some(uuid::Uuid::new_v4()),
        &buyer,
        None,
        None,
        &seats,
    )
    .await;
    let booking = bookings::create_booking(
        state,
        event,
        &buyer,
        PlacesWanted {
            area: "standing",
            quantity: 1,
            idempotency_key: None,
            pass: None,
        },
    )
    .await;

    assert!(matches!(hold, Err(Error::QueueRequired(_))), "{hold:?}");
    assert!(matches!(forged, Err(Error::QueueRequired(_))), "{forged:?}");
    assert!(matches!(best, Err(Error::QueueRequired(_))), "{best:?}");
    assert!(matches!(grow, Err(Error::QueueRequired(_))), "{grow:?}");
    assert!(
        matches!(booking, Err(Error::QueueRequired(_))),
        "{booking:?}"
    );
    assert_eq!(rows(state, event).await, 0, "nothing was held");
    let booked: i64 = sqlx::query_scalar("select count(*) from ga_booking where event_id = $1")
        .bind(event.0)
        .fetch_one(&state.pool)
        .await
        .unwrap();
    assert_eq!(booked, 0, "nothing was booked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_crowd_past_the_limit_at_an_event_no_one_asked_for_yet_is_refused_from_one_read() {
    // Until answers tell, one is taken to need a quarter of the target: 250 ms here, so no
    // place is due within the soonest turn (10 ms) and nobody past the limit waits.
    let limit = OverloadSettings::with_target(Duration::from_secs(1));
    let test = services_with(|builder| builder.overload(Some(limit))).await;
    let state = &test.services;
    let event = event(state, 4, 10).await;
    // Every place under the hold limit taken: whoever comes now is past capacity.
    let places: Vec<_> = std::iter::from_fn(|| state.overload.enter(Path::Hold).ok()).collect();
    assert_eq!(places.len(), OverloadSettings::DEFAULT_FLOOR);
    let barrier = Arc::new(tokio::sync::Barrier::new(200));
    let tasks: Vec<_> = (0..200)
        .map(|i| {
            let (state, barrier) = (state.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                let ask = best_available::BestAsk {
                    quantity: 2,
                    ticket_type: None,
                    accessible: false,
                };
                let buyer = user(&format!("b{i}"));
                best_available::hold_best_available(&state, event, &buyer, None, None, ask).await
            })
        })
        .collect();
    let answers = answers(tasks).await;
    let held = answers.iter().filter(|a| a.is_ok()).count();
    let refused = answers
        .iter()
        .filter(|a| matches!(a, Err(Error::Overloaded(_))))
        .count();
    assert_eq!((held, refused), (0, 200));
    assert_eq!(rows(state, event).await, 0);
    assert!(
        state.seat_maps.peek(event).is_none(),
        "no map was needed to refuse them"
    );
    // The event's hold settings were read once for all of them and are kept: with no
    // connection to be had, the next buyer past capacity is refused all the same.
    state.pool.close().await;
    let ask = best_available::BestAsk {
        quantity: 2,
        ticket_type: None,
        accessible: false,
    };
    let late = user("late");
    let answer = best_available::hold_best_available(state, event, &late, None, None, ask).await;
    assert!(matches!(answer, Err(Error::Overloaded(_))), "{answer:?}");
    drop(places);
}
