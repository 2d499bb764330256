//! Venues as an organizer keeps them: stored once with every seat, read back whole, listed.

use boxoffice_core::ids::{OrganizationId, VenueId};
use boxoffice_core::venue::VenueLayout;
use boxoffice_store::error::Constraint;
use boxoffice_store::journal::audit::Actor;
use boxoffice_store::pg::venues;
use boxoffice_store::StoreError;

use crate::{Error, Services};

/// Stores `layout` as a new venue of `organization`; answers its id.
pub async fn create(
    state: &Services,
    organization: OrganizationId,
    layout: &VenueLayout,
    actor: &Actor,
) -> Result<VenueId, Error> {
    let id = VenueId::new();
    venues::insert_venue(&state.pool, id, organization, layout, Some(actor)).await?;
    Ok(id)
}

/// Stores `layout` as the venue `id` of the `default` organization unless it exists; whether it was stored now (`false`
/// when it was there before, or another server stored it first).
pub async fn ensure(state: &Services, id: VenueId, layout: &VenueLayout) -> Result<bool, Error> {
    if venues::get_venue(&state.pool, id).await?.is_some() {
        return Ok(false);
    }
    Ok(inserted(
        venues::insert_venue(&state.pool, id, OrganizationId::DEFAULT, layout, None).await,
    )?)
}

/// Replaces venue `id` with `layout` (name, seats, shapes, focal point), unless an event
/// or a season uses it: a sale's seats never move under it.
pub async fn replace(
    state: &Services,
    id: VenueId,
    layout: &VenueLayout,
    actor: &Actor,
) -> Result<(), Error> {
    match venues::replace_venue(&state.pool, id, layout, actor).await? {
        venues::Replaced::Done => Ok(()),
        venues::Replaced::NotFound => Err(Error::VenueNotFound),
        venues::Replaced::InUse => Err(Error::VenueInUse),
    }
}

/// The venue `id`, if there is one.
pub async fn get(state: &Services, id: VenueId) -> Result<Option<VenueLayout>, Error> {
    Ok(venues::get_venue(&state.pool, id).await?)
}

/// Every venue, newest first: its id, name and seat count; of one organization, or of all.
pub async fn list(
    state: &Services,
    organization: Option<OrganizationId>,
) -> Result<Vec<(VenueId, String, usize)>, Error> {
    Ok(venues::list_venues(&state.pool, organization).await?)
}

/// `Ok(true)` if an insert with a fixed id happened, `Ok(false)` if another server
/// inserted that row first.
pub(crate) fn inserted(result: Result<(), StoreError>) -> Result<bool, StoreError> {
    match result {
        Ok(()) => Ok(true),
        Err(StoreError::Conflict {
            constraint: Constraint::PrimaryKey(_),
        }) => Ok(false),
        Err(e) => Err(e),
    }
}
