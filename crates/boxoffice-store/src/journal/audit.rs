//! The audit log: who changed what with a key, written by the store function that makes the
//! change, in its transaction ([`write`]), and read back newest first with filters
//! ([`list`]). Postgres refuses to update, delete or truncate an entry (migration 0024).

use boxoffice_core::access::Role;
use boxoffice_core::ids::{KeyId, OrganizationId, UserId};
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::{PgConnection, PgPool};

use crate::StoreError;

/// Who made a change: a key, or `BOXOFFICE_ADMIN_TOKEN` (no key id).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Actor {
    /// The key's id; none for `BOXOFFICE_ADMIN_TOKEN`.
    pub key_id: Option<KeyId>,
    /// The key's name.
    pub key_name: String,
    /// The key's role.
    pub role: Role,
    /// The request the change was made in (`X-Request-Id`).
    pub request_id: Option<String>,
}

/// What a change made with a key did, `<type>.<verb>`: the words of the log, each with the
/// type of its target (docs/access.md's table, which a test keeps in step with this).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// `organization.created`: an organization made.
    OrganizationCreated,
    /// `key.created`: a key made.
    KeyCreated,
    /// `key.revoked`: a key revoked.
    KeyRevoked,
    /// `signing_key.created`: a buyer-token signing key added.
    SigningKeyCreated,
    /// `signing_key.retired`: a signing key retired.
    SigningKeyRetired,
    /// `entry_key.created`: an entry key (the door's) made.
    EntryKeyCreated,
    /// `webhook.created`: the webhook set.
    WebhookCreated,
    /// `webhook.updated`: the webhook replaced.
    WebhookUpdated,
    /// `webhook.deleted`: the webhook removed.
    WebhookDeleted,
    /// `venue.created`: a venue made.
    VenueCreated,
    /// `venue.updated`: a venue replaced.
    VenueUpdated,
    /// `event.created`: an event made.
    EventCreated,
    /// `event.updated`: an event's settings changed.
    EventUpdated,
    /// `event.allocations_put`: seats put on sale.
    EventAllocationsPut,
    /// `event.allocations_withdrawn`: seats withdrawn from sale.
    EventAllocationsWithdrawn,
    /// `event.channel_released`: a channel's seats released to everyone.
    EventChannelReleased,
    /// `season.created`: a season made.
    SeasonCreated,
    /// `order.paid`: an order's payment recorded.
    OrderPaid,
    /// `order.cancelled`: an order cancelled (an event's or a season's).
    OrderCancelled,
    /// `order.changed`: an order's seats moved or swapped.
    OrderChanged,
    /// `order.listed`: an order's seat offered for resale.
    OrderListed,
    /// `order.unlisted`: a seat taken back from resale.
    OrderUnlisted,
    /// `order.night_released`: a season order's night released.
    OrderNightReleased,
    /// `order.night_reclaimed`: a released night taken back.
    OrderNightReclaimed,
    /// `booking.paid`: a booking's payment recorded.
    BookingPaid,
    /// `booking.cancelled`: a booking cancelled.
    BookingCancelled,
}

impl Action {
    /// Every action, in docs/access.md's order.
    pub const ALL: [Action; 26] = [
        Action::OrganizationCreated,
        Action::KeyCreated,
        Action::KeyRevoked,
        Action::SigningKeyCreated,
        Action::SigningKeyRetired,
        Action::EntryKeyCreated,
        Action::WebhookCreated,
        Action::WebhookUpdated,
        Action::WebhookDeleted,
        Action::VenueCreated,
        Action::VenueUpdated,
        Action::EventCreated,
        Action::EventUpdated,
        Action::EventAllocationsPut,
        Action::EventAllocationsWithdrawn,
        Action::EventChannelReleased,
        Action::SeasonCreated,
        Action::OrderPaid,
        Action::OrderCancelled,
        Action::OrderChanged,
        Action::OrderListed,
        Action::OrderUnlisted,
        Action::OrderNightReleased,
        Action::OrderNightReclaimed,
        Action::BookingPaid,
        Action::BookingCancelled,
    ];

    /// The action as the log writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::OrganizationCreated => "organization.created",
            Action::KeyCreated => "key.created",
            Action::KeyRevoked => "key.revoked",
            Action::SigningKeyCreated => "signing_key.created",
            Action::SigningKeyRetired => "signing_key.retired",
            Action::EntryKeyCreated => "entry_key.created",
            Action::WebhookCreated => "webhook.created",
            Action::WebhookUpdated => "webhook.updated",
            Action::WebhookDeleted => "webhook.deleted",
            Action::VenueCreated => "venue.created",
            Action::VenueUpdated => "venue.updated",
            Action::EventCreated => "event.created",
            Action::EventUpdated => "event.updated",
            Action::EventAllocationsPut => "event.allocations_put",
            Action::EventAllocationsWithdrawn => "event.allocations_withdrawn",
            Action::EventChannelReleased => "event.channel_released",
            Action::SeasonCreated => "season.created",
            Action::OrderPaid => "order.paid",
            Action::OrderCancelled => "order.cancelled",
            Action::OrderChanged => "order.changed",
            Action::OrderListed => "order.listed",
            Action::OrderUnlisted => "order.unlisted",
            Action::OrderNightReleased => "order.night_released",
            Action::OrderNightReclaimed => "order.night_reclaimed",
            Action::BookingPaid => "booking.paid",
            Action::BookingCancelled => "booking.cancelled",
        }
    }

    /// What it changes: `organization` (itself, its signing keys and entry keys), `key`,
    /// `webhook` (by its organization's id), `venue`, `event`, `season`, `order` or
    /// `booking`; the entry goes to that target's organization's log.
    pub fn target_type(self) -> &'static str {
        match self {
            Action::OrganizationCreated
            | Action::SigningKeyCreated
            | Action::SigningKeyRetired
            | Action::EntryKeyCreated => "organization",
            Action::KeyCreated | Action::KeyRevoked => "key",
            Action::WebhookCreated | Action::WebhookUpdated | Action::WebhookDeleted => "webhook",
            Action::VenueCreated | Action::VenueUpdated => "venue",
            Action::EventCreated
            | Action::EventUpdated
            | Action::EventAllocationsPut
            | Action::EventAllocationsWithdrawn
            | Action::EventChannelReleased => "event",
            Action::SeasonCreated => "season",
            Action::OrderPaid
            | Action::OrderCancelled
            | Action::OrderChanged
            | Action::OrderListed
            | Action::OrderUnlisted
            | Action::OrderNightReleased
            | Action::OrderNightReclaimed => "order",
            Action::BookingPaid | Action::BookingCancelled => "booking",
        }
    }
}

/// What a change is: its action (and so its target's type), its target, the fields it
/// changed. Which organization's log it goes to is the target's organization, read in the
/// change's transaction.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// What was done.
    pub action: Action,
    /// The target's id (an organization's for its webhook, signing and entry keys).
    pub target_id: String,
    /// For an update each changed field as `[before, after]`; for a creation the fields
    /// set. Never a secret.
    pub changes: Value,
}

/// Writes the entry of `change` by `actor`, on the connection (in the transaction) that
/// makes the change. The organization is the target's: a key's, an organization itself
/// (or its webhook), a venue's, an event's, a season's, an order's or a booking's.
pub async fn write(
    conn: &mut PgConnection,
    actor: &Actor,
    change: &Change,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "insert into audit_entry (entry_id, organization_id, actor_key_id, actor_key_name,
                                  actor_role, action, target_type, target_id, changes,
                                  request_id)
         select $1, owner, $2, $3, $4, $5, $6, $7, $8, $9
           from (select case $6
                   when 'organization' then (select organization_id from organization
                                               where organization_id = $7::uuid)
                   when 'webhook' then (select organization_id from organization
                                          where organization_id = $7::uuid)
                   when 'key' then (select organization_id from api_key where key_id = $7::uuid)
                   when 'venue' then (select organization_id from venue where venue_id = $7::uuid)
                   when 'event' then (select organization_id from event where event_id = $7::uuid)
                   when 'season' then (select organization_id from season
                                        where season_id = $7::uuid)
                   when 'order' then coalesce(
                       (select e.organization_id from ticket_order o join event e using (event_id)
                         where o.order_id = $7::uuid limit 1),
                       (select s.organization_id from season_order o join season s using (season_id)
                         where o.season_order_id = $7::uuid))
                   when 'booking' then (select e.organization_id
                                          from ga_booking b join event e using (event_id)
                                         where b.booking_id = $7::uuid limit 1)
                 end as owner) target",
    )
    .bind(uuid::Uuid::new_v4())
    .bind(actor.key_id.map(|k| k.0))
    .bind(&actor.key_name)
    .bind(actor.role.as_str())
    .bind(change.action.as_str())
    .bind(change.action.target_type())
    .bind(&change.target_id)
    .bind(&change.changes)
    .bind(&actor.request_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// An entry as read back.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// Where it stands in the log: the cursor.
    pub seq: i64,
    /// Its id.
    pub entry_id: uuid::Uuid,
    /// When the change was made (its transaction's time).
    pub at: DateTime<Utc>,
    /// The organization whose log it is in.
    pub organization_id: OrganizationId,
    /// The key's id; none for `BOXOFFICE_ADMIN_TOKEN`.
    pub actor_key_id: Option<KeyId>,
    /// The key's name.
    pub actor_key_name: String,
    /// The key's role.
    pub actor_role: String,
    /// `<type>.<verb>`.
    pub action: String,
    /// The target's type.
    pub target_type: String,
    /// The target's id.
    pub target_id: String,
    /// The fields changed.
    pub changes: Value,
    /// The request it was made in.
    pub request_id: Option<String>,
}

/// Which entries to read.
#[derive(Clone, Debug, Default)]
pub struct Filters {
    /// Only this action.
    pub action: Option<String>,
    /// Only entries about this target (its id).
    pub target: Option<String>,
    /// Only entries made with this key.
    pub actor: Option<KeyId>,
    /// Only entries at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only entries older than this cursor (the `seq` of the last entry of a page).
    pub before: Option<i64>,
}

type EntryRow = (
    i64,
    uuid::Uuid,
    DateTime<Utc>,
    uuid::Uuid,
    Option<uuid::Uuid>,
    String,
    String,
    String,
    String,
    String,
    Value,
    Option<String>,
);

/// An organization's entries, newest first, at most `limit`.
pub async fn list(
    pool: &PgPool,
    organization: OrganizationId,
    filters: &Filters,
    limit: u32,
) -> Result<Vec<Entry>, StoreError> {
    let rows: Vec<EntryRow> = sqlx::query_as(
        "select seq, entry_id, at, organization_id, actor_key_id, actor_key_name, actor_role,
                action, target_type, target_id, changes, request_id
           from audit_entry
          where organization_id = $1
            and ($2::text is null or action = $2)
            and ($3::text is null or target_id = $3)
            and ($4::uuid is null or actor_key_id = $4)
            and ($5::timestamptz is null or at >= $5)
            and ($6::bigint is null or seq < $6)
          order by seq desc
          limit $7",
    )
    .bind(organization.0)
    .bind(&filters.action)
    .bind(&filters.target)
    .bind(filters.actor.map(|k| k.0))
    .bind(filters.since)
    .bind(filters.before)
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(
            |(seq, entry_id, at, org, key, key_name, role, action, t_type, t_id, changes, req)| {
                Entry {
                    seq,
                    entry_id,
                    at,
                    organization_id: OrganizationId(org),
                    actor_key_id: key.map(KeyId),
                    actor_key_name: key_name,
                    actor_role: role,
                    action,
                    target_type: t_type,
                    target_id: t_id,
                    changes,
                    request_id: req,
                }
            },
        )
        .collect())
}

/// Who acts on an order or a booking: its buyer (who may act on their own only, and is not
/// in the log), or staff with a key (whose change is).
#[derive(Clone, Copy, Debug)]
pub enum By<'a> {
    /// The buyer of this user id.
    Buyer(&'a UserId),
    /// Staff.
    Staff(&'a Actor),
}

impl<'a> By<'a> {
    /// The buyer, if a buyer acts.
    pub fn buyer(self) -> Option<&'a UserId> {
        match self {
            By::Buyer(user) => Some(user),
            By::Staff(_) => None,
        }
    }

    /// Writes the change's entry in the change's transaction when staff make it.
    pub async fn record(self, conn: &mut PgConnection, change: &Change) -> Result<(), sqlx::Error> {
        match self {
            By::Buyer(_) => Ok(()),
            By::Staff(actor) => write(conn, actor, change).await,
        }
    }
}
