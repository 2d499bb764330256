//! Organizations and keys: a platform key creates organizations, keys are shown once and
//! work at once, each role may do what the role table says and nothing more, keys of one
//! organization see nothing of another's, and a revoked or expired key stops working on
//! every instance. (A long file: the isolation walk over every staff route needs the things
//! of two organizations set up beside it, and the role test one call of each right.)

use std::time::{Duration, Instant};

use boxoffice_core::access::{Right, Role};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::staff::{key, organization};
use crate::helpers::stores::Store;
use crate::helpers::{another_instance, spawn_app, As};

#[tokio::test]
async fn a_platform_key_creates_organizations_with_unique_slugs() {
    let app = spawn_app().await;
    let acme = organization(&app, "Acme Concerts").await;
    assert_eq!(acme["slug"], "acme-concerts");
    assert_eq!(acme["name"], "Acme Concerts");

    let (status, problem) = app
        .send(
            Method::POST,
            "/v1/organizations",
            &As::Admin,
            Some(&json!({ "name": "Another Acme", "slug": "acme-concerts" })),
        )
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::CONFLICT, Some("slug_taken"))
    );
    for bad in [
        json!({ "name": "", "slug": "fine" }),
        json!({ "name": "Fine", "slug": "Not Fine" }),
        json!({ "name": "Fine", "slug": "x".repeat(41) }),
    ] {
        let (status, problem) = app
            .send(Method::POST, "/v1/organizations", &As::Admin, Some(&bad))
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {problem}");
    }

    // What was there before organizations is in `default`; the platform token sees both.
    let (_, list) = app
        .send(Method::GET, "/v1/organizations", &As::Admin, None)
        .await;
    let slugs: Vec<&str> = list["organizations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["slug"].as_str().unwrap())
        .collect();
    assert_eq!(slugs, ["default", "acme-concerts"]);
    assert_eq!(
        app.count("organization").await,
        2,
        "the refused ones wrote nothing"
    );

    // An organization's admin key creates none, and sees its own only.
    let (admin, _) = key(&app, acme["id"].as_str().unwrap(), "admin").await;
    let (status, problem) = app
        .send(
            Method::POST,
            "/v1/organizations",
            &admin,
            Some(&json!({ "name": "Mine" })),
        )
        .await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("forbidden"))
    );
    assert_eq!(problem["required_roles"], json!(["platform"]));
    let (_, list) = app
        .send(Method::GET, "/v1/organizations", &admin, None)
        .await;
    assert_eq!(list["organizations"].as_array().unwrap().len(), 1);
    assert_eq!(list["organizations"][0]["id"], acme["id"]);
}

#[tokio::test]
async fn a_key_is_shown_once_works_at_once_and_another_organization_is_not_found() {
    let app = spawn_app().await;
    let acme = organization(&app, "Acme").await;
    let globex = organization(&app, "Globex").await;
    let (acme_id, globex_id) = (acme["id"].as_str().unwrap(), globex["id"].as_str().unwrap());
    let (status, made) = app
        .send(
            Method::POST,
            &format!("/v1/organizations/{acme_id}/keys"),
            &As::Admin,
            Some(&json!({ "name": "Box office", "role": "admin" })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let secret = made["key"].as_str().unwrap();
    assert!(secret.starts_with("bxk_") && secret.len() == 47, "{secret}");
    assert_eq!(made["prefix"].as_str().unwrap(), &secret[4..12]);
    assert_eq!(made["role"], "admin");
    let admin = As::Token(secret.to_owned());

    // Listed without the key, and the key kept nowhere in the database.
    let (status, list) = app
        .send(
            Method::GET,
            &format!("/v1/organizations/{acme_id}/keys"),
            &admin,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(list["keys"].as_array().unwrap().len(), 1);
    assert!(!list.to_string().contains(secret));
    assert_eq!(list["keys"][0]["prefix"], made["prefix"]);
    let stored: i64 = sqlx::query_scalar(
        "select count(*) from api_key k where strpos(row_to_json(k)::text, $1) > 0",
    )
    .bind(&secret[4..])
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(stored, 0);

    // Its own organization by id or slug; the other one is as missing as no organization.
    for own in [acme_id, "acme"] {
        let (status, body) = app
            .send(
                Method::GET,
                &format!("/v1/organizations/{own}"),
                &admin,
                None,
            )
            .await;
        assert_eq!((status, &body["id"]), (StatusCode::OK, &acme["id"]));
    }
    let missing = uuid::Uuid::new_v4().to_string();
    for path in [
        format!("/v1/organizations/{globex_id}"),
        format!("/v1/organizations/{missing}"),
        format!("/v1/organizations/{globex_id}/keys"),
        format!("/v1/organizations/{missing}/keys"),
    ] {
        let (status, problem) = app.send(Method::GET, &path, &admin, None).await;
        assert_eq!(
            (status, problem["code"].as_str()),
            (StatusCode::NOT_FOUND, Some("not_found")),
            "{path}"
        );
    }
    let (status, _) = app
        .send(
            Method::POST,
            &format!("/v1/organizations/{globex_id}/keys"),
            &admin,
            Some(&json!({ "name": "Mine now", "role": "admin" })),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // An admin key makes keys of its organization, but no platform key.
    let (status, problem) = app
        .send(
            Method::POST,
            &format!("/v1/organizations/{acme_id}/keys"),
            &admin,
            Some(&json!({ "name": "Root", "role": "platform" })),
        )
        .await;
    assert_eq!(
        (status, &problem["required_roles"]),
        (StatusCode::FORBIDDEN, &json!(["platform"]))
    );
    for bad in [
        json!({ "name": "x", "role": "root" }),
        json!({ "name": "", "role": "sales" }),
        json!({ "name": "x", "role": "sales", "expires_at": "2020-01-01T00:00:00Z" }),
    ] {
        let (status, problem) = app
            .send(
                Method::POST,
                &format!("/v1/organizations/{acme_id}/keys"),
                &admin,
                Some(&bad),
            )
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {problem}");
    }
    assert_eq!(
        app.count("api_key").await,
        1,
        "the refused ones made no key"
    );

    // Malformed, unknown: 401.
    for token in [
        "bxk_short".to_owned(),
        format!("bxk_{}", "A".repeat(43)),
        secret.replacen("bxk_", "bxk-", 1),
    ] {
        let (status, problem) = app
            .send(
                Method::GET,
                "/v1/organizations",
                &As::Token(token.clone()),
                None,
            )
            .await;
        assert_eq!(
            (status, problem["code"].as_str()),
            (StatusCode::UNAUTHORIZED, Some("unauthorized")),
            "{token}"
        );
    }
}

/// One call of each right, made so that a role that has the right gets past the check (and
/// then a 2xx, or a 404/422 for the made-up target), and one that has not gets 403; none for
/// a right no route needs yet.
fn call_of(right: Right, organization: &str) -> Option<(Method, String, Option<Value>)> {
    let nobody = uuid::Uuid::new_v4();
    Some(match right {
        Right::CreateOrganizations => (
            Method::POST,
            "/v1/organizations".into(),
            Some(json!({ "name": "" })),
        ),
        Right::ReadOrganization => (
            Method::GET,
            format!("/v1/organizations/{organization}"),
            None,
        ),
        Right::ManageKeys => (
            Method::GET,
            format!("/v1/organizations/{organization}/keys"),
            None,
        ),
        Right::WriteCatalog => (Method::POST, "/v1/venues".into(), Some(json!({}))),
        Right::ReadCatalog => (Method::GET, "/v1/venues".into(), None),
        Right::ReadOrders => (Method::GET, format!("/v1/events/{nobody}/orders"), None),
        Right::ChangeOrders => (Method::POST, format!("/v1/orders/{nobody}/cancel"), None),
        Right::CheckIn | Right::ReadAudit => return None,
    })
}

#[tokio::test]
async fn each_role_may_make_the_calls_of_its_rights_and_no_other() {
    let app = spawn_app().await;
    let acme = organization(&app, "Acme").await;
    let acme_id = acme["id"].as_str().unwrap();
    for role in Role::ALL {
        let (who, _) = key(&app, acme_id, role.as_str()).await;
        for right in Right::ALL {
            let Some((method, path, body)) = call_of(right, acme_id) else {
                continue;
            };
            let (status, answer) = app.send(method.clone(), &path, &who, body.as_ref()).await;
            if role.may(right) {
                assert_ne!(
                    status,
                    StatusCode::FORBIDDEN,
                    "{role} {right:?}: {method} {path}: {answer}"
                );
                assert!(
                    status.is_success()
                        || status == StatusCode::NOT_FOUND
                        || status == StatusCode::UNPROCESSABLE_ENTITY,
                    "{role} {right:?}: {method} {path}: {status} {answer}"
                );
            } else {
                assert_eq!(
                    (status, answer["code"].as_str()),
                    (StatusCode::FORBIDDEN, Some("forbidden")),
                    "{role} {right:?}: {method} {path}: {answer}"
                );
                let roles: Vec<&str> = right.roles().iter().map(|r| r.as_str()).collect();
                assert_eq!(answer["required_roles"], json!(roles), "{role} {right:?}");
            }
        }
    }
    // A buyer's token is no staff key.
    let (status, _) = app
        .send(Method::GET, "/v1/venues", &app.buyer("alice"), None)
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn two_keys_live_at_once_and_a_revoked_one_stops_on_every_instance_within_a_second() {
    let app = spawn_app().await;
    let other = another_instance(&app, Store::Postgres).await;
    let acme = organization(&app, "Acme").await;
    let acme_id = acme["id"].as_str().unwrap();
    let (old, old_id) = key(&app, acme_id, "admin").await;
    let (new, _) = key(&app, acme_id, "admin").await;
    let path = format!("/v1/organizations/{acme_id}");
    // A key made on one instance works on the other within a second too.
    let deadline = Instant::now() + Duration::from_secs(1);
    loop {
        let (status, _) = other.send(Method::GET, &path, &new, None).await;
        if status == StatusCode::OK {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the new key still answers {status}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for instance in [&app, &other] {
        for key in [&old, &new] {
            let (status, _) = instance.send(Method::GET, &path, key, None).await;
            assert_eq!(status, StatusCode::OK);
        }
    }

    let (status, _) = app
        .send(
            Method::DELETE,
            &format!("/v1/organizations/{acme_id}/keys/{old_id}"),
            &new,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let revoked = Instant::now();
    // On the instance that revoked it, at once.
    let (status, _) = app.send(Method::GET, &path, &old, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // On the other, within a second.
    loop {
        let (status, _) = other.send(Method::GET, &path, &old, None).await;
        if status == StatusCode::UNAUTHORIZED {
            break;
        }
        assert_eq!(status, StatusCode::OK);
        assert!(
            revoked.elapsed() < Duration::from_secs(1),
            "the revoked key still works on the other instance"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The new key goes on working on both; the list says when the old one was revoked.
    for instance in [&app, &other] {
        let (status, _) = instance.send(Method::GET, &path, &new, None).await;
        assert_eq!(status, StatusCode::OK);
    }
    let (_, list) = app
        .send(
            Method::GET,
            &format!("/v1/organizations/{acme_id}/keys"),
            &new,
            None,
        )
        .await;
    let revoked_at: Vec<bool> = list["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| !k["revoked_at"].is_null())
        .collect();
    assert_eq!(revoked_at, [true, false]);
    // Revoking it again changes nothing; another organization's key is not found.
    let (status, _) = app
        .send(
            Method::DELETE,
            &format!("/v1/organizations/{acme_id}/keys/{old_id}"),
            &new,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let globex = organization(&app, "Globex").await;
    let (_, globex_key) = key(&app, globex["id"].as_str().unwrap(), "sales").await;
    let (status, _) = app
        .send(
            Method::DELETE,
            &format!("/v1/organizations/{acme_id}/keys/{globex_key}"),
            &new,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_key_stops_working_when_it_expires() {
    let app = spawn_app().await;
    let expires_at = chrono::Utc::now() + chrono::Duration::milliseconds(1500);
    let (status, made) = app
        .send(
            Method::POST,
            "/v1/organizations/default/keys",
            &As::Admin,
            Some(&json!({ "name": "Tonight", "role": "reports", "expires_at": expires_at })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let reports = As::Token(made["key"].as_str().unwrap().to_owned());
    let (status, _) = app.send(Method::GET, "/v1/venues", &reports, None).await;
    assert_eq!(status, StatusCode::OK);
    let wait = (expires_at - chrono::Utc::now())
        .to_std()
        .unwrap_or_default();
    tokio::time::sleep(wait + Duration::from_millis(50)).await;
    let (status, _) = app.send(Method::GET, "/v1/venues", &reports, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

/// Walks every staff route of the route table (`access::ROUTES`): with the ids of another
/// organization's venue, event, season, order, booking and key, a key of Acme (an admin,
/// who may make every call) gets exactly what an id that does not exist gets, a 404; a
/// route added to the table with an id this test cannot fill fails here.
#[tokio::test]
async fn another_organizations_things_answer_404_on_every_staff_route_as_missing_ones_do() {
    let app = spawn_app().await;
    // The default organization's things, made with the platform token.
    let (events, season) = crate::helpers::seasons::season(&app).await;
    let event = events[0].clone();
    let venue = {
        let (_, body) = app.get(&format!("/v1/events/{event}")).await;
        body["venue_id"].as_str().unwrap().to_owned()
    };
    let order = crate::helpers::buy(&app, &event, "alice", &["stalls-B-1"]).await;
    let order = order["order_id"].as_str().unwrap().to_owned();
    let (status, booking) = app
        .send(
            Method::POST,
            &format!("/v1/events/{event}/bookings"),
            &app.buyer("alice"),
            Some(&json!({"area": "floor", "quantity": 1})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{booking}");
    let booking = booking["booking_id"].as_str().unwrap().to_owned();
    let (_, default_key) = key(&app, "default", "sales").await;
    let ticket: uuid::Uuid = sqlx::query_scalar("select ticket_id from order_seat limit 1")
        .fetch_one(&app.db)
        .await
        .unwrap();
    let ticket = ticket.to_string();

    let acme = organization(&app, "Acme").await;
    let (admin, _) = key(&app, acme["id"].as_str().unwrap(), "admin").await;
    let before = (
        app.count("ticket_order").await,
        app.count("api_key").await,
        app.seat_statuses(&event).await,
    );

    let missing = uuid::Uuid::new_v4().to_string();
    let mut walked = 0;
    for (method, route, _) in boxoffice_server::access::ROUTES {
        if !route.contains('{') {
            continue; // Lists and creations: below.
        }
        let fill = |theirs: bool| -> String {
            let id = |real: &str| {
                if theirs {
                    real.to_owned()
                } else {
                    missing.clone()
                }
            };
            let first = if route.starts_with("/v1/venues/") {
                id(&venue)
            } else if route.starts_with("/v1/events/") {
                id(&event)
            } else if route.starts_with("/v1/seasons/") {
                id(&season)
            } else if route.starts_with("/v1/orders/") {
                id(&order)
            } else if route.starts_with("/v1/bookings/") {
                id(&booking)
            } else if route.starts_with("/v1/tickets/") {
                id(&ticket)
            } else if route.starts_with("/v1/organizations/") {
                id("00000000-0000-0000-0000-000000000001")
            } else {
                panic!("{route}: which organization's thing is its id?")
            };
            let path = route
                .replacen("{id}", &first, 1)
                .replace("{event_id}", &event)
                .replace("{code}", "partners")
                .replace("{key_id}", &default_key)
                .replace("{kid}", "sk_default");
            if path.ends_with("/export") {
                path + "?format=pretix"
            } else {
                path
            }
        };
        let body = match (method.as_str(), *route) {
            ("PATCH", "/v1/events/{id}") => Some(json!({})),
            ("PUT", "/v1/venues/{id}") => Some(crate::helpers::hall()),
            ("PUT", "/v1/organizations/{id}/webhook") => {
                Some(json!({"url": "https://platform.example/hook"}))
            }
            ("PUT", _) => {
                Some(json!({"allocations": [{"ticket_type": "standard", "section": "stalls"}]}))
            }
            ("POST", "/v1/events/{id}/allocations/withdraw") => Some(json!({"section": "stalls"})),
            ("POST", "/v1/orders/{id}/payment" | "/v1/bookings/{id}/payment") => {
                Some(json!({"reference": "r", "amount_cents": 4500}))
            }
            ("POST", "/v1/organizations/{id}/keys") => Some(json!({"name": "x", "role": "sales"})),
            ("POST", "/v1/events/{id}/scanner-pairings") => {
                Some(json!({"origin": "https://box.example"}))
            }
            ("POST", "/v1/organizations/{id}/signing-keys") => Some(json!({"algorithm": "HS256"})),
            ("POST", "/v1/orders/{id}/moves") => {
                Some(json!({"moves": [{"from": "stalls-A-1", "to": "stalls-B-1"}]}))
            }
            ("POST", "/v1/orders/{id}/resale") => Some(json!({"seats": ["stalls-A-1"]})),
            ("POST", "/v1/events/{id}/swaps") => Some(json!({
                "a": {"order_id": order, "seat": "stalls-A-1"},
                "b": {"order_id": order, "seat": "stalls-A-2"}})),
            ("POST", "/v1/events/{id}/checkins") => {
                Some(json!({"secret": "bx1.e30.e30", "nonce": "n"}))
            }
            _ => None,
        };
        let theirs = app
            .send(method.clone(), &fill(true), &admin, body.as_ref())
            .await;
        let none = app
            .send(method.clone(), &fill(false), &admin, body.as_ref())
            .await;
        assert_eq!(
            theirs.0,
            StatusCode::NOT_FOUND,
            "{method} {route}: {}",
            theirs.1
        );
        assert_eq!(
            (theirs.0, &theirs.1["code"], &theirs.1["detail"]),
            (none.0, &none.1["code"], &none.1["detail"]),
            "{method} {route}: another organization's and a missing one's answers differ"
        );
        walked += 1;
    }
    assert!(walked >= 19, "{walked} routes walked");
    assert_eq!(
        (
            app.count("ticket_order").await,
            app.count("api_key").await,
            app.seat_statuses(&event).await,
        ),
        before,
        "a refused call changed something"
    );

    // Lists hold Acme's own only; its creations are its own, on its own venues.
    let (_, venues) = app.send(Method::GET, "/v1/venues", &admin, None).await;
    assert_eq!(venues["venues"], json!([]));
    let (status, _) = app
        .send(
            Method::POST,
            "/v1/events",
            &admin,
            Some(&crate::helpers::gala(&venue)),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "another's venue is no venue"
    );
    let (status, body) = app
        .send(
            Method::POST,
            "/v1/venues",
            &admin,
            Some(&crate::helpers::hall()),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let own_venue = body["id"].as_str().unwrap().to_owned();
    let (status, body) = app
        .send(
            Method::POST,
            "/v1/events",
            &admin,
            Some(&crate::helpers::gala(&own_venue)),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let own_event = body["id"].as_str().unwrap().to_owned();
    let (_, view) = app.get(&format!("/v1/events/{own_event}")).await;
    assert_eq!(view["organization_id"], acme["id"]);
    let mut named = crate::helpers::hall();
    named["organization_id"] = json!("00000000-0000-0000-0000-000000000001");
    let (status, _) = app
        .send(Method::POST, "/v1/venues", &admin, Some(&named))
        .await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "a body naming another organization"
    );
    let (status, body) = app
        .send(
            Method::POST,
            "/v1/seasons",
            &admin,
            Some(&json!({"name": "Theirs", "event_ids": [event],
                         "ticket_types": [{"code": "s", "name": "S", "price_cents": 100, "currency": "EUR"}],
                         "allocations": [{"ticket_type": "s", "section": "stalls"}]})),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");

    // Public reads stay public, and say whose each event is.
    let (_, listed) = app
        .get(&format!(
            "/v1/events?organization={}",
            acme["slug"].as_str().unwrap()
        ))
        .await;
    let ids: Vec<&str> = listed["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [own_event.as_str()]);
    let (_, all) = app.get("/v1/events").await;
    assert_eq!(all["events"].as_array().unwrap().len(), 4);
    let (status, _) = app.get("/v1/events?organization=nobody").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_key_reads_who_it_is_and_lists_narrow_to_one_organization() {
    let app = spawn_app().await;
    let default_event = app.create_event().await;
    let acme_event = crate::helpers::staff::organization_with_event(&app, "acme").await;
    let acme = app.typed().get_organization("acme").await.unwrap();

    let me = app.typed().me().await.unwrap();
    assert_eq!(
        (me.key_id, me.name.as_str(), me.role, me.organization_id),
        (
            None,
            "BOXOFFICE_ADMIN_TOKEN",
            Role::Platform,
            boxoffice_core::ids::OrganizationId::DEFAULT
        )
    );
    assert_eq!(me.rights.len(), Right::ALL.len());
    let (reports, reports_id) = key(&app, &acme.id.to_string(), "reports").await;
    let (status, me) = app.send(Method::GET, "/v1/me", &reports, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        me,
        json!({
            "key_id": reports_id,
            "name": "reports key",
            "role": "reports",
            "organization_id": acme.id,
            "rights": ["read_organization", "read_catalog", "read_orders", "read_audit"],
        })
    );
    let (status, _) = app
        .send(Method::GET, "/v1/me", &app.buyer("alice"), None)
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "a buyer's token is no key");

    // A platform key narrows the venue, event and season lists to one organization.
    let ids = |list: &Value, field: &str| -> Vec<String> {
        list[field]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let (_, all) = app.send(Method::GET, "/v1/venues", &As::Admin, None).await;
    assert_eq!(ids(&all, "venues").len(), 2);
    let (_, acme_venues) = app
        .send(
            Method::GET,
            "/v1/venues?organization=acme",
            &As::Admin,
            None,
        )
        .await;
    let (_, view) = app.get(&format!("/v1/events/{acme_event}")).await;
    assert_eq!(
        ids(&acme_venues, "venues"),
        [view["venue_id"].as_str().unwrap()]
    );
    let (_, events) = app.get("/v1/events?organization=default").await;
    assert_eq!(ids(&events, "events"), [default_event.as_str()]);
    let (_, seasons) = app.get("/v1/seasons?organization=acme").await;
    assert_eq!(seasons["seasons"], json!([]));
    for path in [
        "/v1/seasons?organization=nobody",
        "/v1/events?organization=nobody",
    ] {
        assert_eq!(app.get(path).await.0, StatusCode::NOT_FOUND, "{path}");
    }
    // A key of an organization: its own, and another's is not found.
    let (_, own) = app
        .send(Method::GET, "/v1/venues?organization=acme", &reports, None)
        .await;
    assert_eq!(own, acme_venues);
    let (status, _) = app
        .send(
            Method::GET,
            "/v1/venues?organization=default",
            &reports,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
