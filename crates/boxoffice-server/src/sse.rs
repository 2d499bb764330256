//! Server-Sent Events as the seat stream sends them: one event's bytes, and a snapshot's
//! event framed (and compressed) once for every stream that shares the snapshot.

use std::sync::OnceLock;

use axum::body::Bytes;
use boxoffice_service::availability::{SeatsSnapshot, SnapshotKind};

use crate::gzip::Deflated;

/// One Server-Sent Event: `name` and `data`, which must be one line (compact JSON is).
pub fn event(name: &str, data: &str) -> Bytes {
    debug_assert!(!data.contains('\n'), "an event's data is one line");
    let mut event = Vec::with_capacity(name.len() + data.len() + 16);
    event.extend_from_slice(b"event: ");
    event.extend_from_slice(name.as_bytes());
    event.extend_from_slice(b"\ndata: ");
    event.extend_from_slice(data.as_bytes());
    event.extend_from_slice(b"\n\n");
    event.into()
}

/// A snapshot's events, kept with it ([`SeatsSnapshot::encoded`]): each form framed, and
/// compressed, at most once.
#[derive(Default)]
struct SnapshotEvents {
    framed: [OnceLock<Bytes>; 2],
    deflated: [OnceLock<Deflated>; 2],
}

fn slot(kind: SnapshotKind) -> usize {
    match kind {
        SnapshotKind::Full => 0,
        SnapshotKind::Statuses => 1,
    }
}

/// The name of the stream event that carries a snapshot of this kind.
fn snapshot_name(kind: SnapshotKind) -> &'static str {
    match kind {
        SnapshotKind::Full => "snapshot",
        SnapshotKind::Statuses => "statuses",
    }
}

/// `snapshot` in the form `kind` as its event, built once: every stream sending it shares
/// these bytes.
pub fn snapshot_event(snapshot: &SeatsSnapshot, kind: SnapshotKind) -> Bytes {
    snapshot.encoded::<SnapshotEvents>().framed[slot(kind)]
        .get_or_init(|| event(snapshot_name(kind), snapshot.body(kind)))
        .clone()
}

/// [`snapshot_event`], compressed once for every gzip stream that sends it.
pub fn snapshot_deflated(snapshot: &SeatsSnapshot, kind: SnapshotKind) -> Deflated {
    snapshot.encoded::<SnapshotEvents>().deflated[slot(kind)]
        .get_or_init(|| Deflated::new(&snapshot_event(snapshot, kind)))
        .clone()
}
