//! Cross-origin use (`BOXOFFICE_ALLOWED_ORIGINS`): a platform's page on a named origin may
//! call the API and the event stream, preflights included; any other origin gets no CORS
//! header, and with none named no origin gets one.

use reqwest::{Method, StatusCode};

use crate::helpers::{spawn_app, spawn_app_with, TestApp};

const SHOP: &str = "https://shop.example";

async fn with_origin(app: &TestApp, method: Method, path: &str, origin: &str) -> reqwest::Response {
    app.client
        .request(method, format!("{}{path}", app.base))
        .header("origin", origin)
        .send()
        .await
        .unwrap()
}

fn allowed(response: &reqwest::Response) -> Option<&str> {
    response
        .headers()
        .get("access-control-allow-origin")
        .map(|v| v.to_str().unwrap())
}

#[tokio::test]
async fn a_named_origin_may_call_the_api_and_the_stream_and_no_other_may() {
    let app = spawn_app_with(|s| {
        s.server.allowed_origins = boxoffice_server::config::parse_origins(&[
            SHOP.to_owned(),
            "http://localhost:8080".to_owned(),
        ])
        .unwrap()
    })
    .await;
    let event = app.create_event().await;
    let seats = format!("/v1/events/{event}/seats");
    let answer = with_origin(&app, Method::GET, &seats, SHOP).await;
    assert_eq!(answer.status(), StatusCode::OK);
    assert_eq!(allowed(&answer), Some(SHOP));
    let answer = with_origin(&app, Method::GET, &seats, "http://localhost:8080").await;
    assert_eq!(allowed(&answer), Some("http://localhost:8080"));
    for other in ["https://evil.example", "https://shop.example.evil", "null"] {
        let answer = with_origin(&app, Method::GET, &seats, other).await;
        assert_eq!(
            answer.status(),
            StatusCode::OK,
            "the answer itself is the same"
        );
        assert_eq!(allowed(&answer), None, "{other}");
    }

    // The stream.
    let stream = with_origin(
        &app,
        Method::GET,
        &format!("/v1/events/{event}/stream"),
        SHOP,
    )
    .await;
    assert_eq!(stream.status(), StatusCode::OK);
    assert_eq!(allowed(&stream), Some(SHOP));
    drop(stream);

    // A preflight for a hold with a token: answered before any route, for the shop only.
    let preflight = |origin: &'static str| {
        app.client
            .request(
                Method::OPTIONS,
                format!("{}/v1/events/{event}/holds", app.base),
            )
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "authorization, content-type, boxoffice-pass",
            )
            .send()
    };
    let answer = preflight(SHOP).await.unwrap();
    assert!(answer.status().is_success(), "{}", answer.status());
    assert_eq!(allowed(&answer), Some(SHOP));
    let header = |name: &str| {
        answer.headers()[name]
            .to_str()
            .unwrap()
            .to_ascii_lowercase()
    };
    assert!(header("access-control-allow-methods").contains("post"));
    let headers = header("access-control-allow-headers");
    for name in ["authorization", "content-type", "boxoffice-pass"] {
        assert!(headers.contains(name), "{headers}");
    }
    let answer = preflight("https://evil.example").await.unwrap();
    assert_eq!(allowed(&answer), None);

    // A problem reaches the shop's page too, readable with its Retry-After.
    let refused = with_origin(&app, Method::GET, "/v1/events/nope/seats", SHOP).await;
    assert_eq!(refused.status(), StatusCode::NOT_FOUND);
    assert_eq!(allowed(&refused), Some(SHOP));
}

#[tokio::test]
async fn without_named_origins_no_origin_gets_cors_headers() {
    let app = spawn_app().await;
    let event = app.create_event().await;
    let answer = with_origin(
        &app,
        Method::GET,
        &format!("/v1/events/{event}/seats"),
        SHOP,
    )
    .await;
    assert_eq!(answer.status(), StatusCode::OK);
    assert_eq!(allowed(&answer), None);
    let vary = answer
        .headers()
        .get("vary")
        .map(|v| v.to_str().unwrap().to_owned());
    assert!(
        !vary.as_deref().unwrap_or_default().contains("origin"),
        "{vary:?}"
    );
    // A preflight is no route's: 405, as any OPTIONS.
    let preflight = app
        .client
        .request(
            Method::OPTIONS,
            format!("{}/v1/events/{event}/holds", app.base),
        )
        .header("origin", SHOP)
        .header("access-control-request-method", "POST")
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(allowed(&preflight), None);
}

#[test]
fn origins_are_checked_when_the_server_starts() {
    use boxoffice_server::config::parse_origins;
    let ok = parse_origins(&[
        " https://shop.example ".into(),
        "".into(),
        "http://127.0.0.1:8080".into(),
    ])
    .unwrap();
    assert_eq!(ok.len(), 2);
    for bad in [
        "shop.example",
        "https://shop.example/",
        "https://shop.example/checkout",
        "ftp://shop.example",
        "*",
    ] {
        assert!(parse_origins(&[bad.into()]).is_err(), "{bad}");
    }
}
