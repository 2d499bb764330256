// What the buyer's page shares between its parts: its state, the buyer (a platform's
// token or an anonymous session), calls to the API as that buyer (a busy server's turn
// waited out, with a visible "trying again"), messages, and the timings hook.

import { Problem, request, patiently } from "../core/api.js";

export const $ = (id) => document.getElementById(id);

export const state = {
  event: null,          // GET /v1/events/{id}
  seats: new Map(),     // id -> {seat, el, status, heldUntil}
  selected: new Set(),
  hold: null,           // {token, expiresAt, seats: [ids], offer}
  typeIndex: new Map(), // ticket type code -> palette index
  viewport: null,       // Viewport: zoom and pan
  keys: null,           // SeatKeys: the keyboard on the map
  pending: new Set(),   // seats of a hold request on its way
  pass: null,           // the waiting room's {ticket, pass, expires_at}, while the queue is on
  paying: null,         // the seats of the buyer's order awaiting payment
};

// ---- the buyer ----

const SESSION_KEY = "boxoffice.session";
const TOKEN_KEY = "boxoffice.buyer_token";

// Who the page holds seats for: `{token, handed}`, or null where anonymous sessions are off
// and no platform handed the page a token (the map is then for reading only).
export const buyer = { token: null, handed: false };

// A platform signs its buyer in and opens the page with the buyer's token in the fragment
// (`/?event=…#buyer_token=…`, never sent to a server or kept in its logs); the page keeps it
// for this browser session and takes it out of the address. Otherwise the page asks for an
// anonymous session, which a server started with --demo or BOXOFFICE_ANONYMOUS_SESSIONS
// hands out.
export async function signIn() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const handed = fragment.get("buyer_token");
  if (handed) {
    sessionStorage.setItem(TOKEN_KEY, handed);
    fragment.delete("buyer_token");
    const rest = fragment.toString();
    history.replaceState(null, "", location.pathname + location.search + (rest ? "#" + rest : ""));
  }
  const kept = sessionStorage.getItem(TOKEN_KEY);
  if (kept) {
    buyer.token = kept;
    buyer.handed = true;
    return;
  }
  try {
    const saved = JSON.parse(localStorage.getItem(SESSION_KEY) || "null");
    if (saved && Date.parse(saved.expires_at) - Date.now() > 60_000) {
      buyer.token = saved.token;
      return;
    }
  } catch (_) { /* start a new one */ }
  try {
    const created = await request("POST", "/v1/sessions");
    localStorage.setItem(SESSION_KEY, JSON.stringify(created));
    buyer.token = created.token;
  } catch (e) {
    // Anonymous sessions are off: reading stays open to all.
    if (!(e instanceof Problem && (e.status === 404 || e.status === 403))) throw e;
    buyer.token = null;
  }
}

// ---- calls ----

// A call to the API as the buyer (with the waiting room's pass while there is one); a busy
// server's turn is waited out and the call made again, saying so.
export function api(method, path, json) {
  const headers = state.pass ? { "Boxoffice-Pass": state.pass.pass } : {};
  return patiently(() => request(method, path, { token: buyer.token, json, headers }), { waiting: busy });
}

// A read open to all.
export function read(path) {
  return request("GET", path, { token: buyer.handed ? buyer.token : null });
}

let busyTimer = null;

// "Busy, trying again in …" while a call waits its turn.
function busy(ms) {
  const el = $("busy");
  clearInterval(busyTimer);
  if (!el) return;
  if (!ms) {
    el.hidden = true;
    return;
  }
  const at = Date.now() + ms;
  const show = () => {
    const left = Math.max(0, at - Date.now()) / 1000;
    el.textContent = `Busy: many buyers at once. Trying again in ${left.toFixed(1)} s…`;
  };
  el.hidden = false;
  show();
  busyTimer = setInterval(show, 100);
}

// ---- messages ----

// On a phone the message floats over the map (app.css), so it goes by itself after a while.
const PHONE = "(max-width: 800px)";
const SAID_ON_A_PHONE_MS = 6000;
let unsay = null;

export function say(text, kind) {
  const m = $("message");
  m.textContent = text;
  m.dataset.kind = kind || "warn";
  m.hidden = !text;
  clearTimeout(unsay);
  if (text && matchMedia(PHONE).matches) {
    unsay = setTimeout(() => { if (m.textContent === text) m.hidden = true; }, SAID_ON_A_PHONE_MS);
  }
}

export function fail(e) {
  say(e instanceof Problem ? e.message : "Something went wrong: " + e.message, "warn");
}

// What to draw again when the selection or a hold changes (the basket registers here).
const redraws = [];
export const onChange = (redraw) => redraws.push(redraw);
export const changed = () => { for (const redraw of redraws) redraw(); };

// Told when the buyer's orders changed (a purchase, a booking): "Your orders" reads them.
const orderWatchers = [];
export const onOrdered = (watch) => orderWatchers.push(watch);
export const ordered = () => { for (const watch of orderWatchers) watch(); };

// Brings `box` into view and moves focus to it: on a phone the panel is below the map.
export function reveal(box) {
  box.tabIndex = -1;
  box.scrollIntoView({ block: "start" });
  box.focus({ preventScroll: true });
}

export function typeOf(code) {
  return state.event.ticket_types.find((t) => t.code === code);
}

// ---- timings ----

// The moments a benchmark reads (ms since navigation), kept only when the page is opened
// with `?timings`: as JSON in the root element's `data-timings`.
export const timings = new URLSearchParams(location.search).has("timings") ? {} : null;

export function timed(name) {
  if (!timings) return;
  timings[name] ??= performance.now();
  document.documentElement.dataset.timings = JSON.stringify(timings);
}
