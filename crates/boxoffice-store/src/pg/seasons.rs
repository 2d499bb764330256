//! Seasons (migration 0019): the season records, their events, ticket types, allocations
//! and partial seasons.

use std::collections::{BTreeMap, HashMap};

use boxoffice_core::event::TicketType;
use boxoffice_core::ids::{EventId, OrganizationId, SeasonId};
use boxoffice_core::season::{NewSeason, PartialSeason, Season, SeasonEvent};
use sqlx::PgPool;
use uuid::Uuid;

use crate::error::Constraint;
use crate::journal::audit::{self, Action, Actor, Change};
use crate::pg::events::{insert_ticket_types, TicketTypesOf};
use crate::StoreError;

/// A partial season as read: code, name, events, and its prices by ticket type.
type PartialRow = (String, String, Vec<Uuid>, Vec<String>, Vec<i64>);

/// What a season needs to know of the events `ids` that exist in `organization` (another
/// organization's are as missing): their venue and the season each is in already.
pub async fn season_events(
    pool: &PgPool,
    organization: OrganizationId,
    ids: &[EventId],
) -> Result<HashMap<EventId, SeasonEvent>, StoreError> {
    let ids: Vec<Uuid> = ids.iter().map(|id| id.0).collect();
    let rows: Vec<(Uuid, Uuid, Option<Uuid>)> = sqlx::query_as(
        "select e.event_id, e.venue_id, se.season_id
           from event e left join season_event se on se.event_id = e.event_id
          where e.event_id = any($1) and e.organization_id = $2",
    )
    .bind(&ids)
    .bind(organization.0)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(event, venue, season)| {
            let facts = SeasonEvent {
                venue_id: venue.into(),
                season: season.map(SeasonId),
            };
            (event.into(), facts)
        })
        .collect())
}

/// Writes the season in one transaction. `Conflict` on `season_event_one_season` when an
/// event was put in another season meanwhile.
pub async fn insert_season(
    pool: &PgPool,
    id: SeasonId,
    organization: OrganizationId,
    season: &NewSeason,
    actor: Option<&Actor>,
) -> Result<(), StoreError> {
    let mut tx = pool.begin().await?;
    crate::pg::db::allow_bulk_write(&mut tx).await?;
    sqlx::query(
        "insert into season (season_id, venue_id, name, organization_id) values ($1, $2, $3, $4)",
    )
    .bind(id.0)
    .bind(season.venue_id.0)
    .bind(&season.name)
    .bind(organization.0)
    .execute(&mut *tx)
    .await?;
    let events: Vec<Uuid> = season.event_ids.iter().map(|e| e.0).collect();
    sqlx::query(
        "insert into season_event (season_id, event_id, position)
         select $1, e, ord - 1 from unnest($2::uuid[]) with ordinality as x (e, ord)",
    )
    .bind(id.0)
    .bind(&events)
    .execute(&mut *tx)
    .await?;
    let types = &season.ticket_types;
    insert_ticket_types(&mut tx, TicketTypesOf::Season, id.0, types).await?;
    let a = &season.allocations;
    sqlx::query(
        "insert into season_allocation (season_id, seat_id, ticket_type)
         select $1, seat, ticket_type from unnest($2::text[], $3::text[]) as a (seat, ticket_type)",
    )
    .bind(id.0)
    .bind(a.iter().map(|a| a.seat.as_str()).collect::<Vec<_>>())
    .bind(a.iter().map(|a| a.ticket_type.as_str()).collect::<Vec<_>>())
    .execute(&mut *tx)
    .await?;
    for (position, partial) in season.partials.iter().enumerate() {
        sqlx::query(
            "insert into season_partial (season_id, code, name, position) values ($1, $2, $3, $4)",
        )
        .bind(id.0)
        .bind(&partial.code)
        .bind(&partial.name)
        .bind(position as i32)
        .execute(&mut *tx)
        .await?;
        let events: Vec<Uuid> = partial.event_ids.iter().map(|e| e.0).collect();
        sqlx::query(
            "insert into season_partial_event (season_id, code, event_id, position)
             select $1, $2, e, ord - 1 from unnest($3::uuid[]) with ordinality as x (e, ord)",
        )
        .bind(id.0)
        .bind(&partial.code)
        .bind(&events)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "insert into season_partial_price (season_id, code, ticket_type, price_cents)
             select $1, $2, t, p from unnest($3::text[], $4::int8[]) as x (t, p)",
        )
        .bind(id.0)
        .bind(&partial.code)
        .bind(
            partial
                .prices
                .keys()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        )
        .bind(partial.prices.values().copied().collect::<Vec<_>>())
        .execute(&mut *tx)
        .await?;
    }
    if let Some(actor) = actor {
        let change = Change {
            action: Action::SeasonCreated,
            target_id: id.to_string(),
            changes: serde_json::json!({
                "name": season.name,
                "venue_id": season.venue_id,
                "event_ids": season.event_ids,
                "ticket_types": season.ticket_types,
                "partials": season.partials.iter().map(|p| &p.code).collect::<Vec<_>>(),
            }),
        };
        audit::write(&mut tx, actor, &change).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Whether `error` is an event put in another season meanwhile.
pub fn is_event_in_another_season(error: &StoreError) -> bool {
    matches!(error, StoreError::Conflict { constraint }
        if *constraint == Constraint::Other("season_event_one_season".into()))
}

/// Every season, newest first; with `organization`, that organization's only.
pub async fn list_seasons(
    pool: &PgPool,
    organization: Option<OrganizationId>,
) -> Result<Vec<Season>, StoreError> {
    let ids: Vec<Uuid> = sqlx::query_scalar(
        "select season_id from season
          where $1::uuid is null or organization_id = $1
          order by created_at desc, season_id",
    )
    .bind(organization.map(|o| o.0))
    .fetch_all(pool)
    .await?;
    let mut seasons = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(season) = get_season(pool, SeasonId(id)).await? {
            seasons.push(season);
        }
    }
    Ok(seasons)
}

/// The season `id`, if there is one.
pub async fn get_season(pool: &PgPool, id: SeasonId) -> Result<Option<Season>, StoreError> {
    let Some((name, venue)) = sqlx::query_as::<_, (String, Uuid)>(
        "select name, venue_id from season where season_id = $1",
    )
    .bind(id.0)
    .fetch_optional(pool)
    .await?
    else {
        return Ok(None);
    };
    let event_ids: Vec<Uuid> = sqlx::query_scalar(
        "select event_id from season_event where season_id = $1 order by position",
    )
    .bind(id.0)
    .fetch_all(pool)
    .await?;
    let ticket_types: Vec<(String, String, i64, String)> = sqlx::query_as(
        "select code, name, price_cents, currency::text from season_ticket_type
          where season_id = $1 order by position",
    )
    .bind(id.0)
    .fetch_all(pool)
    .await?;
    let partials: Vec<PartialRow> = sqlx::query_as(
        "select p.code, p.name,
                array(select e.event_id from season_partial_event e
                       where e.season_id = p.season_id and e.code = p.code order by e.position),
                array(select x.ticket_type from season_partial_price x
                       where x.season_id = p.season_id and x.code = p.code order by x.ticket_type),
                array(select x.price_cents from season_partial_price x
                       where x.season_id = p.season_id and x.code = p.code order by x.ticket_type)
           from season_partial p where p.season_id = $1 order by p.position",
    )
    .bind(id.0)
    .fetch_all(pool)
    .await?;
    Ok(Some(Season {
        id,
        name,
        venue_id: venue.into(),
        event_ids: event_ids.into_iter().map(EventId).collect(),
        ticket_types: ticket_types
            .into_iter()
            .map(|(code, name, price_cents, currency)| TicketType {
                code,
                name,
                price_cents,
                currency,
            })
            .collect(),
        partials: partials
            .into_iter()
            .map(|(code, name, events, types, prices)| PartialSeason {
                code,
                name,
                event_ids: events.into_iter().map(EventId).collect(),
                prices: types.into_iter().zip(prices).collect::<BTreeMap<_, _>>(),
            })
            .collect(),
    }))
}

/// The seats the season sells and the ticket type of each.
pub async fn season_allocations(
    pool: &PgPool,
    id: SeasonId,
) -> Result<HashMap<String, String>, StoreError> {
    let rows: Vec<(String, String)> =
        sqlx::query_as("select seat_id, ticket_type from season_allocation where season_id = $1")
            .bind(id.0)
            .fetch_all(pool)
            .await?;
    Ok(rows.into_iter().collect())
}
