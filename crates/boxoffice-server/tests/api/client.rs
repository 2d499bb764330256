//! The typed client (`boxoffice-client`) against a real server: every call it makes reads
//! back as the API's own types, and every refusal as a problem with its stable code.

use boxoffice_client::api::{BookingBody, HoldBody};
use boxoffice_client::{mint_user_token, Client};
use boxoffice_core::event::EventSpec;
use boxoffice_core::hold::OrderStatus;
use boxoffice_core::venue::VenueSpec;

use crate::helpers::stores::{conformance, Store};
use crate::helpers::{gala, hall, spawn_app_on, TestApp};

fn client(app: &TestApp) -> Client {
    app.typed()
}

fn buyer(app: &TestApp, user: &str) -> String {
    mint_user_token(
        &app.jwt_secret,
        user,
        chrono::Utc::now() + chrono::Duration::minutes(10),
    )
}

async fn the_client_speaks_the_whole_buyer_flow(store: Store) {
    let app = spawn_app_on(store).await;
    let client = client(&app);
    assert_eq!(client.health().await.unwrap().status, "ok");

    let venue: VenueSpec = serde_json::from_value(hall()).unwrap();
    let venue = client.create_venue(&venue).await.unwrap();
    assert_eq!(venue.seat_count, 17);
    let event: EventSpec = serde_json::from_value(gala(&venue.id.to_string())).unwrap();
    let event = client.create_event(&event).await.unwrap().id;
    assert_eq!(client.list_events().await.unwrap().events[0].id, event);
    assert_eq!(client.get_event(event).await.unwrap().counts.available, 14);

    let (alice, bob) = (buyer(&app, "alice"), buyer(&app, "bob"));
    let hold = client
        .hold_seats(event, &alice, &["stalls-B-1", "stalls-B-2"])
        .await
        .unwrap();
    assert_eq!(hold.total_cents, 9000);
    assert_eq!(hold.seats[0].label, "Stalls, Row B, Seat 1");

    // A refusal is the problem document, typed.
    let refused = client
        .hold_seats(event, &bob, &["stalls-B-2"])
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some("seat_unavailable"));
    let problem = refused.problem().unwrap();
    assert_eq!(problem.status, 409);
    assert_eq!(problem.seats.as_ref().unwrap()[0].id, "stalls-B-2");
    let invalid = client
        .hold(event, &bob, &HoldBody::default())
        .await
        .unwrap_err();
    assert_eq!(invalid.code(), Some("validation_failed"));

    assert_eq!(
        client
            .get_hold(event, &alice, hold.hold_token)
            .await
            .unwrap(),
        hold
    );
    let extended = client
        .extend_hold(event, &alice, hold.hold_token)
        .await
        .unwrap();
    assert!(extended.expires_at >= hold.expires_at);

    let first = client
        .checkout(event, &alice, hold.hold_token)
        .await
        .unwrap();
    let again = client
        .checkout(event, &alice, hold.hold_token)
        .await
        .unwrap();
    assert!(first.created && !again.created);
    assert_eq!(first.order, again.order);
    let order = first.order.order_id;
    assert_eq!(
        client.get_order(order, &alice).await.unwrap().status,
        OrderStatus::Paid
    );
    assert_eq!(
        client.get_order(order, &bob).await.unwrap_err().code(),
        Some("forbidden")
    );
    let seats = client.seats(event).await.unwrap();
    let sold: Vec<_> = seats
        .seats
        .iter()
        .filter(|s| s.status == boxoffice_core::availability::SeatStatus::Sold)
        .map(|s| s.seat.id.as_str())
        .collect();
    assert_eq!(sold, ["stalls-B-1", "stalls-B-2"]);
    let cancelled = client.cancel_order(order, &app.admin_token).await.unwrap();
    assert_eq!(cancelled.status, OrderStatus::Cancelled);

    let other = client
        .hold_seats(event, &bob, &["stalls-C-1"])
        .await
        .unwrap();
    let grown = client
        .add_seats(event, &bob, other.hold_token, &["stalls-C-2", "stalls-C-3"])
        .await
        .unwrap();
    assert_eq!(
        (grown.hold_token, grown.seats.len(), grown.expires_at),
        (other.hold_token, 3, other.expires_at)
    );
    let refused = client
        .add_seats(event, &alice, other.hold_token, &["stalls-C-4"])
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some("forbidden"));
    let shrunk = client
        .drop_seat(event, &bob, other.hold_token, "stalls-C-3")
        .await
        .unwrap()
        .expect("two seats are left");
    assert_eq!(shrunk.seats.len(), 2);
    client
        .drop_seat(event, &bob, other.hold_token, "stalls-C-2")
        .await
        .unwrap();
    client
        .release_hold(event, &bob, other.hold_token)
        .await
        .unwrap();
    assert_eq!(
        client
            .release_hold(event, &bob, other.hold_token)
            .await
            .unwrap_err()
            .code(),
        Some("not_found")
    );

    let places = BookingBody {
        area: "floor".into(),
        quantity: 3,
    };
    let booking = client
        .book(event, &bob, &places, Some("key-1"))
        .await
        .unwrap();
    assert_eq!(
        client
            .book(event, &bob, &places, Some("key-1"))
            .await
            .unwrap(),
        booking,
        "a repeated key answers the first booking"
    );
    assert_eq!(client.availability(event).await.unwrap().ga[0].left, 47);
    let booking = client
        .cancel_booking(booking.booking_id, &bob)
        .await
        .unwrap();
    assert_eq!(booking.status, OrderStatus::Cancelled);
}

conformance!(the_client_speaks_the_whole_buyer_flow);

#[tokio::test]
async fn a_session_token_from_the_client_is_a_buyer() {
    let app = crate::helpers::spawn_app().await;
    let client = client(&app);
    let session = client.create_session().await.unwrap();
    let venue: VenueSpec = serde_json::from_value(hall()).unwrap();
    let venue = client.create_venue(&venue).await.unwrap();
    let event: EventSpec = serde_json::from_value(gala(&venue.id.to_string())).unwrap();
    let event = client.create_event(&event).await.unwrap().id;
    let hold = client
        .hold_seats(event, &session.token, &["box-L-1"])
        .await
        .unwrap();
    assert_eq!(hold.seats[0].ticket_type, "premium");
    // Without the admin token, an admin call is refused with the problem's code.
    let anonymous = Client::new(&app.base);
    let venue: VenueSpec = serde_json::from_value(hall()).unwrap();
    assert_eq!(
        anonymous.create_venue(&venue).await.unwrap_err().code(),
        Some("unauthorized")
    );
}

#[tokio::test]
async fn the_client_waits_in_the_queue_and_holds_with_its_pass() {
    use boxoffice_client::api::EventPatch;
    use boxoffice_core::event::QueueSettings;

    let app = spawn_app_on(Store::Postgres).await;
    let client = client(&app);
    let event = boxoffice_core::ids::EventId::parse(&app.create_event().await).unwrap();
    let queue = QueueSettings {
        enabled: true,
        // Postgres keeps microseconds.
        opens_at: chrono::SubsecRound::trunc_subsecs(chrono::Utc::now(), 6),
        admit_per_minute: 600_000,
        session_seconds: 120,
        shuffle_at_open: true,
    };
    let patched = client
        .patch_event(
            event,
            &EventPatch {
                queue: Some(Some(queue)),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(patched.queue, Some(queue));

    let alice = buyer(&app, "alice");
    let refused = client
        .hold_seats(event, &alice, &["stalls-B-1"])
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some("queue_required"));

    let joined = client.join_queue(event, &alice).await.unwrap();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    let pass = loop {
        let status = client
            .queue_status(event, &alice, &joined.ticket)
            .await
            .unwrap();
        if status.admitted {
            break status.pass.expect("a pass once admitted");
        }
        assert!(tokio::time::Instant::now() < deadline, "never admitted");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let body = HoldBody {
        seats: Some(vec!["stalls-B-1".into()]),
        best_available: None,
    };
    let hold = client
        .hold_with_pass(event, &alice, Some(&pass), &body)
        .await
        .unwrap();
    assert_eq!(hold.seats[0].id, "stalls-B-1");
    let booking = BookingBody {
        area: "floor".into(),
        quantity: 2,
    };
    let booked = client
        .book_with_pass(event, &alice, Some(&pass), &booking, None)
        .await
        .unwrap();
    assert_eq!(booked.quantity, 2);
}

#[tokio::test]
async fn the_client_makes_organizations_and_keys_and_calls_with_them() {
    use boxoffice_client::api::{KeyBody, OrganizationBody};
    let app = spawn_app_on(Store::Postgres).await;
    let platform = client(&app);
    let acme = platform
        .create_organization(&OrganizationBody {
            name: "Acme".into(),
            slug: Some("acme".into()),
        })
        .await
        .unwrap();
    let made = platform
        .create_key(
            "acme",
            &KeyBody {
                name: "Clerk".into(),
                role: "sales".into(),
                expires_at: None,
                events: None,
            },
        )
        .await
        .unwrap();
    let clerk = Client::new(&app.base).admin(&made.key);
    assert_eq!(clerk.get_organization("acme").await.unwrap().id, acme.id);
    let mine = clerk.list_organizations().await.unwrap().organizations;
    assert_eq!(mine.len(), 1);
    // A sales key manages no keys: the refusal names the roles that may.
    let refused = clerk.list_keys("acme").await.unwrap_err();
    assert_eq!(refused.code(), Some("forbidden"));
    let problem = refused.problem().unwrap();
    assert_eq!(
        problem.required_roles.as_deref(),
        Some(
            &[
                boxoffice_core::access::Role::Platform,
                boxoffice_core::access::Role::Admin
            ][..]
        )
    );
    let keys = platform.list_keys("acme").await.unwrap().keys;
    assert_eq!((keys.len(), keys[0].id), (1, made.id));
    platform.revoke_key("acme", made.id).await.unwrap();
    assert_eq!(
        clerk.get_organization("acme").await.unwrap_err().code(),
        Some("unauthorized")
    );
}
