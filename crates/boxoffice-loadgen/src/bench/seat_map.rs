//! `seat-map --seats S --workers N`: buyers loading the seat map (`GET
//! /v1/events/{id}/seats`, every body read in full) back to back, with a tenth of the seats
//! held first; reports the bytes a load moves on the wire as well as its latency. With
//! `--accept-encoding` the loads offer compression as a browser does (the bytes counted
//! are the compressed ones); with `--revalidate` each worker sends the `ETag` of its last
//! load, as a browser's cache does on a repeat load. With `--page` each load is what the
//! seat-map page does instead: `GET /v1/events/{id}/layout` (revalidated likewise), then
//! the live stream with `?snapshot=statuses` up to its first event; the bytes counted are
//! both.

use boxoffice_client::turns::kept;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;

use super::{drive, Check, Layout, Pace, Report, Target};

/// What to run.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// Seats in the event.
    pub seats: usize,
    /// How requests are paced.
    pub pace: Pace,
    /// How long to send.
    pub duration: Duration,
    /// The `Accept-Encoding` to send, if any.
    pub accept_encoding: Option<&'static str>,
    /// Send the last answer's `ETag` as `If-None-Match`.
    pub revalidate: bool,
    /// Load as the page does: the layout, then the statuses from the stream.
    pub page: bool,
}

/// Runs the scenario and reports it.
pub async fn run(target: &Target, params: Params) -> anyhow::Result<Report> {
    let layout = Layout {
        max_seats_per_user: 8,
        ..Layout::of(params.seats, 600)
    };
    let event = target.seated_event(&layout).await?;
    // Hold every tenth seat, eight to a buyer, so the map carries held seats too.
    let held: Vec<String> = (0..layout.seats())
        .step_by(10)
        .map(|i| layout.seat_id(i))
        .collect();
    let holds = held.chunks(8).enumerate().map(|(b, seats)| {
        let (api, token) = (target.api.clone(), target.buyer(&format!("reader-{b}")));
        let seats: Vec<String> = seats.to_vec();
        async move {
            let seats: Vec<&str> = seats.iter().map(String::as_str).collect();
            kept(|| api.hold_seats(event, &token, &seats))
                .await
                .map(drop)
        }
    });
    futures::future::try_join_all(holds).await?;

    let bytes = Arc::new(AtomicU64::new(0));
    let (api, counted) = (target.api.clone(), bytes.clone());
    let path = if params.page {
        format!("/v1/events/{event}/layout")
    } else {
        format!("/v1/events/{event}/seats")
    };
    let stream = format!("/v1/events/{event}/stream?snapshot=statuses");
    // The last ETag seen; shared by the workers, as one browser cache would be.
    let etag = Arc::new(std::sync::Mutex::new(None::<String>));
    let (stats, elapsed) = drive(target, params.pace, params.duration, move |_| {
        let mut request = api.request(Method::GET, &path, None);
        if let Some(encoding) = params.accept_encoding {
            request = request.header(reqwest::header::ACCEPT_ENCODING, encoding);
        }
        let last = etag.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(tag) = last.filter(|_| params.revalidate) {
            request = request.header(reqwest::header::IF_NONE_MATCH, tag);
        }
        let (counted, etag) = (counted.clone(), etag.clone());
        let statuses = params.page.then(|| api.request(Method::GET, &stream, None));
        async move {
            let Ok(response) = request.send().await else {
                return 0;
            };
            let status = response.status().as_u16();
            if let Some(tag) = response.headers().get(reqwest::header::ETAG) {
                *etag.lock().unwrap_or_else(|p| p.into_inner()) =
                    tag.to_str().ok().map(str::to_owned);
            }
            let Ok(body) = response.bytes().await else {
                return 0;
            };
            let mut moved = body.len();
            if let Some(statuses) = statuses {
                match first_event(statuses).await {
                    Some(size) => moved += size,
                    None => return 0,
                }
            }
            counted.fetch_add(moved as u64, Ordering::Relaxed);
            status
        }
    })
    .await;
    let mut report = Report::new("seat-map");
    report
        .parameter("seats", layout.seats())
        .parameter("duration_s", params.duration.as_secs_f64())
        .parameter("accept_encoding", params.accept_encoding.unwrap_or("none"))
        .parameter("revalidate", params.revalidate)
        .parameter("page", params.page)
        .pace(params.pace);
    report.elapsed_seconds = elapsed.as_secs_f64();
    let operation = if params.page {
        "GET /layout + statuses"
    } else {
        "GET /seats"
    };
    report.operations.push(stats.report(operation, elapsed));
    let loads = stats.count().max(1);
    report.figure(
        "kb_per_load",
        bytes.load(Ordering::Relaxed) as f64 / loads as f64 / 1024.0,
    );
    let answered = stats.of(200) + stats.of(304);
    report.checks.push(Check::new(
        "every load answered 200 (or 304 when revalidating)",
        answered == stats.count() && (params.revalidate || stats.of(304) == 0),
        format!(
            "{} × 200, {} × 304 of {} loads",
            stats.of(200),
            stats.of(304),
            stats.count()
        ),
    ));
    let counts = target.api.availability(event).await?.counts;
    report.checks.push(Check::new(
        "the map shows the seats held",
        counts.held as usize == held.len(),
        format!(
            "{} held of {} held before the loads",
            counts.held,
            held.len()
        ),
    ));
    Ok(report)
}

/// Opens a stream and reads it up to the end of its first event (its snapshot); the bytes
/// that took, or `None` if the stream did not open or ended first.
async fn first_event(request: reqwest::RequestBuilder) -> Option<usize> {
    use futures::StreamExt;
    let response = request.send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let mut body = response.bytes_stream();
    let mut seen = Vec::new();
    while let Some(chunk) = body.next().await {
        seen.extend_from_slice(&chunk.ok()?);
        if seen.windows(2).any(|w| w == b"\n\n") {
            return Some(seen.len());
        }
    }
    None
}
