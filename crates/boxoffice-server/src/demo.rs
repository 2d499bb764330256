//! The demo venue and event of `boxoffice serve --demo`: created once, found again after.

use boxoffice_core::event::EventSpec;
use boxoffice_core::ids::{EventId, VenueId};
use boxoffice_core::venue::pretix::{Object, Plan};
use boxoffice_core::venue::VenueLayout;
use boxoffice_service::{events, venues, Secret};
use boxoffice_store::pg::db;
use chrono::{Duration, Timelike, Utc};
use serde_json::json;
use uuid::Uuid;

use crate::config::{GeneratedSecrets, Settings};
use crate::state::AppState;

/// The demo venue's fixed id, so every start finds the same one.
pub const DEMO_VENUE_ID: VenueId =
    VenueId(Uuid::from_u128(0x5eed_0000_0000_4000_8000_0000_0000_0001));
/// The demo event's fixed id.
pub const DEMO_EVENT_ID: EventId =
    EventId(Uuid::from_u128(0x5eed_0000_0000_4000_8000_0000_0000_0002));

/// Riverside Hall as a pretix seating plan, so the demo runs the import path: a stage,
/// ten curved stalls rows (A–C "Front stalls"), a balcony of four rows, a box at each side,
/// wheelchair spaces with companion seats at the ends of stalls row J and in the left box:
/// 310 seats.
const RIVERSIDE_HALL: &str = include_str!("../demo/riverside-hall.pretix.json");

/// The demo venue, read from its plan.
fn venue_layout() -> anyhow::Result<VenueLayout> {
    let Object(plan) = serde_json::from_str::<Object<Plan>>(RIVERSIDE_HALL)?;
    plan.into_layout(None)
        .map_err(|e| anyhow::anyhow!("demo venue: {e}"))
}

/// Spring Gala: the front stalls (rows A–C) and the boxes premium, the rest standard, stalls
/// row H held back, and a standing floor for 500; ten minutes to pay after checkout (on the
/// test payment page, `/pay/{order}`).
fn event_spec() -> EventSpec {
    let starts_at = (Utc::now() + Duration::days(30))
        .with_hour(19)
        .and_then(|t| t.with_minute(30))
        .and_then(|t| t.with_second(0))
        .and_then(|t| t.with_nanosecond(0))
        .expect("19:30:00 exists every day in UTC");
    serde_json::from_value(json!({
        "venue_id": DEMO_VENUE_ID,
        "name": "Spring Gala",
        "starts_at": starts_at,
        "section_order": ["stalls", "boxes", "balcony"],
        "payment_window_seconds": 600,
        "ticket_types": [
            {"code": "standard", "name": "Standard", "price_cents": 4500, "currency": "EUR"},
            {"code": "premium", "name": "Premium", "price_cents": 9000, "currency": "EUR"}],
        "allocations": [
            {"ticket_type": "standard", "section": "stalls", "rows": ["D", "E", "F", "G", "I", "J"]},
            {"ticket_type": "premium", "category": "Front stalls"},
            {"ticket_type": "standard", "section": "balcony"},
            {"ticket_type": "premium", "section": "boxes"}],
        "ga_areas": [{"code": "floor", "name": "Standing floor", "capacity": 500,
                      "price_cents": 3000, "currency": "EUR", "max_per_booking": 10}]
    }))
    .expect("the demo event is well-formed")
}

/// Creates the demo venue and event unless they exist; returns the event id and whether
/// anything was created. Safe to run from several servers at once.
pub async fn ensure_demo(state: &AppState) -> anyhow::Result<(EventId, bool)> {
    let venue = venues::ensure(state, DEMO_VENUE_ID, &venue_layout()?).await?;
    let event = events::ensure(state, DEMO_EVENT_ID, event_spec())
        .await
        .map_err(|e| anyhow::anyhow!("demo event: {e}"))?;
    Ok((DEMO_EVENT_ID, venue || event))
}

/// Swaps the secrets this start made up (none was configured) for the ones the demo's
/// first start kept in its database, so buyers' tokens (a `/?order=` link) and the printed
/// admin token stay good across restarts. Creates and migrates the database to do it.
pub async fn keep_secrets(settings: &mut Settings, made: &GeneratedSecrets) -> anyhow::Result<()> {
    if !made.jwt_secret && !made.admin_token {
        return Ok(());
    }
    let config = &settings.stores.database;
    db::ensure_database(&config.url).await?;
    let pool = db::connect_lazy(&db::DbConfig {
        pool_size: 1,
        ..config.clone()
    })?;
    db::migrate(&pool).await?;
    let server = &mut settings.server;
    if made.jwt_secret {
        server.jwt_secret =
            Secret::new(db::demo_secret(&pool, "jwt_secret", server.jwt_secret.expose()).await?);
    }
    if made.admin_token {
        server.admin_token =
            Secret::new(db::demo_secret(&pool, "admin_token", server.admin_token.expose()).await?);
    }
    pool.close().await;
    Ok(())
}
