// Following an event live, as every surface does: GET /v1/events/{id}/stream with
// `snapshot=statuses`, each `statuses` snapshot (first, after a reconnection, after the
// allocations change) joined to the layout of its version (GET …/layout, which the browser
// keeps and revalidates), then each change after it, one event after another so a change
// never overtakes the snapshot it follows. A buyer's token (a sales channel's buyer sees
// the channel's seats) is sent with every read; the stream then goes through fetch, since
// EventSource cannot send it. A stream that ends is opened again.

import { request } from "./api.js";

const STATUS_LETTERS = { a: "available", h: "held", s: "sold", r: "resale", n: "not_for_sale" };

// Whether a seat of this status may be chosen: free, or sold and offered again by its buyer
// (resale), which any buyer holds and buys as a free seat.
export function free(status) {
  return status === "available" || status === "resale";
}

// The statuses of a `statuses` event, one per seat of the layout: runs of a letter and a
// length (`a120h2s`).
export function statusRuns(runs, count) {
  const out = new Array(count);
  const pattern = /([ahsrn])(\d*)/g;
  let i = 0, run;
  while ((run = pattern.exec(runs)) && i < count) {
    const end = Math.min(count, i + (run[2] ? Number(run[2]) : 1));
    out.fill(STATUS_LETTERS[run[1]], i, end);
    i = end;
  }
  if (i !== count) throw new Error("The seat map did not load whole; reload the page.");
  return out;
}

// The layout's seats with the statuses of a `statuses` event, and each held seat's
// `held_until` (its offset in seconds after `held_until_base`).
function withStatuses(seats, body) {
  const statuses = statusRuns(body.statuses, seats.length);
  const offsets = body.held_until_offsets || [];
  let held = 0;
  return seats.map((s, i) => {
    const seat = { ...s, status: statuses[i] };
    if (seat.status === "held" && held < offsets.length) {
      seat.held_until = new Date((body.held_until_base + offsets[held++]) * 1000).toISOString();
    }
    return seat;
  });
}

const AGAIN_MS = 2000;

// Server-Sent Events from `url`, each event's name mapped by `on` to a handler of its
// data; `state(s)` hears "live" once a stream answers and "reconnecting" when it ends.
function subscribe(url, token, on, state) {
  if (!token) {
    const source = new EventSource(url);
    for (const [name, handle] of Object.entries(on)) source.addEventListener(name, (m) => handle(m.data));
    source.onopen = () => state("live");
    source.onerror = () => state("reconnecting");
    return () => source.close();
  }
  let stopped = false;
  let controller = null;
  const dispatch = (block) => {
    let name = "message";
    const data = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) name = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (data.length && on[name]) on[name](data.join("\n"));
  };
  (async () => {
    while (!stopped) {
      controller = new AbortController();
      try {
        const answer = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" }, signal: controller.signal });
        if (!answer.ok || !answer.body) throw new Error(`the stream answered ${answer.status}`);
        state("live");
        const reader = answer.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value.replace(/\r\n/g, "\n");
          for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
            dispatch(buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
          }
        }
      } catch { /* ended or refused: open it again */ }
      if (stopped) break;
      state("reconnecting");
      await new Promise((resolve) => setTimeout(resolve, AGAIN_MS));
    }
  })();
  return () => { stopped = true; if (controller) controller.abort(); };
}

// Follows the event at `path` (`/v1/events/{id}`, absolute for another origin):
// `snapshot({seats, shapes, version})` with every seat and its status, `seats(changes)`
// with each change's `[{id, status, held_until}]`, `ga(area)` with an area's `{code, left}`,
// `state("live" | "reconnecting")`, `failed(error)` when a handler or a read fails. Answers
// `{close()}`.
export function follow(path, { token = null, snapshot = () => {}, seats = () => {}, ga = () => {},
  state = () => {}, failed = () => {} } = {}) {
  let layout = null;
  let queue = Promise.resolve();
  const inOrder = (handle) => (data) => {
    queue = queue.then(() => handle(data)).catch(failed);
  };
  const stop = subscribe(`${path}/stream?snapshot=statuses`, token, {
    statuses: inOrder(async (data) => {
      const body = JSON.parse(data);
      if (!layout || layout.version < body.version) layout = await request("GET", `${path}/layout`, { token });
      // A layout newer than these statuses: the statuses for it are on their way.
      if (layout.version !== body.version) return;
      await snapshot({ seats: withStatuses(layout.seats, body), shapes: layout.shapes || [], version: body.version });
    }),
    seats: inOrder((data) => seats(JSON.parse(data).seats)),
    ga: inOrder((data) => ga(JSON.parse(data))),
  }, state);
  return { close: stop };
}
