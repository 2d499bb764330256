//! A typed async client of the Boxoffice HTTP API (docs/api.md, and `/openapi.json`). (A
//! long file: one method per route, each a few lines, read as one list.)
//!
//! Every call answers the API's own wire types ([`boxoffice_api`]); every error answer
//! becomes [`Error::Problem`] with the server's problem document, so a caller matches on
//! its stable `code` rather than on text. [`mint_user_token`] makes buyers' tokens for a
//! server whose JWT secret the caller shares (load generators, tests, a ticketing
//! platform's back end).
//!
//! # Layout
//!
//! - [`Client`]: one server, one connection pool; admin calls use its admin token, buyer
//!   calls take the buyer's token.
//! - [`Error`]: the problem document, or a failure to reach the server or read its answer.
//! - [`mint_user_token`]: an HS256 user token with `sub` and `exp`.
//! - [`live`]: the live stream of an event's seats as typed events.
//! - [`release`]: many calls released at the same moment, as races are run.
//! - [`turns`]: a call refused for now made again at the turn the server gave it.

use boxoffice_api::{
    AddSeatsBody, AllocationsChanged, AllocationsRequest, AuditList, AvailabilityView,
    BestAvailable, BookingBody, BookingView, ChannelReleased, CheckinBody, CheckinView,
    CheckoutBody, EventCreated, EventList, EventPatch, EventView, Extended, Health, HoldBody,
    HoldView, KeyBody, KeyCreated, KeyList, LayoutView, MeView, OrderView, OrganizationBody,
    OrganizationList, OrganizationView, PaymentBody, Problem, QueueJoined, QueueLine, QueueStatus,
    RevokedList, SeasonCreated, SeasonHoldBody, SeasonHoldView, SeatsView, SessionCreated,
    SigningKeyBody, SigningKeyCreated, SigningKeyList, TicketList, VenueCreated, VenueList,
    VenueView, WaitlistEntryView, WaitlistJoin, WebhookBody, WebhookSet, WebhookView,
};
use boxoffice_core::event::{EventSpec, WithdrawSpec};
use boxoffice_core::ids::{EventId, KeyId, SeasonId, VenueId};
use boxoffice_core::season::SeasonSpec;
use boxoffice_core::venue::VenueSpec;
use chrono::{DateTime, Utc};
use reqwest::{Method, RequestBuilder, StatusCode};
use serde::de::DeserializeOwned;
use serde::Serialize;
use uuid::Uuid;

pub use boxoffice_api as api;

pub mod live;
pub mod release;
pub mod turns;

/// Why a call did not answer what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server answered with a problem document (every 4xx and 5xx).
    #[error("{} {}: {}", .0.status, .0.code, .0.detail)]
    Problem(Box<Problem>),
    /// The server could not be reached, or its answer could not be read.
    #[error(transparent)]
    Transport(#[from] reqwest::Error),
    /// A live stream broke off, or carried an event this client could not read.
    #[error("stream: {0}")]
    Stream(String),
    /// The server answered something this client does not understand.
    #[error("unexpected answer {status}: {body}")]
    Unexpected {
        /// Its status.
        status: StatusCode,
        /// Its body, as text.
        body: String,
    },
}

impl Error {
    /// The problem's stable `code` (`seat_unavailable`, `rate_limited`, …), if the server
    /// answered one.
    pub fn code(&self) -> Option<&str> {
        match self {
            Error::Problem(p) => Some(&p.code),
            _ => None,
        }
    }

    /// The problem document, if the server answered one.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            Error::Problem(p) => Some(p),
            _ => None,
        }
    }
}

/// What a call answers.
pub type Result<T> = std::result::Result<T, Error>;

/// What a checkout came to.
#[derive(Clone, Debug, PartialEq)]
pub struct Ordered {
    /// The order.
    pub order: OrderView,
    /// `true` when this call made it (201); `false` when the hold had become this order
    /// before (200).
    pub created: bool,
}

/// A client of one Boxoffice server. Cheap to clone: clones share one connection pool.
#[derive(Clone, Debug)]
pub struct Client {
    base: String,
    admin_token: Option<String>,
    reader_token: Option<String>,
    http: reqwest::Client,
}

impl Client {
    /// A client of the server at `base` (`http://127.0.0.1:3000`).
    pub fn new(base: &str) -> Self {
        Self::with_http(base, reqwest::Client::new())
    }

    /// A client over an HTTP client of the caller's (timeouts, pool sizes).
    pub fn with_http(base: &str, http: reqwest::Client) -> Self {
        Self {
            base: base.trim_end_matches('/').to_owned(),
            admin_token: None,
            reader_token: None,
            http,
        }
    }

    /// The same client, making staff calls with `token`: a key (`bxk_…`), or
    /// `BOXOFFICE_ADMIN_TOKEN`.
    pub fn admin(mut self, token: &str) -> Self {
        self.admin_token = Some(token.to_owned());
        self
    }

    /// The same client, reading seats, layouts, availability and streams as the buyer of
    /// this user token: a sales channel's buyer (a token with a `channel` claim) sees that
    /// channel's seats on sale.
    pub fn reader(mut self, token: &str) -> Self {
        self.reader_token = Some(token.to_owned());
        self
    }

    /// The server's base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// A request to `path`, with `token` as its bearer if given.
    pub fn request(&self, method: Method, path: &str, token: Option<&str>) -> RequestBuilder {
        let request = self.http.request(method, format!("{}{path}", self.base));
        match token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    fn admin_token(&self) -> Option<&str> {
        self.admin_token.as_deref()
    }

    async fn call<T: DeserializeOwned>(&self, request: RequestBuilder) -> Result<(StatusCode, T)> {
        let response = request.send().await?;
        let status = response.status();
        let bytes = response.bytes().await?;
        if !status.is_success() {
            return Err(failure(status, &bytes));
        }
        let body = if bytes.is_empty() {
            &b"null"[..]
        } else {
            &bytes[..]
        };
        serde_json::from_slice(body)
            .map(|value| (status, value))
            .map_err(|_| unexpected(status, &bytes))
    }

    /// The body of an answer that is not JSON (a PDF), or its problem.
    async fn bytes(&self, request: RequestBuilder) -> Result<Vec<u8>> {
        let response = request.send().await?;
        let status = response.status();
        let bytes = response.bytes().await?;
        if status.is_success() {
            Ok(bytes.to_vec())
        } else {
            Err(failure(status, &bytes))
        }
    }

    async fn send<B: Serialize, T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<&B>,
    ) -> Result<T> {
        let mut request = self.request(method, path, token);
        if let Some(body) = body {
            request = request.json(body);
        }
        Ok(self.call(request).await?.1)
    }

    async fn get<T: DeserializeOwned>(&self, path: &str, token: Option<&str>) -> Result<T> {
        self.send::<(), T>(Method::GET, path, token, None).await
    }

    // Operations.

    /// `GET /healthz`.
    pub async fn health(&self) -> Result<Health> {
        self.get("/healthz", None).await
    }

    // Sessions.

    /// `POST /v1/sessions`: a new anonymous buyer and its token.
    pub async fn create_session(&self) -> Result<SessionCreated> {
        self.send::<(), _>(Method::POST, "/v1/sessions", None, None)
            .await
    }

    // Venues and events (admin writes, public reads).

    /// `POST /v1/venues` (admin).
    pub async fn create_venue(&self, venue: &VenueSpec) -> Result<VenueCreated> {
        self.send(Method::POST, "/v1/venues", self.admin_token(), Some(venue))
            .await
    }

    /// `GET /v1/venues` (admin).
    pub async fn list_venues(&self) -> Result<VenueList> {
        self.get("/v1/venues", self.admin_token()).await
    }

    /// `GET /v1/venues/{id}`.
    pub async fn get_venue(&self, venue: VenueId) -> Result<VenueView> {
        self.get(&format!("/v1/venues/{venue}"), None).await
    }

    // Organizations and keys.

    /// `POST /v1/organizations` (a platform key).
    pub async fn create_organization(&self, body: &OrganizationBody) -> Result<OrganizationView> {
        self.send(
            Method::POST,
            "/v1/organizations",
            self.admin_token(),
            Some(body),
        )
        .await
    }

    /// `GET /v1/organizations`: a platform key's, every one; any other key's, its own.
    pub async fn list_organizations(&self) -> Result<OrganizationList> {
        self.get("/v1/organizations", self.admin_token()).await
    }

    /// `GET /v1/organizations/{id}`, by id or slug.
    pub async fn get_organization(&self, organization: &str) -> Result<OrganizationView> {
        self.get(
            &format!("/v1/organizations/{organization}"),
            self.admin_token(),
        )
        .await
    }

    /// `POST /v1/organizations/{id}/keys`: the answer holds the key, shown this once.
    pub async fn create_key(&self, organization: &str, body: &KeyBody) -> Result<KeyCreated> {
        let path = format!("/v1/organizations/{organization}/keys");
        self.send(Method::POST, &path, self.admin_token(), Some(body))
            .await
    }

    /// `GET /v1/organizations/{id}/keys`.
    pub async fn list_keys(&self, organization: &str) -> Result<KeyList> {
        let path = format!("/v1/organizations/{organization}/keys");
        self.get(&path, self.admin_token()).await
    }

    /// `DELETE /v1/organizations/{id}/keys/{key_id}`.
    pub async fn revoke_key(&self, organization: &str, key: KeyId) -> Result<()> {
        let path = format!("/v1/organizations/{organization}/keys/{key}");
        self.send::<(), ()>(Method::DELETE, &path, self.admin_token(), None)
            .await
    }

    /// `POST /v1/organizations/{id}/signing-keys`: an HS256 key's secret is in the answer,
    /// shown this once.
    pub async fn create_signing_key(
        &self,
        organization: &str,
        body: &SigningKeyBody,
    ) -> Result<SigningKeyCreated> {
        let path = format!("/v1/organizations/{organization}/signing-keys");
        self.send(Method::POST, &path, self.admin_token(), Some(body))
            .await
    }

    /// `GET /v1/organizations/{id}/signing-keys`.
    pub async fn list_signing_keys(&self, organization: &str) -> Result<SigningKeyList> {
        let path = format!("/v1/organizations/{organization}/signing-keys");
        self.get(&path, self.admin_token()).await
    }

    /// `DELETE /v1/organizations/{id}/signing-keys/{kid}`.
    pub async fn retire_signing_key(&self, organization: &str, kid: &str) -> Result<()> {
        let path = format!("/v1/organizations/{organization}/signing-keys/{kid}");
        self.send::<(), ()>(Method::DELETE, &path, self.admin_token(), None)
            .await
    }

    /// `GET /v1/me`: the key this client calls with, and its rights.
    pub async fn me(&self) -> Result<MeView> {
        self.get("/v1/me", self.admin_token()).await
    }

    /// `PUT /v1/organizations/{id}/webhook`: the answer holds the secret, this once.
    pub async fn set_webhook(&self, organization: &str, body: &WebhookBody) -> Result<WebhookSet> {
        let path = format!("/v1/organizations/{organization}/webhook");
        self.send(Method::PUT, &path, self.admin_token(), Some(body))
            .await
    }

    /// `GET /v1/organizations/{id}/webhook`.
    pub async fn webhook(&self, organization: &str) -> Result<WebhookView> {
        let path = format!("/v1/organizations/{organization}/webhook");
        self.get(&path, self.admin_token()).await
    }

    /// `DELETE /v1/organizations/{id}/webhook`.
    pub async fn delete_webhook(&self, organization: &str) -> Result<()> {
        let path = format!("/v1/organizations/{organization}/webhook");
        self.send::<(), ()>(Method::DELETE, &path, self.admin_token(), None)
            .await
    }

    /// `GET /v1/organizations/{id}/audit` with `query` (`?action=…&limit=…`, or empty).
    pub async fn audit(&self, organization: &str, query: &str) -> Result<AuditList> {
        let path = format!("/v1/organizations/{organization}/audit{query}");
        self.get(&path, self.admin_token()).await
    }

    /// `POST /v1/events` (admin).
    pub async fn create_event(&self, event: &EventSpec) -> Result<EventCreated> {
        self.send(Method::POST, "/v1/events", self.admin_token(), Some(event))
            .await
    }

    /// `GET /v1/events`.
    pub async fn list_events(&self) -> Result<EventList> {
        self.get("/v1/events", None).await
    }

    /// `GET /v1/events/{id}`.
    pub async fn get_event(&self, event: EventId) -> Result<EventView> {
        self.get(&format!("/v1/events/{event}"), None).await
    }

    /// `PUT /v1/events/{id}/allocations` (admin).
    pub async fn put_allocations(
        &self,
        event: EventId,
        allocations: &AllocationsRequest,
    ) -> Result<AllocationsChanged> {
        let path = format!("/v1/events/{event}/allocations");
        self.send(Method::PUT, &path, self.admin_token(), Some(allocations))
            .await
    }

    /// `POST /v1/events/{id}/allocations/withdraw` (admin).
    pub async fn withdraw(
        &self,
        event: EventId,
        seats: &WithdrawSpec,
    ) -> Result<AllocationsChanged> {
        let path = format!("/v1/events/{event}/allocations/withdraw");
        self.send(Method::POST, &path, self.admin_token(), Some(seats))
            .await
    }

    /// `POST /v1/events/{id}/channels/{code}/release` (admin): the channel's free seats
    /// go on general sale.
    pub async fn release_channel(&self, event: EventId, code: &str) -> Result<ChannelReleased> {
        let path = format!("/v1/events/{event}/channels/{code}/release");
        self.send::<(), _>(Method::POST, &path, self.admin_token(), None)
            .await
    }

    // Availability.

    /// `GET /v1/events/{id}/seats`.
    pub async fn seats(&self, event: EventId) -> Result<SeatsView> {
        self.get(
            &format!("/v1/events/{event}/seats"),
            self.reader_token.as_deref(),
        )
        .await
    }

    /// `GET /v1/events/{id}/layout`: every seat without its status.
    pub async fn layout(&self, event: EventId) -> Result<LayoutView> {
        self.get(
            &format!("/v1/events/{event}/layout"),
            self.reader_token.as_deref(),
        )
        .await
    }

    /// `GET /v1/events/{id}/stream`: a snapshot of the seats, then their changes as they
    /// happen, until the server ends the stream or the caller drops it.
    pub async fn stream(
        &self,
        event: EventId,
    ) -> Result<impl futures::Stream<Item = Result<live::LiveEvent>> + Send + Unpin> {
        self.stream_with(event, live::Snapshot::Full).await
    }

    /// [`Client::stream`] with snapshots of the kind asked for.
    pub async fn stream_with(
        &self,
        event: EventId,
        snapshot: live::Snapshot,
    ) -> Result<impl futures::Stream<Item = Result<live::LiveEvent>> + Send + Unpin> {
        let path = format!("/v1/events/{event}/stream?snapshot={}", snapshot.query());
        let response = self
            .request(Method::GET, &path, self.reader_token.as_deref())
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .send()
            .await?;
        let status = response.status();
        if !status.is_success() {
            let bytes = response.bytes().await?;
            return Err(match serde_json::from_slice::<Problem>(&bytes) {
                Ok(problem) => Error::Problem(Box::new(problem)),
                Err(_) => unexpected(status, &bytes),
            });
        }
        Ok(live::events(response))
    }

    /// `GET /v1/events/{id}/availability`.
    pub async fn availability(&self, event: EventId) -> Result<AvailabilityView> {
        self.get(
            &format!("/v1/events/{event}/availability"),
            self.reader_token.as_deref(),
        )
        .await
    }

    // Holds (buyer).

    /// `POST /v1/events/{id}/holds`.
    pub async fn hold(&self, event: EventId, buyer: &str, body: &HoldBody) -> Result<HoldView> {
        self.hold_with_pass(event, buyer, None, body).await
    }

    /// `POST /v1/events/{id}/holds` showing the waiting room's `pass` (`Boxoffice-Pass`),
    /// which the event needs while its queue is on.
    pub async fn hold_with_pass(
        &self,
        event: EventId,
        buyer: &str,
        pass: Option<&str>,
        body: &HoldBody,
    ) -> Result<HoldView> {
        let path = format!("/v1/events/{event}/holds");
        let request = with_pass(self.request(Method::POST, &path, Some(buyer)), pass).json(body);
        Ok(self.call(request).await?.1)
    }

    /// `POST /v1/events/{id}/holds` for these seats, all or none.
    pub async fn hold_seats(
        &self,
        event: EventId,
        buyer: &str,
        seats: &[&str],
    ) -> Result<HoldView> {
        let body = HoldBody {
            seats: Some(seats.iter().map(|s| (*s).to_owned()).collect()),
            best_available: None,
        };
        self.hold(event, buyer, &body).await
    }

    /// `POST /v1/seasons` (admin).
    pub async fn create_season(&self, season: &SeasonSpec) -> Result<SeasonCreated> {
        self.send(
            Method::POST,
            "/v1/seasons",
            self.admin_token(),
            Some(season),
        )
        .await
    }

    /// `POST /v1/seasons/{id}/holds` for these seats (in every event the season covers).
    pub async fn hold_season_seats(
        &self,
        season: SeasonId,
        buyer: &str,
        seats: &[&str],
    ) -> Result<SeasonHoldView> {
        let body = SeasonHoldBody {
            seats: Some(seats.iter().map(|s| (*s).to_owned()).collect()),
            best_available: None,
            partial: None,
        };
        self.send(
            Method::POST,
            &format!("/v1/seasons/{season}/holds"),
            Some(buyer),
            Some(&body),
        )
        .await
    }

    /// `POST /v1/events/{id}/holds` asking the server for the best `quantity` seats (of
    /// `ticket_type`, or of any type); the answer's `adjacent` says whether they are side
    /// by side.
    pub async fn hold_best_available(
        &self,
        event: EventId,
        buyer: &str,
        quantity: u32,
        ticket_type: Option<&str>,
    ) -> Result<HoldView> {
        let body = HoldBody {
            seats: None,
            best_available: Some(BestAvailable {
                quantity,
                ticket_type: ticket_type.map(str::to_owned),
                accessible: false,
            }),
        };
        self.hold(event, buyer, &body).await
    }

    /// `POST /v1/events/{id}/holds` asking for a wheelchair space and `quantity - 1` seats
    /// beside it (companion seats first, as the venue places them).
    pub async fn hold_accessible(
        &self,
        event: EventId,
        buyer: &str,
        quantity: u32,
    ) -> Result<HoldView> {
        let body = HoldBody {
            seats: None,
            best_available: Some(BestAvailable {
                quantity,
                ticket_type: None,
                accessible: true,
            }),
        };
        self.hold(event, buyer, &body).await
    }

    /// `GET /v1/events/{id}/holds/{token}`.
    pub async fn get_hold(&self, event: EventId, buyer: &str, token: Uuid) -> Result<HoldView> {
        self.get(&format!("/v1/events/{event}/holds/{token}"), Some(buyer))
            .await
    }

    /// `POST /v1/events/{id}/holds/{token}/extend`.
    pub async fn extend_hold(&self, event: EventId, buyer: &str, token: Uuid) -> Result<Extended> {
        let path = format!("/v1/events/{event}/holds/{token}/extend");
        self.send::<(), _>(Method::POST, &path, Some(buyer), None)
            .await
    }

    /// `POST /v1/events/{id}/holds/{token}/seats`: adds seats to a live hold, all or none.
    pub async fn add_seats(
        &self,
        event: EventId,
        buyer: &str,
        token: Uuid,
        seats: &[&str],
    ) -> Result<HoldView> {
        let path = format!("/v1/events/{event}/holds/{token}/seats");
        let body = AddSeatsBody {
            seats: seats.iter().map(|s| (*s).to_owned()).collect(),
        };
        self.send(Method::POST, &path, Some(buyer), Some(&body))
            .await
    }

    /// `DELETE /v1/events/{id}/holds/{token}/seats/{seat}`: takes one seat out of a live
    /// hold; `None` when it was the last, and the hold is gone.
    pub async fn drop_seat(
        &self,
        event: EventId,
        buyer: &str,
        token: Uuid,
        seat: &str,
    ) -> Result<Option<HoldView>> {
        let path = format!("/v1/events/{event}/holds/{token}/seats/{seat}");
        self.send::<(), Option<HoldView>>(Method::DELETE, &path, Some(buyer), None)
            .await
    }

    /// `DELETE /v1/events/{id}/holds/{token}`.
    pub async fn release_hold(&self, event: EventId, buyer: &str, token: Uuid) -> Result<()> {
        let path = format!("/v1/events/{event}/holds/{token}");
        self.send::<(), ()>(Method::DELETE, &path, Some(buyer), None)
            .await
    }

    // Orders.

    /// `POST /v1/events/{id}/orders`: checks out a live hold.
    pub async fn checkout(&self, event: EventId, buyer: &str, hold_token: Uuid) -> Result<Ordered> {
        let request = self
            .request(
                Method::POST,
                &format!("/v1/events/{event}/orders"),
                Some(buyer),
            )
            .json(&CheckoutBody { hold_token });
        let (status, order) = self.call(request).await?;
        Ok(Ordered {
            order,
            created: status == StatusCode::CREATED,
        })
    }

    /// `GET /v1/orders/{id}` as `who` (the buyer's token, or the admin token).
    pub async fn get_order(&self, order: Uuid, who: &str) -> Result<OrderView> {
        self.get(&format!("/v1/orders/{order}"), Some(who)).await
    }

    /// `POST /v1/orders/{id}/payment` (admin): records the payment of a pending order.
    pub async fn pay_order(
        &self,
        order: Uuid,
        reference: &str,
        amount_cents: i64,
    ) -> Result<OrderView> {
        let body = PaymentBody {
            reference: reference.to_owned(),
            amount_cents,
        };
        let path = format!("/v1/orders/{order}/payment");
        self.send(Method::POST, &path, self.admin_token(), Some(&body))
            .await
    }

    /// `POST /v1/orders/{id}/cancel` as `who`.
    pub async fn cancel_order(&self, order: Uuid, who: &str) -> Result<OrderView> {
        let path = format!("/v1/orders/{order}/cancel");
        self.send::<(), _>(Method::POST, &path, Some(who), None)
            .await
    }

    // General admission.

    /// `POST /v1/events/{id}/bookings`, with an `Idempotency-Key` if given.
    pub async fn book(
        &self,
        event: EventId,
        buyer: &str,
        body: &BookingBody,
        idempotency_key: Option<&str>,
    ) -> Result<BookingView> {
        self.book_with_pass(event, buyer, None, body, idempotency_key)
            .await
    }

    /// `POST /v1/events/{id}/bookings` showing the waiting room's `pass`
    /// (`Boxoffice-Pass`), with an `Idempotency-Key` if given.
    pub async fn book_with_pass(
        &self,
        event: EventId,
        buyer: &str,
        pass: Option<&str>,
        body: &BookingBody,
        idempotency_key: Option<&str>,
    ) -> Result<BookingView> {
        let path = format!("/v1/events/{event}/bookings");
        let mut request =
            with_pass(self.request(Method::POST, &path, Some(buyer)), pass).json(body);
        if let Some(key) = idempotency_key {
            request = request.header("idempotency-key", key);
        }
        Ok(self.call(request).await?.1)
    }

    /// `POST /v1/bookings/{id}/cancel` as `who`.
    pub async fn cancel_booking(&self, booking: Uuid, who: &str) -> Result<BookingView> {
        let path = format!("/v1/bookings/{booking}/cancel");
        self.send::<(), _>(Method::POST, &path, Some(who), None)
            .await
    }

    // Tickets and entry.

    /// `GET /v1/bookings/{id}/tickets` as `who`.
    pub async fn booking_tickets(&self, booking: Uuid, who: &str) -> Result<TicketList> {
        self.get(&format!("/v1/bookings/{booking}/tickets"), Some(who))
            .await
    }

    /// `GET /v1/bookings/{id}/tickets.pdf` as `who`: the PDF.
    pub async fn booking_pdf(&self, booking: Uuid, who: &str) -> Result<Vec<u8>> {
        let path = format!("/v1/bookings/{booking}/tickets.pdf");
        self.bytes(self.request(Method::GET, &path, Some(who)))
            .await
    }

    /// `POST /v1/events/{id}/checkins` (a checkin key or above): one scan at the door.
    pub async fn check_in(&self, event: EventId, body: &CheckinBody) -> Result<CheckinView> {
        let path = format!("/v1/events/{event}/checkins");
        self.send(Method::POST, &path, self.admin_token(), Some(body))
            .await
    }

    /// `GET /v1/events/{id}/entry/revoked` (a checkin key or above): the event's revoked
    /// tickets, for scanners that work offline.
    pub async fn revoked(&self, event: EventId) -> Result<RevokedList> {
        self.get(
            &format!("/v1/events/{event}/entry/revoked"),
            self.admin_token(),
        )
        .await
    }

    // Waiting room.

    /// `PATCH /v1/events/{id}` (admin): the event's settings as changed.
    pub async fn patch_event(&self, event: EventId, patch: &EventPatch) -> Result<EventView> {
        let path = format!("/v1/events/{event}");
        self.send(Method::PATCH, &path, self.admin_token(), Some(patch))
            .await
    }

    /// `POST /v1/events/{id}/queue`: joins the event's waiting room (or finds the buyer's
    /// ticket).
    pub async fn join_queue(&self, event: EventId, buyer: &str) -> Result<QueueJoined> {
        let path = format!("/v1/events/{event}/queue");
        self.send::<(), _>(Method::POST, &path, Some(buyer), None)
            .await
    }

    /// `GET /v1/events/{id}/queue/{ticket}`: where the ticket stands, or the pass once
    /// admitted.
    pub async fn queue_status(
        &self,
        event: EventId,
        buyer: &str,
        ticket: &str,
    ) -> Result<QueueStatus> {
        self.get(&format!("/v1/events/{event}/queue/{ticket}"), Some(buyer))
            .await
    }

    /// `DELETE /v1/events/{id}/queue/{ticket}`: gives the ticket's place up.
    pub async fn leave_queue(&self, event: EventId, buyer: &str, ticket: &str) -> Result<()> {
        let path = format!("/v1/events/{event}/queue/{ticket}");
        self.send::<(), ()>(Method::DELETE, &path, Some(buyer), None)
            .await
    }

    /// `GET /v1/events/{id}/queue/status` (public): the line's figures.
    pub async fn line_status(&self, event: EventId) -> Result<QueueLine> {
        self.get(&format!("/v1/events/{event}/queue/status"), None)
            .await
    }

    // Waiting list (buyer).

    /// `POST /v1/events/{id}/waitlist`: joins the event's waiting list for `quantity`
    /// seats (of `ticket_type`, if given), or finds the buyer's entry.
    pub async fn join_waitlist(
        &self,
        event: EventId,
        buyer: &str,
        quantity: u32,
        ticket_type: Option<&str>,
    ) -> Result<WaitlistEntryView> {
        let path = format!("/v1/events/{event}/waitlist");
        let body = WaitlistJoin {
            quantity,
            ticket_type: ticket_type.map(str::to_owned),
        };
        self.send(Method::POST, &path, Some(buyer), Some(&body))
            .await
    }

    /// `GET /v1/events/{id}/waitlist/{entry}`: the entry's place in line, or its offer.
    pub async fn waitlist_entry(
        &self,
        event: EventId,
        buyer: &str,
        entry: Uuid,
    ) -> Result<WaitlistEntryView> {
        self.get(&format!("/v1/events/{event}/waitlist/{entry}"), Some(buyer))
            .await
    }

    /// `DELETE /v1/events/{id}/waitlist/{entry}`: leaves the waiting list.
    pub async fn leave_waitlist(&self, event: EventId, buyer: &str, entry: Uuid) -> Result<()> {
        let path = format!("/v1/events/{event}/waitlist/{entry}");
        self.send::<(), ()>(Method::DELETE, &path, Some(buyer), None)
            .await
    }
}

/// The request with the waiting room's pass, if there is one.
fn with_pass(request: RequestBuilder, pass: Option<&str>) -> RequestBuilder {
    match pass {
        Some(pass) => request.header("boxoffice-pass", pass),
        None => request,
    }
}

/// The error of an answer that is not a success: its problem, or what came instead.
fn failure(status: StatusCode, body: &[u8]) -> Error {
    match serde_json::from_slice::<Problem>(body) {
        Ok(problem) => Error::Problem(Box::new(problem)),
        Err(_) => unexpected(status, body),
    }
}

fn unexpected(status: StatusCode, body: &[u8]) -> Error {
    Error::Unexpected {
        status,
        body: String::from_utf8_lossy(body).chars().take(500).collect(),
    }
}

/// A user token for `user` (the `sub` claim) until `expires_at`, signed with the server's
/// JWT secret (HS256), as a ticketing platform mints them for its logged-in buyers.
///
/// # Panics
///
/// If `secret` is empty, which no server accepts as its JWT secret.
pub fn mint_user_token(secret: &str, user: &str, expires_at: DateTime<Utc>) -> String {
    mint_channel_token(secret, user, None, expires_at)
}

/// [`mint_user_token`] for a buyer in a sales channel (`channel`, the claim of the same
/// name): the buyers of a partner who sells an event's channel seats.
///
/// # Panics
///
/// If `secret` is empty, which no server accepts as its JWT secret.
pub fn mint_channel_token(
    secret: &str,
    user: &str,
    channel: Option<&str>,
    expires_at: DateTime<Utc>,
) -> String {
    #[derive(Serialize)]
    struct Claims<'a> {
        sub: &'a str,
        exp: i64,
        #[serde(skip_serializing_if = "Option::is_none")]
        channel: Option<&'a str>,
    }
    jsonwebtoken::encode(
        &jsonwebtoken::Header::default(),
        &Claims {
            sub: user,
            exp: expires_at.timestamp(),
            channel,
        },
        &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes())
            .expect("a JWT secret is not empty"),
    )
    .expect("HS256 signs any claims")
}

/// The place a waiting-room ticket carries (1 = first), if it has one yet (a ticket issued
/// before the opening has none until re-issued). Read without checking the signature,
/// which only the server can: for load generators and tests that follow a line. The
/// ticket's layout is the server's (`boxoffice_service::queue::ticket`): a version byte,
/// the event and ticket ids, the join number, then the place, big-endian.
pub fn ticket_place(ticket: &str) -> Option<u64> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(ticket)
        .ok()?;
    let place = u64::from_be_bytes(bytes.get(41..49)?.try_into().ok()?);
    (place > 0).then_some(place)
}

/// A buyer's token signed with one of an organization's signing keys, named in its header
/// (`kid`), as a platform mints it: with the HS256 secret the key was made with
/// (`EncodingKey::from_secret(secret.as_bytes())`), or with the platform's Ed25519 private
/// key for an EdDSA key (`EncodingKey::from_ed_pem`). Valid for that organization's events,
/// seasons, orders and waiting rooms.
pub fn mint_signed_token(
    key: &jsonwebtoken::EncodingKey,
    algorithm: jsonwebtoken::Algorithm,
    kid: &str,
    user: &str,
    expires_at: DateTime<Utc>,
) -> String {
    #[derive(Serialize)]
    struct Claims<'a> {
        sub: &'a str,
        exp: i64,
    }
    let mut header = jsonwebtoken::Header::new(algorithm);
    header.kid = Some(kid.to_owned());
    jsonwebtoken::encode(
        &header,
        &Claims {
            sub: user,
            exp: expires_at.timestamp(),
        },
        key,
    )
    .expect("signing with a key in memory")
}
