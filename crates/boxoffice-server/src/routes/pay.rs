//! `/pay/{id}`: a test payment page, served only with `--demo`, so the buyer's page shows
//! the whole flow of an event with a payment window, for an order of seats or a booking of
//! standing places. It stands where a platform's payment provider would: Pay records the
//! payment as the provider's webhook would (`POST /v1/orders/{id}/payment` or
//! `POST /v1/bookings/{id}/payment`), Fail leaves it pending with a message, and Abandon
//! goes back to the event without paying (it expires at its `pay_by`).

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Form;
use boxoffice_core::hold::OrderStatus;
use boxoffice_core::ids::EventId;
use boxoffice_core::local_time;
use boxoffice_service::tickets::print::price;
use boxoffice_service::{bookings, events, orders};
use serde::Deserialize;
use uuid::Uuid;

use crate::error::ApiError;
use crate::state::AppState;

/// What the buyer pressed.
#[derive(Deserialize)]
pub struct Action {
    action: String,
}

/// What is being paid for, as the page shows it.
struct Payable {
    id: Uuid,
    /// `order` or `booking`: the buyer's page's query parameter for it.
    kind: &'static str,
    event_id: EventId,
    status: OrderStatus,
    pay_by: Option<chrono::DateTime<chrono::Utc>>,
    /// Each line with its price.
    lines: Vec<(String, i64)>,
    total_cents: i64,
    currency: String,
}

/// The order or booking `text` names, or the answer when there is none (or no `--demo`).
async fn payable(state: &AppState, text: &str) -> Result<Payable, ApiError> {
    if !state.demo_payments() {
        return Err(ApiError::NotFound {
            code: "not_found",
            detail: "no such route".into(),
        });
    }
    let id = boxoffice_core::ids::parse_canonical_uuid(text);
    match orders::get_order(state, id, None).await {
        Ok(order) => Ok(Payable {
            id: order.order.order_id,
            kind: "order",
            event_id: order.order.event_id,
            status: order.order.status,
            pay_by: order.order.payment.as_ref().map(|p| p.pay_by),
            lines: order
                .seats
                .into_iter()
                .map(|s| (s.label, s.price_cents))
                .collect(),
            total_cents: order.order.total_cents,
            currency: order.order.currency,
        }),
        Err(boxoffice_service::Error::OrderNotFound) => {
            let b = bookings::get_booking(state, id, None).await?;
            let each = b.total_cents / i64::from(b.quantity.max(1));
            let places = if b.quantity == 1 {
                "1 place".to_owned()
            } else {
                format!("{} places", b.quantity)
            };
            let area = events::record(state, b.event_id)
                .await?
                .ga_areas
                .into_iter()
                .find(|(a, _)| a.code == b.area)
                .map_or(b.area.clone(), |(a, _)| a.name);
            Ok(Payable {
                id: b.booking_id,
                kind: "booking",
                event_id: b.event_id,
                status: b.status,
                pay_by: b.pay_by,
                lines: vec![(
                    format!("{places}, {area} ({} each)", price(each, &b.currency)),
                    b.total_cents,
                )],
                total_cents: b.total_cents,
                currency: b.currency,
            })
        }
        Err(e) => Err(e.into()),
    }
}

/// The page: what is paid for, and Pay, Fail and Abandon while it is pending.
pub async fn page(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let payable = payable(&state, &id).await?;
    render(&state, &payable, None).await
}

/// What a button does.
pub async fn act(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Form(form): Form<Action>,
) -> Result<Response, ApiError> {
    let p = payable(&state, &id).await?;
    let back = format!("/?event={}&{}={}", p.event_id, p.kind, p.id);
    match form.action.as_str() {
        "pay" => {
            let reference = format!("test_{}", Uuid::new_v4().simple());
            let paid = if p.kind == "booking" {
                bookings::pay_booking(&state, Some(p.id), &reference, p.total_cents, None)
                    .await
                    .map(drop)
            } else {
                orders::pay_order(&state, Some(p.id), &reference, p.total_cents, None)
                    .await
                    .map(drop)
            };
            match paid {
                Ok(()) => Ok(Redirect::to(&back).into_response()),
                Err(e) => render(&state, &p, Some(&ApiError::from(e).to_string())).await,
            }
        }
        "fail" => render(
            &state,
            &p,
            Some("The test payment failed: nothing was charged. You can try again until the time above."),
        )
        .await,
        "abandon" => Ok(Redirect::to(&back).into_response()),
        _ => Err(ApiError::invalid("action", "must be pay, fail or abandon")),
    }
}

fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The page for `p`, with `message` above the buttons: the event's name and local time,
/// each line with its price, the total, and until when it may be paid.
async fn render(
    state: &AppState,
    p: &Payable,
    message: Option<&str>,
) -> Result<Response, ApiError> {
    let event = events::record(state, p.event_id).await?;
    let zone = &event.summary.time_zone;
    let lines: String = p
        .lines
        .iter()
        .map(|(label, cents)| {
            format!(
                "<li><span>{}</span><span>{}</span></li>",
                esc(label),
                esc(&price(*cents, &p.currency))
            )
        })
        .collect();
    let message = message
        .map(|m| format!(r#"<p class="message" role="alert">{}</p>"#, esc(m)))
        .unwrap_or_default();
    let what = if p.kind == "booking" {
        "places"
    } else {
        "seats"
    };
    let total = esc(&price(p.total_cents, &p.currency));
    let body = match p.status {
        OrderStatus::PendingPayment => format!(
            r#"<p>Pay by <strong>{pay_by}</strong>; until then the {what} are yours.</p>{message}
<form method="post" class="actions">
<button type="submit" name="action" value="pay">Pay {total}</button>
<button type="submit" name="action" value="fail">Fail</button>
<button type="submit" name="action" value="abandon">Abandon</button>
</form>"#,
            pay_by = esc(&p
                .pay_by
                .map(|at| local_time::clock(at, zone))
                .unwrap_or_default()),
        ),
        status => format!(
            r#"{message}<p>This {kind} is {}.</p><p><a href="/?event={}&amp;{kind}={}">Back to the event</a></p>"#,
            status.as_str().replace('_', " "),
            p.event_id,
            p.id,
            kind = p.kind,
        ),
    };
    let html = format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pay for {event} · Test payment</title><link rel="icon" href="/favicon.svg" type="image/svg+xml"><link rel="stylesheet" href="/assets/app.css"></head>
<body><header class="top"><a class="brand" href="/">Boxoffice</a></header>
<main class="pay"><h1>Pay for {event}</h1>
<p class="meta">{when}</p>
<p class="meta">A test payment page (<code>--demo</code>) standing where a payment provider would: nothing is charged.</p>
<section aria-labelledby="order-title"><h2 id="order-title">Your {kind}</h2>
<ul class="basket">{lines}</ul><p class="total">Total {total}</p>{body}
<p class="meta">{Kind} {id}</p></section></main></body></html>"#,
        event = esc(&event.summary.name),
        when = esc(&local_time::date_time(event.summary.starts_at, zone)),
        kind = p.kind,
        Kind = if p.kind == "booking" {
            "Booking"
        } else {
            "Order"
        },
        id = p.id,
    );
    Ok((
        StatusCode::OK,
        [
            (header::CACHE_CONTROL, "no-store"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
            ),
        ],
        Html(html),
    )
        .into_response())
}
