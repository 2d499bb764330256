//! Best available: the server chooses the seats ([`boxoffice_core::best_available`]) and
//! holds them through the same hold-store path as a named basket.
//!
//! When a sale opens, hundreds of buyers ask at once, and every one of them would choose
//! the same best seats from the same availability: all but one would lose, choose again,
//! and collide again. So the choices one instance makes for one event are made one at a
//! time, from one shared view of the event's free seats that each choice marks as taken
//! before the next is made; buyers asking together get different seats in one round.
//! The hold store still decides: a seat the view thought free but another buyer (on
//! another instance, or naming seats) took meanwhile makes the hold fail, the view is
//! read again, and the buyer's seats are chosen again, up to [`MAX_CHOICES`] times.
//!
//! A view is reused for at most [`VIEW_LIFETIME`], so a seat freed meanwhile (a release,
//! an expiry) is offered again soon; before answering that there are not enough seats, a
//! reused view is always read again. A view read while other choices are still on their
//! way to the hold store marks their seats taken too, so a buyer never races another
//! buyer of the same instance for seats already chosen.

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use boxoffice_core::availability::SeatStatus;
use boxoffice_core::best_available::{self, Ask, Slot};
use boxoffice_core::hold::AcquireOutcome;
use boxoffice_core::ids::{EventId, UserId};
use boxoffice_core::validation::ValidationErrors;
use lru::LruCache;

use crate::asking::For;
use crate::holds::{self, LabelledHold};
use crate::overload::{limited, Path};
use crate::seat_map::RenderedSeatMap;
use crate::Services;
use crate::{availability, Error};

/// How often a best-available hold chooses again when its choice was taken meanwhile.
pub const MAX_CHOICES: usize = 3;

/// How long one read of an event's availability serves the choices that follow it.
pub const VIEW_LIFETIME: Duration = Duration::from_millis(500);

/// A best-available hold, and whether its seats are side by side in one row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BestHold {
    /// The hold.
    pub hold: LabelledHold,
    /// Its seats are adjacent in one row.
    pub adjacent: bool,
}

/// One event's free seats as this instance last read them, less the seats it has chosen
/// since.
struct View {
    map: Arc<RenderedSeatMap>,
    /// Per seat of `map`, in venue order: free to choose.
    free: Vec<bool>,
    /// The rows of `map` in rank order, as ranges of seat positions: ranked once per read,
    /// not once per choice.
    rows: Vec<std::ops::Range<usize>>,
    /// When it was read; also which read it is.
    read_at: Instant,
}

/// One event's choosing on this instance.
#[derive(Default)]
struct Turn {
    /// One choice at a time.
    choosing: tokio::sync::Mutex<()>,
    chosen: Mutex<Chosen>,
}

/// The shared view, and the choices whose holds are still on their way to the hold store:
/// a view read meanwhile would see their seats free, so they are marked taken in it too.
#[derive(Default)]
struct Chosen {
    view: Option<View>,
    in_flight: HashMap<u64, Vec<String>>,
    next: u64,
}

impl Turn {
    fn chosen(&self) -> std::sync::MutexGuard<'_, Chosen> {
        // Nothing a panicking holder leaves half done breaks more than one choice.
        self.chosen
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Per event and sales channel (each channel's buyers choose from their own view), its
/// [`Turn`] (of recently asked events; the least recently asked is forgotten first).
pub struct Chooser {
    events: Mutex<LruCache<crate::seat_map::ViewKey, Arc<Turn>>>,
}

impl Chooser {
    /// Keeps views of at most `capacity` events.
    pub fn new(capacity: NonZeroUsize) -> Self {
        Self {
            events: Mutex::new(LruCache::new(capacity)),
        }
    }

    fn turn(&self, event: EventId, channel: Option<&str>) -> Arc<Turn> {
        // The cache holds no invariant a panicking holder could break.
        let mut events = self
            .events
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        events
            .get_or_insert((event, channel.map(Box::from)), Arc::default)
            .clone()
    }
}

/// What one buyer asks for, checked.
struct Request<'a> {
    quantity: usize,
    ticket_type: Option<&'a str>,
    section_order: &'a [String],
    accessible: bool,
}

/// One choice, in flight until dropped.
struct Choice<'a> {
    turn: &'a Turn,
    id: u64,
    map: Arc<RenderedSeatMap>,
    read_at: Instant,
    basket: Vec<String>,
    adjacent: bool,
}

impl Choice<'_> {
    /// The hold store refused a chosen seat: the view is out of date.
    fn stale(&self) {
        let mut chosen = self.turn.chosen();
        if chosen
            .view
            .as_ref()
            .is_some_and(|v| v.read_at == self.read_at)
        {
            chosen.view = None;
        }
    }

    /// The seats were free but this buyer may not have them: free them in the view.
    fn refused(&self) {
        let mut chosen = self.turn.chosen();
        if let Some(view) = chosen.view.as_mut().filter(|v| v.read_at == self.read_at) {
            for id in &self.basket {
                if let Some(i) = self.map.map.index_of(id) {
                    view.free[i] = true;
                }
            }
        }
    }
}

impl Drop for Choice<'_> {
    /// Settled one way or another (or the request went away): no longer in flight.
    fn drop(&mut self) {
        self.turn.chosen().in_flight.remove(&self.id);
    }
}

/// What a buyer asks best available for.
#[derive(Clone, Copy, Debug)]
pub struct BestAsk<'a> {
    /// How many seats.
    pub quantity: u32,
    /// Only seats of this ticket type.
    pub ticket_type: Option<&'a str>,
    /// A wheelchair space and the seats beside it; otherwise no wheelchair space or
    /// companion seat is chosen.
    pub accessible: bool,
}

/// Holds the best `ask.quantity` seats free now (of its ticket type, or of any type) for
/// `user` under one new token, all or none; chosen among the seats of the buyer's sales
/// `channel` too, if they are in one.
pub async fn hold_best_available(
    state: &Services,
    event: EventId,
    user: &UserId,
    channel: Option<&str>,
    pass: Option<&str>,
    ask: BestAsk<'_>,
) -> Result<BestHold, Error> {
    let admitted = crate::queue::admit(state, event, user, pass).await?;
    let BestAsk {
        quantity,
        ticket_type,
        accessible,
    } = ask;
    holds::count_hold(state, event, user).await?;
    let policy = crate::layouts::event_policy(state, event).await?;
    let mut errors = ValidationErrors::default();
    errors.check_seats_by_number(
        "best_available.",
        "ask for",
        (quantity, ticket_type),
        &policy.by_number(),
    );
    errors.into_result(()).map_err(Error::Invalid)?;
    let channel = availability::channel_of(state, event, channel).await?;
    let request = Request {
        quantity: quantity as usize,
        ticket_type,
        section_order: &policy.section_order,
        accessible,
    };
    limited(&state.overload, Path::Hold, async {
        let turn = state.chooser.turn(event, channel);
        let mut taken = Vec::new();
        for _ in 0..MAX_CHOICES {
            let choice = choose(state, event, channel, &turn, &request).await?;
            let map = &choice.map;
            match crate::asking::acquire(
                state,
                (event, user, For::Buyer(admitted)),
                map,
                &choice.basket,
            )
            .await?
            {
                outcome @ AcquireOutcome::Held(_) => {
                    let hold = holds::settle(state, event, map, outcome).await?;
                    let adjacent = choice.adjacent;
                    return Ok(BestHold { hold, adjacent });
                }
                // Someone else took a chosen seat, or the allocations changed: what this
                // instance knows is out of date. Read it again and choose again.
                AcquireOutcome::Unavailable(ids) => {
                    choice.stale();
                    taken = crate::layouts::seat_refs(map, ids);
                }
                AcquireOutcome::LayoutChanged(_) => choice.stale(),
                outcome => {
                    choice.refused();
                    return match holds::settle(state, event, map, outcome).await {
                        Ok(_) => unreachable!("only a held outcome settles to a hold"),
                        Err(e) => Err(e),
                    };
                }
            }
        }
        Err(Error::SeatsUnavailable(taken))
    })
    .await
}

/// Waits for the event's turn and chooses from the shared view (read again if it is old or
/// absent, and before answering that too few seats are left), marking the choice taken in
/// it until the choice is dropped.
async fn choose<'t>(
    state: &Services,
    event: EventId,
    channel: Option<&str>,
    turn: &'t Turn,
    request: &Request<'_>,
) -> Result<Choice<'t>, Error> {
    let _turn = turn.choosing.lock().await;
    let mut fresh = false;
    loop {
        let reusable = turn
            .chosen()
            .view
            .as_ref()
            .is_some_and(|v| v.read_at.elapsed() < VIEW_LIFETIME);
        if !reusable {
            let mut view = read(state, event, channel, request.section_order).await?;
            fresh = true;
            let mut chosen = turn.chosen();
            for id in chosen.in_flight.values().flatten() {
                if let Some(i) = view.map.map.index_of(id) {
                    view.free[i] = false;
                }
            }
            chosen.view = Some(view);
        }
        let mut chosen = turn.chosen();
        // A choice the hold store refused meanwhile may have dropped the view
        // (`Choice::stale` does not wait for the turn): read it again.
        let Some(view) = chosen.view.as_mut() else {
            continue;
        };
        match pick(view, request) {
            Some((seats, adjacent)) => {
                for &i in &seats {
                    view.free[i] = false;
                }
                let all = view.map.map.seats();
                let basket: Vec<String> = seats.iter().map(|&i| all[i].id.clone()).collect();
                let (map, read_at) = (view.map.clone(), view.read_at);
                let id = chosen.next;
                chosen.next += 1;
                chosen.in_flight.insert(id, basket.clone());
                return Ok(Choice {
                    turn,
                    id,
                    map,
                    read_at,
                    basket,
                    adjacent,
                });
            }
            None if fresh => return Err(Error::SeatsUnavailable(Vec::new())),
            // Seats may have been freed since the view was read.
            None => chosen.view = None,
        }
    }
}

/// The best seats for `request` in `view`: their positions and whether they are adjacent.
///
/// The ranked rows are tried one by one, each looked at only if it has enough free seats,
/// as [`best_available::choose`] would try them; only when no row has enough together is
/// the whole map handed to it for the closest group.
fn pick(view: &View, request: &Request<'_>) -> Option<(Vec<usize>, bool)> {
    let seats = view.map.map.seats();
    // A thousandth of the venue's unit is as fine as a tie-break needs.
    let distance = |seat: &boxoffice_core::availability::EventSeat| {
        view.map.focal.map_or(0, |f| {
            ((seat.x - f.x).hypot(seat.y - f.y) * 1000.0).min(f64::from(u32::MAX)) as u32
        })
    };
    let slots_of = |range: std::ops::Range<usize>| -> Vec<Slot<'_>> {
        seats[range.clone()]
            .iter()
            .zip(&view.free[range])
            .map(|(seat, &free)| Slot {
                section: &seat.section,
                row: &seat.row,
                ticket_type: seat.ticket_type.as_deref(),
                free,
                accessible: seat.attributes.accessible,
                companion: seat.attributes.companion,
                distance: distance(seat),
            })
            .collect()
    };
    let ask = Ask {
        quantity: request.quantity,
        ticket_type: request.ticket_type,
        section_order: request.section_order,
        accessible: request.accessible,
    };
    for row in &view.rows {
        if view.free[row.clone()].iter().filter(|&&f| f).count() < request.quantity {
            continue;
        }
        if let Some(start) = best_available::together(&slots_of(row.clone()), &ask) {
            let first = row.start + start;
            return Some(((first..first + request.quantity).collect(), true));
        }
    }
    best_available::choose(&slots_of(0..seats.len()), &ask).map(|c| (c.seats, c.adjacent))
}

/// The event's availability now, as a view, its rows ranked by `section_order`. The hold
/// store must answer: without it every held seat would look free.
async fn read(
    state: &Services,
    event: EventId,
    channel: Option<&str>,
    section_order: &[String],
) -> Result<View, Error> {
    // From the primary: what it chooses goes straight to the hold store.
    let availability =
        availability::event_availability_from(state, event, &state.pool, channel).await?;
    if availability.holds_unknown {
        return Err(Error::Unavailable {
            reason: "the hold store is unavailable".into(),
            retry_after: Duration::from_secs(1),
        });
    }
    let map = availability.map;
    let layout: Vec<Slot<'_>> = map
        .map
        .seats()
        .iter()
        .map(|seat| Slot {
            section: &seat.section,
            row: &seat.row,
            ticket_type: seat.ticket_type.as_deref(),
            free: false,
            accessible: seat.attributes.accessible,
            companion: seat.attributes.companion,
            distance: 0,
        })
        .collect();
    let rows = best_available::rows_in_rank_order(&layout, section_order);
    drop(layout);
    Ok(View {
        free: availability
            .states
            .iter()
            .map(|s| s.status == SeatStatus::Available)
            .collect(),
        rows,
        map,
        read_at: Instant::now(),
    })
}
