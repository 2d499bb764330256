//! The audit log: a change made with a key writes one entry in its own transaction (a
//! refused or failed change writes none, and an entry never outlives its change); entries
//! name the actor, the target and each changed field, never a secret; they are read newest
//! first with filters and a cursor; and Postgres refuses to rewrite them.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{gala, hall, spawn_app, As, TestApp};

async fn log(app: &TestApp, organization: &str, who: &As, query: &str) -> (StatusCode, Value) {
    app.send(
        Method::GET,
        &format!("/v1/organizations/{organization}/audit{query}"),
        who,
        None,
    )
    .await
}

fn actions(page: &Value) -> Vec<&str> {
    page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn each_change_made_with_a_key_is_one_entry_with_its_actor_target_and_fields() {
    let app = spawn_app().await;
    let (status, acme) = app
        .send(
            Method::POST,
            "/v1/organizations",
            &As::Admin,
            Some(&json!({"name": "Acme", "slug": "acme"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (_, made) = app
        .send(
            Method::POST,
            "/v1/organizations/acme/keys",
            &As::Admin,
            Some(&json!({"name": "Office", "role": "admin"})),
        )
        .await;
    let secret = made["key"].as_str().unwrap().to_owned();
    let admin = As::Token(secret.clone());
    let request_id = "audit-test-request";
    let response = app
        .request(Method::POST, "/v1/venues", &admin)
        .header("x-request-id", request_id)
        .json(&hall())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let venue: Value = response.json().await.unwrap();
    let venue = venue["id"].as_str().unwrap().to_owned();
    let (_, event) = app
        .send(Method::POST, "/v1/events", &admin, Some(&gala(&venue)))
        .await;
    let event = event["id"].as_str().unwrap().to_owned();
    let queue =
        json!({"enabled": true, "opens_at": "2030-01-01T10:00:00Z", "admit_per_minute": 100});
    let (status, _) = app
        .send(
            Method::PATCH,
            &format!("/v1/events/{event}"),
            &admin,
            Some(&json!({ "queue": queue })),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = app
        .send(
            Method::POST,
            &format!("/v1/events/{event}/allocations/withdraw"),
            &admin,
            Some(&json!({"section": "stalls", "rows": ["C"]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, clerk) = app
        .send(
            Method::POST,
            "/v1/organizations/acme/keys",
            &admin,
            Some(&json!({"name": "Clerk", "role": "sales"})),
        )
        .await;
    let (status, _) = app
        .send(
            Method::DELETE,
            &format!(
                "/v1/organizations/acme/keys/{}",
                clerk["id"].as_str().unwrap()
            ),
            &admin,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);

    let (status, page) = log(&app, "acme", &admin, "").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(
        actions(&page),
        [
            "key.revoked",
            "key.created",
            "event.allocations_withdrawn",
            "event.updated",
            "event.created",
            "venue.created",
            "key.created",
            "organization.created",
        ]
    );
    let entries = page["entries"].as_array().unwrap();
    // The platform token made the organization and the first key.
    assert_eq!(
        entries[7]["actor"],
        json!({"key_id": null, "key_name": "BOXOFFICE_ADMIN_TOKEN", "role": "platform"})
    );
    assert_eq!(
        entries[7]["target"],
        json!({"type": "organization", "id": acme["id"]})
    );
    assert_eq!(
        entries[7]["changes"],
        json!({"name": "Acme", "slug": "acme"})
    );
    // The rest the office's admin key, each with its target and fields.
    for entry in &entries[..6] {
        assert_eq!(
            entry["actor"],
            json!({"key_id": made["id"], "key_name": "Office", "role": "admin"})
        );
        assert_eq!(entry["organization_id"], acme["id"]);
    }
    assert_eq!(entries[5]["target"], json!({"type": "venue", "id": venue}));
    assert_eq!(entries[5]["request_id"], request_id);
    assert_eq!(entries[5]["changes"]["seat_count"], 17);
    assert_eq!(entries[4]["changes"]["name"], "Spring Gala");
    assert_eq!(entries[3]["changes"]["queue"][0], Value::Null);
    assert_eq!(entries[3]["changes"]["queue"][1]["admit_per_minute"], 100);
    assert_eq!(entries[2]["changes"]["seats_changed"], 4);
    assert_eq!(entries[1]["changes"]["role"], "sales");
    assert!(entries[0]["changes"]["revoked_at"][0].is_null());
    assert!(entries[0]["changes"]["revoked_at"][1].is_string());
    // Never a secret: neither key appears anywhere in the log, nor in its table.
    let whole = page.to_string();
    assert!(!whole.contains(&secret[4..]));
    assert!(!whole.contains(&clerk["key"].as_str().unwrap()[4..]));

    // Filters, and pages by cursor.
    let (_, by_action) = log(&app, "acme", &admin, "?action=key.created").await;
    assert_eq!(actions(&by_action), ["key.created", "key.created"]);
    let (_, by_target) = log(&app, "acme", &admin, &format!("?target={event}")).await;
    assert_eq!(
        actions(&by_target),
        [
            "event.allocations_withdrawn",
            "event.updated",
            "event.created"
        ]
    );
    let (_, by_actor) = log(
        &app,
        "acme",
        &admin,
        &format!("?actor={}", made["id"].as_str().unwrap()),
    )
    .await;
    assert_eq!(by_actor["entries"].as_array().unwrap().len(), 6);
    let (_, future) = log(&app, "acme", &admin, "?since=2100-01-01T00:00:00Z").await;
    assert_eq!(future["entries"], json!([]));
    let mut seen = Vec::new();
    let mut query = "?limit=3".to_owned();
    loop {
        let (status, page) = log(&app, "acme", &admin, &query).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        seen.extend(actions(&page).into_iter().map(str::to_owned));
        match page["next_cursor"].as_str() {
            Some(cursor) => query = format!("?limit=3&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(seen, actions(&page));
    for bad in [
        "?limit=0",
        "?limit=501",
        "?cursor=x",
        "?since=yesterday",
        "?actor=office",
    ] {
        let (status, problem) = log(&app, "acme", &admin, bad).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {problem}");
    }
    // The default organization's log has none of Acme's entries.
    let (_, default) = log(&app, "default", &As::Admin, "").await;
    assert_eq!(default["entries"], json!([]));
}

#[tokio::test]
async fn who_may_read_the_log_and_refused_changes_write_nothing() {
    let app = spawn_app().await;
    let key = |role: &'static str| {
        let app = &app;
        async move {
            let (_, made) = app
                .send(
                    Method::POST,
                    "/v1/organizations/default/keys",
                    &As::Admin,
                    Some(&json!({"name": role, "role": role})),
                )
                .await;
            As::Token(made["key"].as_str().unwrap().to_owned())
        }
    };
    let (sales, reports) = (key("sales").await, key("reports").await);
    let entries = app.count("audit_entry").await;
    assert_eq!(entries, 2);
    assert_eq!(log(&app, "default", &reports, "").await.0, StatusCode::OK);
    let (status, problem) = log(&app, "default", &sales, "").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(
        problem["required_roles"],
        json!(["platform", "admin", "reports"])
    );

    // Refused: by role, by validation, by a taken slug. None writes an entry.
    let (status, _) = app
        .send(Method::POST, "/v1/venues", &sales, Some(&hall()))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let mut bad = gala(&uuid::Uuid::new_v4().to_string());
    bad["name"] = json!("");
    let (status, _) = app
        .send(Method::POST, "/v1/events", &As::Admin, Some(&bad))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let (status, _) = app
        .send(
            Method::POST,
            "/v1/organizations",
            &As::Admin,
            Some(&json!({"name": "Again", "slug": "default"})),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(app.count("audit_entry").await, entries);
}

#[tokio::test]
async fn an_entry_that_cannot_be_written_takes_its_change_with_it() {
    let app = spawn_app().await;
    // The log refuses one kind of entry: the change it records must not happen either.
    sqlx::query(
        "create function refuse_venue_entries() returns trigger language plpgsql as $$
         begin
             if new.action = 'venue.created' then raise exception 'no room in the log'; end if;
             return new;
         end $$",
    )
    .execute(&app.db)
    .await
    .unwrap();
    sqlx::query(
        "create trigger refuse_venue_entries before insert on audit_entry
         for each row execute function refuse_venue_entries()",
    )
    .execute(&app.db)
    .await
    .unwrap();
    let (status, _) = app
        .send(Method::POST, "/v1/venues", &As::Admin, Some(&hall()))
        .await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(app.count("venue").await, 0, "the venue went with its entry");
    assert_eq!(app.count("seat").await, 0);
    assert_eq!(app.count("audit_entry").await, 0);
    // Other changes are written with theirs.
    let (status, _) = app
        .send(
            Method::POST,
            "/v1/organizations",
            &As::Admin,
            Some(&json!({"name": "Acme"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(app.count("audit_entry").await, 1);
}

#[tokio::test]
async fn postgres_refuses_to_update_delete_or_truncate_the_log() {
    let app = spawn_app().await;
    let (status, _) = app
        .send(
            Method::POST,
            "/v1/organizations",
            &As::Admin,
            Some(&json!({"name": "Acme"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    for statement in [
        "update audit_entry set action = 'organization.forgotten'",
        "update audit_entry set changes = '{}' where seq = (select min(seq) from audit_entry)",
        "delete from audit_entry",
        "truncate audit_entry",
    ] {
        let refused = sqlx::query(statement).execute(&app.db).await.unwrap_err();
        assert!(
            refused.to_string().contains("append-only"),
            "{statement}: {refused}"
        );
    }
    let action: String = sqlx::query_scalar("select action from audit_entry")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(action, "organization.created");
}

#[tokio::test]
async fn staff_actions_on_orders_and_bookings_are_logged_and_buyers_own_are_not() {
    let app = spawn_app().await;
    let (_, made) = app
        .send(
            Method::POST,
            "/v1/organizations/default/keys",
            &As::Admin,
            Some(&json!({"name": "Box office", "role": "sales"})),
        )
        .await;
    let clerk = As::Token(made["key"].as_str().unwrap().to_owned());
    let venue = app.create_venue().await;
    let mut spec = gala(&venue);
    spec["payment_window_seconds"] = json!(600);
    let (_, event) = app.post_events(&spec).await;
    let event = event["id"].as_str().unwrap().to_owned();
    let pending = crate::helpers::buy(&app, &event, "alice", &["stalls-B-1"]).await;
    let mine = crate::helpers::buy(&app, &event, "bob", &["stalls-B-2"]).await;
    let (status, booking) = app
        .send(
            Method::POST,
            &format!("/v1/events/{event}/bookings"),
            &app.buyer("carol"),
            Some(&json!({"area": "floor", "quantity": 2})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let before = app.count("audit_entry").await;

    // Bob cancels his own order: a buyer's action, not in the log.
    let (status, _) = app
        .send(
            Method::POST,
            &format!("/v1/orders/{}/cancel", mine["order_id"].as_str().unwrap()),
            &app.buyer("bob"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(app.count("audit_entry").await, before);

    // The clerk records Alice's payment, then cancels her order, and Carol's booking.
    let order = pending["order_id"].as_str().unwrap();
    let (status, paid) = app
        .send(
            Method::POST,
            &format!("/v1/orders/{order}/payment"),
            &clerk,
            Some(&json!({"reference": "PSP-1", "amount_cents": pending["total_cents"]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{paid}");
    for path in [
        format!("/v1/orders/{order}/cancel"),
        format!(
            "/v1/bookings/{}/cancel",
            booking["booking_id"].as_str().unwrap()
        ),
    ] {
        let (status, body) = app.send(Method::POST, &path, &clerk, None).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
    }
    // Cancelling again changes nothing, and logs nothing.
    let (status, _) = app
        .send(
            Method::POST,
            &format!("/v1/orders/{order}/cancel"),
            &clerk,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);

    let (_, page) = log(&app, "default", &As::Admin, "").await;
    let entries = &page["entries"].as_array().unwrap()[..3];
    let summary: Vec<(&str, &str, &Value)> = entries
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap(),
                e["target"]["type"].as_str().unwrap(),
                &e["changes"],
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "booking.cancelled",
                "booking",
                &json!({"status": ["pending_payment", "cancelled"]})
            ),
            (
                "order.cancelled",
                "order",
                &json!({"status": ["paid", "cancelled"]})
            ),
            (
                "order.paid",
                "order",
                &json!({"status": ["pending_payment", "paid"], "payment_reference": [null, "PSP-1"]})
            ),
        ]
    );
    for entry in entries {
        assert_eq!(entry["actor"]["key_name"], "Box office");
        assert_eq!(entry["actor"]["role"], "sales");
    }
    assert_eq!(app.count("audit_entry").await, before + 3);
}
