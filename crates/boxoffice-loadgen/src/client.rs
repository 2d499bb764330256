//! The HTTP calls the demos make.

use anyhow::{bail, Context};
use reqwest::StatusCode;
use serde_json::{json, Value};

/// A server and the admin token to set things up with.
#[derive(Clone, Debug)]
pub struct Server {
    /// Base URL, e.g. `http://127.0.0.1:3000`.
    pub base: String,
    /// Admin bearer token.
    pub admin_token: String,
    /// The server's JWT secret, if known: buyers' tokens are then minted here instead of
    /// asked for one session at a time (which the server limits per address).
    pub jwt_secret: Option<String>,
    http: reqwest::Client,
}

impl Server {
    /// A client for the server at `base`.
    pub fn new(base: &str, admin_token: &str) -> Self {
        Self {
            base: base.trim_end_matches('/').to_owned(),
            admin_token: admin_token.to_owned(),
            jwt_secret: None,
            http: reqwest::Client::new(),
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
        let Some(secret) = &self.jwt_secret else {
            return self.session().await;
        };
        let claims = json!({
            "sub": uuid::Uuid::new_v4().to_string(),
            "exp": std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)?
                .as_secs()
                + 3600,
        });
        Ok(jsonwebtoken::encode(
            &jsonwebtoken::Header::default(),
            &claims,
            &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()),
        )?)
    }

    async fn admin_post(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.admin_token)
            .json(body)
            .send()
            .await
            .with_context(|| format!("POST {path}: is the server running at {}?", self.base))?;
        let status = response.status();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            bail!("POST {path} answered {status}: {body}");
        }
        Ok(body)
    }

    /// Creates a one-section venue with `seats` seats in one row, and an event on it
    /// selling them, with a general-admission area of `places`; returns the event id.
    pub async fn create_race_event(
        &self,
        seats: u32,
        places: u32,
        max_per_booking: u32,
    ) -> anyhow::Result<String> {
        let venue = self
            .admin_post(
                "/v1/venues",
                &json!({"name": "Race demo hall", "sections": [
                    {"id": "hall", "name": "Hall", "rows": [{"label": "A", "seats": seats}]}]}),
            )
            .await?;
        let event = self
            .admin_post(
                "/v1/events",
                &json!({"venue_id": venue["id"], "name": "Race demo", "starts_at": "2099-01-01T20:00:00Z",
                    "ticket_types": [{"code": "standard", "name": "Standard", "price_cents": 1000, "currency": "EUR"}],
                    "allocations": [{"ticket_type": "standard", "section": "hall"}],
                    "ga_areas": [{"code": "floor", "name": "Floor", "capacity": places,
                                  "price_cents": 1000, "currency": "EUR", "max_per_booking": max_per_booking}]}),
            )
            .await?;
        Ok(event["id"]
            .as_str()
            .context("the event has an id")?
            .to_owned())
    }

    /// A new anonymous buyer's token.
    pub async fn session(&self) -> anyhow::Result<String> {
        let response = self
            .http
            .post(format!("{}/v1/sessions", self.base))
            .send()
            .await?;
        if response.status() != StatusCode::CREATED {
            bail!(
                "POST /v1/sessions answered {}: anonymous sessions must be enabled",
                response.status()
            );
        }
        let body: Value = response.json().await?;
        Ok(body["token"]
            .as_str()
            .context("the session has a token")?
            .to_owned())
    }

    /// A buyer's `POST` to `path`, not yet sent.
    pub fn buyer_post(&self, token: &str, path: &str, body: &Value) -> reqwest::RequestBuilder {
        self.http
            .post(format!("{}{path}", self.base))
            .bearer_auth(token)
            .json(body)
    }

    /// `GET path` as JSON.
    pub async fn get(&self, path: &str) -> anyhow::Result<Value> {
        Ok(self
            .http
            .get(format!("{}{path}", self.base))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?)
    }
}
