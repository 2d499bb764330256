//! Season orders: a season hold bought, read, cancelled or released for one night, each
//! change published to every event's followers; and the organizer's list and sales.

use boxoffice_api::{
    ReleasedNight, SeasonOrderList, SeasonOrderView, SeasonSales, SeasonSalesLine, SeatRef,
};
use boxoffice_core::availability::SeatStatus;
use boxoffice_core::hold::{ClaimedSeat, PricedSeat};
use boxoffice_core::ids::{EventId, SeasonId, UserId};
use boxoffice_core::season::{Season, SeasonOrder};
use boxoffice_store::journal::audit::By;
use boxoffice_store::sales::{self, seasons::SeasonPurchase};
use uuid::Uuid;

use crate::live::Change;
use crate::overload::{limited, Path};
use crate::{availability, Error, Services};

use super::{publish_all, view};

/// made before from the same hold).
pub struct SeasonCheckout {
    /// The order.
    pub order: SeasonOrderView,
    /// Made now (201) rather than found (200).
    pub created: bool,
}

/// Buys `user`'s live season hold `token`: its seats are sold in every event it holds
/// them in, in one transaction, paid at once. The same token again finds the same order.
pub async fn checkout(
    state: &Services,
    id: SeasonId,
    token: Uuid,
    user: &UserId,
) -> Result<SeasonCheckout, Error> {
    let store = state.holds.season_holds();
    let season = view(state, id).await?;
    let events = state.season_tokens.in_events(token, &season.event_ids);
    let currency = season
        .ticket_types
        .first()
        .map(|t| t.currency.clone())
        .unwrap_or_default();
    let purchase = SeasonPurchase {
        season: id,
        token,
        events: &events,
        user,
        currency: &currency,
    };
    let outcome = limited(&state.overload, Path::Checkout, async {
        Ok(sales::seasons::checkout(&state.pool, store, purchase).await?)
    })
    .await?;
    let (order, created) = match outcome {
        sales::seasons::SeasonCheckout::Created(order) => (order, true),
        sales::seasons::SeasonCheckout::Existing(order) => (order, false),
        sales::seasons::SeasonCheckout::NotLive => return Err(Error::HoldNotLive),
        sales::seasons::SeasonCheckout::Forbidden => {
            return Err(Error::Forbidden("this hold belongs to another user"))
        }
    };
    if created {
        let changes = order
            .nights
            .iter()
            .map(|night| {
                let seats = order.seats.iter().map(|s| s.seat_id.as_str());
                (night.event_id, Change::now(seats, SeatStatus::Sold))
            })
            .collect();
        publish_all(state, changes).await;
    }
    Ok(SeasonCheckout {
        order: order_view(state, &season, order).await?,
        created,
    })
}

/// The season order `id` (or the season order one of whose events' orders `id` is), for
/// its owner (`by`) or an admin (`None`); `None` when there is no such season order.
pub async fn find_order(
    state: &Services,
    id: Uuid,
    by: Option<&UserId>,
) -> Result<Option<SeasonOrderView>, Error> {
    let Some(order) = sales::seasons::load(&state.pool, id).await? else {
        return Ok(None);
    };
    if by.is_some_and(|u| u != &order.user_id) {
        return Err(Error::Forbidden("this order belongs to another user"));
    }
    let season = view(state, order.season_id).await?;
    Ok(Some(order_view(state, &season, order).await?))
}

/// Cancels the season order `id` (its owner, or staff: `by`): its seats go on sale again
/// in every event where they were not released, the waiting list first; with the id of one
/// of its events' orders, in that event alone (released for that night). `None` when there
/// is no such season order; a cancelled order (or night released) is answered as it is.
pub async fn cancel_order(
    state: &Services,
    id: Uuid,
    by: By<'_>,
) -> Result<Option<SeasonOrderView>, Error> {
    let outcome = sales::seasons::cancel(&state.pool, &*state.holds, id, by).await?;
    match given_back(state, outcome).await {
        Ok(order) | Err(GivenBack::Already(order)) => Ok(Some(order)),
        Err(GivenBack::NotFound) => Ok(None),
        Err(GivenBack::Failed(e)) => Err(e),
    }
}

/// Releases the season order `id`'s seats for `event` alone (its owner, or staff: `by`):
/// they go on sale in that event (the waiting list first); the order keeps the others.
pub async fn release_night(
    state: &Services,
    id: Option<Uuid>,
    event: Option<EventId>,
    by: By<'_>,
) -> Result<ReleasedNight, Error> {
    let (Some(id), Some(event)) = (id, event) else {
        return Err(Error::OrderNotFound);
    };
    let outcome = sales::seasons::release_night(&state.pool, &*state.holds, id, event, by).await?;
    match given_back(state, outcome).await {
        Ok(order) => order
            .released
            .into_iter()
            .find(|r| r.event_id == event)
            .ok_or(Error::OrderNotFound),
        Err(GivenBack::Already(_)) => Err(Error::AlreadyReleased),
        Err(GivenBack::NotFound) => Err(Error::OrderNotFound),
        Err(GivenBack::Failed(e)) => Err(e),
    }
}

/// Why a cancellation or release gave nothing back.
enum GivenBack {
    Already(SeasonOrderView),
    NotFound,
    Failed(Error),
}

impl From<Error> for GivenBack {
    fn from(e: Error) -> Self {
        GivenBack::Failed(e)
    }
}

/// Publishes what a cancellation or release put back, and answers the order.
async fn given_back(
    state: &Services,
    outcome: sales::seasons::SeasonCancel,
) -> Result<SeasonOrderView, GivenBack> {
    use sales::seasons::SeasonCancel;
    let (order, returned) = match outcome {
        SeasonCancel::Done(order, returned) => (order, returned),
        SeasonCancel::Already(order) => {
            let season = view(state, order.season_id).await?;
            return Err(GivenBack::Already(order_view(state, &season, order).await?));
        }
        SeasonCancel::NotFound => return Err(GivenBack::NotFound),
        SeasonCancel::Forbidden => {
            return Err(GivenBack::Failed(Error::Forbidden(
                "this order belongs to another user",
            )))
        }
    };
    for r in &returned {
        let seats = r.seats.iter().map(String::as_str);
        crate::orders::put_back(state, r.event, seats, &r.offers).await?;
    }
    let season = view(state, order.season_id).await?;
    Ok(order_view(state, &season, order).await?)
}

/// The season order as answered, its seats labelled.
async fn order_view(
    state: &Services,
    season: &Season,
    order: SeasonOrder,
) -> Result<SeasonOrderView, Error> {
    let map = availability::layout(state, season.event_ids[0], None, 0).await?;
    let refs = |seats: &[ClaimedSeat]| -> Vec<SeatRef> {
        seats
            .iter()
            .map(|s| SeatRef {
                id: s.seat_id.clone(),
                label: crate::layouts::label(&map, &s.seat_id),
                event_id: None,
            })
            .collect()
    };
    let released = order
        .nights
        .iter()
        .filter(|n| n.released)
        .map(|n| ReleasedNight {
            event_id: n.event_id,
            seats: refs(&order.seats),
        })
        .collect();
    Ok(SeasonOrderView {
        order_id: order.order_id,
        season_id: order.season_id,
        event_ids: order.event_ids(),
        user_id: order.user_id.to_string(),
        seats: order
            .seats
            .iter()
            .map(|s| PricedSeat {
                id: s.seat_id.clone(),
                label: crate::layouts::label(&map, &s.seat_id),
                ticket_type: s.ticket_type.clone(),
                price_cents: s.price_cents,
            })
            .collect(),
        partial: order.partial,
        total_cents: order.total_cents,
        currency: order.currency,
        status: order.status,
        created_at: order.created_at,
        released,
    })
}

/// Most season orders one list answers.
pub const MAX_ORDERS_LISTED: i64 = 200;

/// The season's orders, newest first (`limit` of them, at most [`MAX_ORDERS_LISTED`]);
/// with `q`, those whose id, buyer or a seat it names.
pub async fn list_orders(
    state: &Services,
    id: SeasonId,
    q: Option<&str>,
    limit: i64,
) -> Result<SeasonOrderList, Error> {
    let season = view(state, id).await?;
    let q = q.map(str::trim).filter(|q| !q.is_empty());
    let limit = limit.clamp(1, MAX_ORDERS_LISTED);
    let orders = sales::seasons::list(&state.pool, id, q, limit).await?;
    let mut views = Vec::with_capacity(orders.len());
    for order in orders {
        views.push(order_view(state, &season, order).await?);
    }
    Ok(SeasonOrderList { orders: views })
}

/// The season's sales: the whole season and each partial (those with none sold too).
pub async fn sales_of(state: &Services, id: SeasonId) -> Result<SeasonSales, Error> {
    let season = view(state, id).await?;
    let sold = sales::seasons::sales(&state.pool, id).await?;
    let line = |partial: Option<&str>, name: &str| {
        let found = sold.iter().find(|l| l.partial.as_deref() == partial);
        SeasonSalesLine {
            partial: partial.map(str::to_owned),
            name: name.to_owned(),
            orders: found.map_or(0, |l| l.orders),
            seats: found.map_or(0, |l| l.seats),
            revenue_cents: found.map_or(0, |l| l.revenue_cents),
        }
    };
    let mut lines = vec![line(None, &season.name)];
    lines.extend(season.partials.iter().map(|p| line(Some(&p.code), &p.name)));
    Ok(SeasonSales {
        currency: season
            .ticket_types
            .first()
            .map(|t| t.currency.clone())
            .unwrap_or_default(),
        orders: lines.iter().map(|l| l.orders).sum(),
        seats: lines.iter().map(|l| l.seats).sum(),
        revenue_cents: lines.iter().map(|l| l.revenue_cents).sum(),
        lines,
    })
}
