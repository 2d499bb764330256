//! Seats a hold lets go of (a release, a seat taken out of a basket): what they read now,
//! for the live streams. Most are free again; a seat its buyer lists for resale reads
//! `resale` again.

use boxoffice_core::availability::SeatStatus;

use crate::live::Change;
use crate::Services;

/// What `seats`, let go by a hold, read now: `available`, or `resale` for those listed.
/// Should Postgres not answer, they read available (a page that reloads sees them listed).
pub(crate) async fn change<'a>(
    state: &Services,
    event: boxoffice_core::ids::EventId,
    seats: impl IntoIterator<Item = &'a str>,
) -> Change {
    let seats: Vec<&str> = seats.into_iter().collect();
    let listed = boxoffice_store::sales::resale::listed_among(&state.pool, event, &seats)
        .await
        .unwrap_or_else(|error| {
            tracing::warn!(%event, %error, "could not read which freed seats are listed");
            Vec::new()
        });
    Change::Seats(
        seats
            .into_iter()
            .map(|id| boxoffice_api::SeatChange {
                id: id.to_owned(),
                status: if listed.iter().any(|l| l == id) {
                    SeatStatus::Resale
                } else {
                    SeatStatus::Available
                },
                held_until: None,
            })
            .collect(),
    )
}
