//! Key names. Each takes the event first; its id in braces is the cluster hash tag, so
//! one event's keys share a Redis Cluster slot and every script runs on one node.

use boxoffice_core::ids::EventId;
use uuid::Uuid;

/// The token holding a seat.
pub fn seat(event: EventId, seat: &str) -> String {
    format!("hold:{{{event}}}:{seat}")
}
/// A hold by token.
pub fn hold(event: EventId, token: Uuid) -> String {
    format!("holdtok:{{{event}}}:{token}")
}
/// Live holds by seat, scored by expiry.
pub fn held(event: EventId) -> String {
    format!("held:{{{event}}}")
}
/// One user's held seats, scored by expiry.
pub fn user(event: EventId, user: &str) -> String {
    format!("holduser:{{{event}}}:{user}")
}
/// A user's hold rate in the event (when their next ask would arrive at the rate).
pub fn hold_rate(event: EventId, user: &str) -> String {
    format!("holdrate:{{{event}}}:{user}")
}
/// Present while the waiting-room pass of `ticket` has ended early; without a pass, a
/// key of the event's slot that is never written.
pub fn pass_ended(event: EventId, ticket: Option<Uuid>) -> String {
    match ticket {
        Some(ticket) => format!("passend:{{{event}}}:{ticket}"),
        None => format!("passend:{{{event}}}:-"),
    }
}
/// Sold seats.
pub fn sold(event: EventId) -> String {
    format!("sold:{{{event}}}")
}
/// Seats sold since the last load began.
pub fn sold_new(event: EventId) -> String {
    format!("soldnew:{{{event}}}")
}
/// Sold seats staged by one loader.
pub fn sold_stage(event: EventId, loader: Uuid) -> String {
    format!("soldstage:{{{event}}}:{loader}")
}
/// The loaded state: layout version and start.
pub fn sync(event: EventId) -> String {
    format!("sync:{{{event}}}")
}
/// Who is loading the state.
pub fn loading(event: EventId) -> String {
    format!("loading:{{{event}}}")
}
/// Present while allocations change.
pub fn fence(event: EventId) -> String {
    format!("fence:{{{event}}}")
}
