//! The server the demos race against, through the typed client, and how they get buyers.

use anyhow::Context;
use boxoffice_client::Client;
use boxoffice_core::event::EventSpec;
use boxoffice_core::ids::EventId;
use boxoffice_core::venue::VenueSpec;
use serde_json::json;

/// A server, its admin token and, if known, its JWT secret.
#[derive(Clone, Debug)]
pub struct Server {
    /// The typed client, making admin calls with the admin token.
    pub client: Client,
    /// The server's JWT secret, if known: buyers' tokens are then minted here instead of
    /// asked for one session at a time (which the server limits per address).
    pub jwt_secret: Option<String>,
}

impl Server {
    /// A server at `base` whose admin token is `admin_token`.
    pub fn new(base: &str, admin_token: &str) -> Self {
        Self {
            client: Client::new(base).admin(admin_token),
            jwt_secret: None,
        }
    }

    /// Mints buyers' tokens with the server's JWT secret.
    pub fn with_jwt_secret(mut self, secret: Option<String>) -> Self {
        self.jwt_secret = secret;
        self
    }

    /// A new buyer's token: minted with the JWT secret when there is one, else an
    /// anonymous session.
    pub async fn buyer(&self) -> anyhow::Result<String> {
        match &self.jwt_secret {
            Some(secret) => Ok(boxoffice_client::mint_user_token(
                secret,
                &uuid::Uuid::new_v4().to_string(),
                chrono::Utc::now() + chrono::Duration::hours(1),
            )),
            None => Ok(self
                .client
                .create_session()
                .await
                .context("POST /v1/sessions: anonymous sessions must be enabled")?
                .token),
        }
    }

    /// Creates a one-section venue with `seats` seats in one row, and an event on it
    /// selling them, with a general-admission area of `places`; returns the event id.
    pub async fn create_race_event(
        &self,
        seats: u32,
        places: u32,
        max_per_booking: u32,
    ) -> anyhow::Result<EventId> {
        let venue: VenueSpec =
            serde_json::from_value(json!({"name": "Race demo hall", "sections": [
            {"id": "hall", "name": "Hall", "rows": [{"label": "A", "seats": seats}]}]}))?;
        let venue = self
            .client
            .create_venue(&venue)
            .await
            .with_context(|| format!("is the server running at {}?", self.client.base()))?;
        let event: EventSpec = serde_json::from_value(json!({
            "venue_id": venue.id, "name": "Race demo", "starts_at": "2099-01-01T20:00:00Z",
            "ticket_types": [{"code": "standard", "name": "Standard", "price_cents": 1000, "currency": "EUR"}],
            "allocations": [{"ticket_type": "standard", "section": "hall"}],
            "ga_areas": [{"code": "floor", "name": "Floor", "capacity": places,
                          "price_cents": 1000, "currency": "EUR", "max_per_booking": max_per_booking}]}))?;
        Ok(self.client.create_event(&event).await?.id)
    }
}
