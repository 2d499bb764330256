//! Clients that misbehave at the connection level, driven over raw TCP: half-sent request
//! heads, idle keep-alive connections, more connections than the cap, bodies that never
//! arrive.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::helpers::{spawn_app_with, TestApp};

/// A bound on how long a test waits for something that must happen; never a claim about
/// how fast it happens.
const PATIENCE: Duration = Duration::from_secs(10);

async fn connect(app: &TestApp) -> TcpStream {
    TcpStream::connect(app.base.trim_start_matches("http://"))
        .await
        .expect("the server accepts")
}

/// Reads until the server closes the connection; what it sent before that.
async fn read_to_close(stream: &mut TcpStream) -> String {
    let mut out = Vec::new();
    tokio::time::timeout(PATIENCE, stream.read_to_end(&mut out))
        .await
        .expect("the server closes the connection")
        .ok();
    String::from_utf8_lossy(&out).into_owned()
}

/// Sends one keep-alive `GET path` and reads its whole answer (the body is small and
/// sent with a length).
async fn get_on(stream: &mut TcpStream, path: &str) -> String {
    stream
        .write_all(format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes())
        .await
        .unwrap();
    read_answer(stream).await
}

/// Reads one answer with a `content-length`.
async fn read_answer(stream: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = tokio::time::timeout(PATIENCE, stream.read(&mut buf))
            .await
            .expect("an answer comes")
            .unwrap();
        assert!(n > 0, "closed before the answer was complete: {got:?}");
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length: usize = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length: ")
                        .map(|v| v.trim().parse().unwrap())
                })
                .unwrap_or(0);
            if body.len() >= length {
                return text;
            }
        }
    }
}

/// Whether the server sends anything on `stream` within `wait`.
async fn says_something_within(stream: &mut TcpStream, wait: Duration) -> bool {
    let mut buf = [0u8; 1];
    matches!(
        tokio::time::timeout(wait, stream.read(&mut buf)).await,
        Ok(Ok(n)) if n > 0
    )
}

#[tokio::test]
async fn half_sent_request_heads_are_disconnected_and_the_server_keeps_serving() {
    let app =
        spawn_app_with(|s| s.limits.connections.header_timeout = Duration::from_millis(500)).await;
    let mut stalled = Vec::new();
    for _ in 0..300 {
        let mut stream = connect(&app).await;
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\n")
            .await
            .unwrap();
        stalled.push(stream);
    }
    // A client that sends nothing at all is a half-sent head too.
    stalled.push(connect(&app).await);
    assert_eq!(app.get("/healthz").await.0, StatusCode::OK, "still serving");
    for stream in &mut stalled {
        assert_eq!(read_to_close(stream).await, "", "closed without an answer");
    }
}

#[tokio::test]
async fn idle_keep_alive_connections_close_after_the_idle_timeout_not_the_header_timeout() {
    let app = spawn_app_with(|s| {
        s.limits.connections.header_timeout = Duration::from_millis(300);
        s.limits.connections.idle_timeout = Duration::from_millis(1500);
    })
    .await;
    let mut stream = connect(&app).await;
    assert!(get_on(&mut stream, "/healthz")
        .await
        .starts_with("HTTP/1.1 200"));
    // Idle for longer than the header timeout: a head not yet begun is not a slow one.
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(
        get_on(&mut stream, "/healthz")
            .await
            .starts_with("HTTP/1.1 200"),
        "an idle connection under the idle timeout is kept"
    );
    assert_eq!(
        read_to_close(&mut stream).await,
        "",
        "then closed when idle"
    );
}

#[tokio::test]
async fn past_the_connection_cap_the_server_serves_the_connections_it_has() {
    let app = spawn_app_with(|s| s.limits.connections.max_connections = 2).await;
    let mut first = connect(&app).await;
    let mut second = connect(&app).await;
    assert!(get_on(&mut first, "/healthz")
        .await
        .starts_with("HTTP/1.1 200"));
    assert!(get_on(&mut second, "/healthz")
        .await
        .starts_with("HTTP/1.1 200"));

    // The third waits in the listen backlog, unanswered...
    let mut third = connect(&app).await;
    third
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    assert!(
        !says_something_within(&mut third, Duration::from_millis(500)).await,
        "a connection past the cap is not served"
    );
    // ...while the open ones go on being served.
    assert!(get_on(&mut first, "/healthz")
        .await
        .starts_with("HTTP/1.1 200"));
    // A slot frees up: the third is served.
    drop(first);
    let answer = read_answer(&mut third).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[tokio::test]
async fn a_body_that_does_not_arrive_in_time_is_408_and_changes_nothing() {
    let app = spawn_app_with(|s| s.limits.request_timeout = Duration::from_millis(500)).await;
    let event = app.create_event().await;
    let token = app.user_token("slowpoke");
    let mut stream = connect(&app).await;
    stream
        .write_all(
            format!(
                "POST /v1/events/{event}/holds HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {token}\r\n\
                 Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"seats\": ["
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let answer = read_answer(&mut stream).await;
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/problem+json"),
        "{head}"
    );
    let problem: Value = serde_json::from_str(body).unwrap();
    assert_eq!(problem["code"], "request_timeout");
    assert!(crate::helpers::held(&app, &event).await.is_empty());
}

#[tokio::test]
async fn a_head_larger_than_allowed_is_refused_and_the_server_goes_on() {
    let app = spawn_app_with(|_| {}).await;
    let mut stream = connect(&app).await;
    let huge = "x".repeat(512 * 1024);
    let _ = stream
        .write_all(format!("GET /healthz HTTP/1.1\r\nHost: t\r\nX-Big: {huge}\r\n\r\n").as_bytes())
        .await;
    let answer = read_to_close(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer:.200}");
    assert_eq!(app.get("/healthz").await.0, StatusCode::OK);
}

/// A request head is bounded by its size: many small headers are served, one head past
/// 64 KB is refused with 431 however few headers it has.
#[tokio::test]
async fn a_request_head_is_bounded_by_size_not_by_a_hundred_headers() {
    let app = spawn_app_with(|_| {}).await;
    let mut stream = connect(&app).await;
    let many: String = (0..150).map(|i| format!("X-Note-{i}: {i}\r\n")).collect();
    stream
        .write_all(format!("GET /healthz HTTP/1.1\r\nHost: t\r\n{many}\r\n").as_bytes())
        .await
        .unwrap();
    let answer = read_answer(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    // Sent at once or a piece at a time, a head past the limit is refused.
    for piece in [usize::MAX, 4096] {
        let mut stream = connect(&app).await;
        let big = "a".repeat(100 * 1024);
        let head = format!("GET /healthz HTTP/1.1\r\nHost: t\r\nX-Big: {big}\r\n\r\n");
        for chunk in head.as_bytes().chunks(piece.min(head.len())) {
            // The server may answer and close before the whole head is sent.
            if stream.write_all(chunk).await.is_err() {
                break;
            }
        }
        let mut start = [0u8; 12];
        tokio::time::timeout(PATIENCE, stream.read_exact(&mut start))
            .await
            .expect("an answer comes")
            .expect("it reads");
        assert_eq!(&start, b"HTTP/1.1 431", "pieces of {piece}");
    }
}

/// The kernel may queue as many connections for the accept loop as it allows
/// (`net.core.somaxconn`, up to 4096), not 128: a sale's opening connects thousands at once.
#[tokio::test]
async fn the_listen_backlog_is_what_the_kernel_allows() {
    let app = spawn_app_with(|_| {}).await;
    let port = app.base.rsplit(':').next().unwrap().to_owned();
    let somaxconn: u32 = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .expect("a Linux machine")
        .trim()
        .parse()
        .unwrap();
    // `ss` shows a listening socket's backlog as its Send-Q.
    let out = std::process::Command::new("ss")
        .args(["-ltnH", &format!("sport = :{port}")])
        .output()
        .expect("ss (iproute2) is installed");
    let listing = String::from_utf8_lossy(&out.stdout).into_owned();
    let backlog: u32 = listing
        .split_whitespace()
        .nth(2)
        .and_then(|q| q.parse().ok())
        .unwrap_or_else(|| panic!("no listening socket on {port}: {listing:?}"));
    assert_eq!(backlog, somaxconn.min(4096), "{listing}");
}
