//! `/pay/{order}`: a test payment page, served only with `--demo`, so the buyer's page
//! shows the whole flow of an event with a payment window. It stands where a platform's
//! payment provider would: Pay records the payment as the provider's webhook would
//! (`POST /v1/orders/{id}/payment`), Fail leaves the order pending with a message, and
//! Abandon goes back to the event without paying (the order expires at its `pay_by`).

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Form;
use boxoffice_core::hold::OrderStatus;
use boxoffice_service::orders::{self, LabelledOrder};
use serde::Deserialize;

use crate::error::ApiError;
use crate::state::AppState;

/// What the buyer pressed.
#[derive(Deserialize)]
pub struct Action {
    action: String,
}

/// The order `text` names, with its labels, or the answer when there is none (or no
/// `--demo`).
async fn order(state: &AppState, text: &str) -> Result<LabelledOrder, ApiError> {
    if !state.demo_payments() {
        return Err(ApiError::NotFound {
            code: "not_found",
            detail: "no such route".into(),
        });
    }
    let id = boxoffice_core::ids::parse_canonical_uuid(text);
    Ok(orders::get_order(state, id, None).await?)
}

/// The page: the order, and Pay, Fail and Abandon while it is pending.
pub async fn page(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let order = order(&state, &id).await?;
    Ok(render(&order, None))
}

/// What a button does.
pub async fn act(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Form(form): Form<Action>,
) -> Result<Response, ApiError> {
    let order = order(&state, &id).await?;
    let back = format!(
        "/?event={}&order={}",
        order.order.event_id, order.order.order_id
    );
    match form.action.as_str() {
        "pay" => {
            let reference = format!("test_{}", uuid::Uuid::new_v4().simple());
            let paid = orders::pay_order(
                &state,
                Some(order.order.order_id),
                &reference,
                order.order.total_cents,
                None,
            )
            .await;
            match paid {
                Ok(_) => Ok(Redirect::to(&back).into_response()),
                Err(e) => Ok(render(&order, Some(&ApiError::from(e).to_string()))),
            }
        }
        "fail" => Ok(render(
            &order,
            Some("The test payment failed: nothing was charged. You can try again until the time above."),
        )),
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

fn money(cents: i64, currency: &str) -> String {
    format!("{} {}.{:02}", esc(currency), cents / 100, cents % 100)
}

/// The page for `order`, with `message` above the buttons.
fn render(order: &LabelledOrder, message: Option<&str>) -> Response {
    let o = &order.order;
    let seats: String = order
        .seats
        .iter()
        .map(|s| format!("<li>{}</li>", esc(&s.label)))
        .collect();
    let pay_by = o
        .payment
        .as_ref()
        .map(|p| p.pay_by.format("%H:%M:%S UTC").to_string())
        .unwrap_or_default();
    let message = message
        .map(|m| format!(r#"<p class="message" role="alert">{}</p>"#, esc(m)))
        .unwrap_or_default();
    let body = match o.status {
        OrderStatus::PendingPayment => format!(
            r#"<p>Pay by <strong>{pay_by}</strong>; until then the seats are yours.</p>{message}
<form method="post" class="actions">
<button type="submit" name="action" value="pay">Pay {total}</button>
<button type="submit" name="action" value="fail">Fail</button>
<button type="submit" name="action" value="abandon">Abandon</button>
</form>"#,
            total = money(o.total_cents, &o.currency),
        ),
        status => format!(
            r#"{message}<p>This order is {}.</p><p><a href="/?event={}&amp;order={}">Back to the event</a></p>"#,
            status.as_str().replace('_', " "),
            o.event_id,
            o.order_id
        ),
    };
    let html = format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Test payment</title><link rel="icon" href="/favicon.svg" type="image/svg+xml"><link rel="stylesheet" href="/assets/app.css"></head>
<body><header class="top"><a class="brand" href="/">Boxoffice</a></header>
<main class="pay"><h1>Test payment</h1>
<p class="meta">A stand-in for a payment provider (<code>--demo</code>): nothing is charged.</p>
<section aria-labelledby="order-title"><h2 id="order-title">Order {id}</h2>
<ul class="basket">{seats}</ul><p class="total">Total {total}</p>{body}</section></main></body></html>"#,
        id = o.order_id,
        total = money(o.total_cents, &o.currency),
    );
    (
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
        .into_response()
}
