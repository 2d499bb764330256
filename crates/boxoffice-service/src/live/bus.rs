//! The bus between instances: Postgres `NOTIFY` on one channel. A publisher task sends
//! what the services queued, many messages per round trip; a listener task hands what
//! arrives to this instance's subscribers.
//!
//! A message is `<event id> <kind> <data>`: `seats` and `ga` carry the data of the
//! stream event of that name; `layout` says the event's allocations changed, and the
//! listener sends its subscribers one fresh snapshot, composed once per instance.

use std::sync::Arc;
use std::time::Duration;

use boxoffice_api::{SeatChange, SeatsChanged};
use boxoffice_core::ids::EventId;
use sqlx::postgres::{PgListener, PgPoolOptions};
use tokio::sync::{mpsc, watch};

use super::{Frame, Hub, Outgoing};
use crate::Services;

/// The `LISTEN`/`NOTIFY` channel.
const CHANNEL: &str = "boxoffice_live";
/// Most messages sent in one round trip.
const BATCH: usize = 256;
/// Pause before connecting again after the listener's connection failed.
const RECONNECT_PAUSE: Duration = Duration::from_secs(1);

/// Starts the publisher and the listener of this instance; both end when `stopped` turns
/// true. Call once per [`super::Live`].
pub fn run(state: Services, stopped: watch::Receiver<bool>) -> tokio::task::JoinHandle<()> {
    let queue = state
        .live
        .queue
        .lock()
        .expect("live queue lock")
        .take()
        .expect("the live bus runs once per server");
    tokio::spawn(async move {
        tokio::join!(
            publish(state.clone(), queue, stopped.clone()),
            listen(state, stopped)
        );
    })
}

/// Sends queued messages, as many per round trip as are waiting, until `stopped`.
async fn publish(
    state: Services,
    mut queue: mpsc::Receiver<Outgoing>,
    mut stopped: watch::Receiver<bool>,
) {
    let mut batch = Vec::with_capacity(BATCH);
    loop {
        tokio::select! {
            n = queue.recv_many(&mut batch, BATCH) => if n == 0 { return },
            _ = stopped.wait_for(|s| *s) => return,
        }
        let payloads: Vec<&str> = batch.iter().map(|m| m.payload.as_str()).collect();
        // Committed without waiting for the disk (`synchronous_commit` off for this
        // statement's transaction, as a claim is): a notification is delivered at commit
        // either way, and one lost with a crash of Postgres is made good by the snapshot
        // every listener sends when it connects again.
        let sent = sqlx::query(
            "select pg_notify($1, m.p)
               from (select set_config('synchronous_commit', 'off', true)) as async,
                    unnest($2::text[]) with ordinality as m(p, i)
              order by m.i",
        )
        .bind(CHANNEL)
        .bind(&payloads)
        .execute(&state.pool)
        .await;
        if let Err(error) = sent {
            state.live.dropped(batch.len());
            tracing::warn!(%error, changes = batch.len(), "live updates not sent");
        }
        for message in batch.drain(..) {
            if let Some(sent) = message.sent {
                let _ = sent.send(());
            }
        }
    }
}

/// Delivers what the bus carries to this instance's subscribers until `stopped`,
/// connecting again whenever the connection drops (and then sending every subscriber a
/// fresh snapshot, since messages may have been missed meanwhile).
async fn listen(state: Services, mut stopped: watch::Receiver<bool>) {
    let hub = state.live.hub.clone();
    loop {
        let connected = tokio::select! {
            l = connect(&state) => l,
            _ = stopped.wait_for(|s| *s) => return,
        };
        let Some(mut listener) = connected else {
            tokio::select! {
                () = tokio::time::sleep(RECONNECT_PAUSE) => continue,
                _ = stopped.wait_for(|s| *s) => return,
            }
        };
        // Listening now: whatever happened before is in the snapshot, and any queue
        // settings kept are read again.
        state.admission.forget_all();
        state.live.taken.forget_all();
        resync_all(&state, &hub).await;
        state.live.listening.send_replace(true);
        loop {
            let notification = tokio::select! {
                n = listener.try_recv() => n,
                _ = stopped.wait_for(|s| *s) => return,
            };
            match notification {
                Ok(Some(n)) => deliver(&state, &hub, n.payload()).await,
                Ok(None) => {
                    tracing::warn!("live updates: listener connection lost; reconnecting");
                    break;
                }
                Err(error) => {
                    tracing::warn!(%error, "live updates: listener failed; reconnecting");
                    break;
                }
            }
        }
        state.live.listening.send_replace(false);
    }
}

/// A listener on a connection of its own, outside the server's pool, so listening never
/// takes a connection requests need.
async fn connect(state: &Services) -> Option<PgListener> {
    let own = PgPoolOptions::new()
        .max_connections(1)
        .idle_timeout(None)
        .max_lifetime(None)
        .connect_lazy_with((*state.pool.connect_options()).clone());
    let mut listener = match PgListener::connect_with(&own).await {
        Ok(l) => l,
        Err(error) => {
            tracing::warn!(%error, "live updates: cannot listen yet");
            return None;
        }
    };
    match listener.listen(CHANNEL).await {
        Ok(()) => Some(listener),
        Err(error) => {
            tracing::warn!(%error, "live updates: cannot listen yet");
            None
        }
    }
}

/// A `gaveup` message: the waiting-room ticket a buyer gave up.
#[derive(serde::Deserialize)]
struct GaveUp {
    ticket: uuid::Uuid,
}

/// Hands one bus message to the subscribers of its event.
async fn deliver(state: &Services, hub: &Hub, payload: &str) {
    let mut parts = payload.splitn(3, ' ');
    let (Some(event), Some(kind), Some(data)) = (parts.next(), parts.next(), parts.next()) else {
        tracing::warn!(payload, "live updates: malformed message ignored");
        return;
    };
    let Some(event) = EventId::parse(event) else {
        tracing::warn!(payload, "live updates: malformed message ignored");
        return;
    };
    match kind {
        "seats" => {
            // The view first: once a subscriber sees the change, so do holds.
            let changed = match serde_json::from_str::<SeatsChanged>(data) {
                Ok(changed) => {
                    state.live.taken.apply(event, &changed.seats);
                    changed
                }
                Err(_) => {
                    tracing::warn!(payload, "live updates: malformed seats ignored");
                    state.live.taken.forget(event);
                    return;
                }
            };
            if hub.has(event) {
                send_seats(state, hub, event, data, changed).await;
            }
        }
        "ga" => hub.send(event, Frame::Ga(Arc::from(data))),
        "layout" => {
            state.live.taken.forget(event);
            resync(state, hub, event).await;
        }
        "queue" => state.admission.forget(event),
        "gaveup" => match serde_json::from_str::<GaveUp>(data) {
            Ok(gave_up) => state.lines.gave_up(event, gave_up.ticket),
            Err(_) => tracing::warn!(payload, "live updates: malformed message ignored"),
        },
        _ => tracing::warn!(payload, "live updates: unknown kind ignored"),
    }
}

/// Sends a change of seats to `event`'s subscribers: as it came (`data`), unless some of
/// its seats are allocated to sales channels; those go apart, as a [`Frame::Channel`] for
/// the streams of channel buyers alone. Judged by the event's public seat map, as cached
/// (an allocation change reaches the bus, and this map is read again, before any change
/// made after it).
async fn send_seats(
    state: &Services,
    hub: &Hub,
    event: EventId,
    data: &str,
    changed: SeatsChanged,
) {
    let map = match state.seat_maps.peek(event) {
        Some(map) => Some(map),
        None => state
            .seat_maps
            .get_any(&state.pool, event)
            .await
            .ok()
            .flatten(),
    };
    let Some(map) = map.filter(|m| m.hides_seats()) else {
        hub.send(event, Frame::Seats(Arc::from(data)));
        return;
    };
    let (hidden, open): (Vec<SeatChange>, Vec<SeatChange>) = changed
        .seats
        .into_iter()
        .partition(|seat| map.is_elsewhere(&seat.id));
    let render =
        |seats| Arc::from(serde_json::to_string(&SeatsChanged { seats }).expect("seats serialize"));
    if !open.is_empty() {
        hub.send(event, Frame::Seats(render(open)));
    }
    if !hidden.is_empty() {
        hub.send(event, Frame::Channel(render(hidden)));
    }
}

/// Sends `event`'s subscribers one snapshot composed now, or, if it cannot be composed,
/// asks each to take its own.
async fn resync(state: &Services, hub: &Hub, event: EventId) {
    let frame = match crate::availability::seats_snapshot(state, event).await {
        Ok(snapshot) => Frame::Snapshot(Arc::new(snapshot)),
        Err(_) => Frame::Resync,
    };
    hub.send(event, frame);
}

async fn resync_all(state: &Services, hub: &Hub) {
    for event in hub.events() {
        resync(state, hub, event).await;
    }
}
