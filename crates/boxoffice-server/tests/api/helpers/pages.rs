//! Driving the buyer's page and the console in the browser, beyond the basics of
//! `browser`: a page opened and live, seats picked on the organizer's map.

use fantoccini::Client;
use serde_json::{json, Value};

use super::{wait_for, LOADS_WITHIN};

/// Opens `url` and waits until its map is drawn and live.
pub(crate) async fn open_at(page: &Client, url: &str) {
    page.goto(url).await.unwrap();
    wait_for(
        page,
        LOADS_WITHIN,
        "return document.getElementById('live').dataset.state === 'live' && document.querySelectorAll('#map .seat').length > 0",
        json!(true),
    )
    .await;
}

/// Dispatches a pointer press and release at the centre of each seat, the first as a
/// click and the rest with shift held.
const PICK: &str = "
    const svg = document.getElementById('map');
    arguments[0].forEach((id, i) => {
      const seat = svg.querySelector(`[data-seat-id=\"${id}\"]`), r = seat.getBoundingClientRect();
      const at = {bubbles: true, pointerId: 1, shiftKey: i > 0, clientX: r.left + r.width / 2, clientY: r.top + r.height / 2};
      seat.dispatchEvent(new PointerEvent('pointerdown', at));
      svg.dispatchEvent(new PointerEvent('pointerup', at));
    });
    return document.getElementById('picked').textContent;";

/// Picks `seats` on the organizer's map once every one of them is drawn (the map may be
/// drawn after the counters the test waited for): the selection's description.
pub(crate) async fn pick_seats(page: &Client, seats: &[&str]) -> Value {
    let drawn = format!(
        "return {seats:?}.every(id => document.querySelector(`#map [data-seat-id=\"${{id}}\"]`))"
    );
    wait_for(page, LOADS_WITHIN, &drawn, json!(true)).await;
    page.execute(PICK, vec![json!(seats)]).await.unwrap()
}
