// The scanner page, `/scan?event=<id>`: signed in with a check-in key (kept for the browser
// session, shared with the console; a phone paired from the console brings its own in the
// address's fragment), it reads tickets' QR codes with the camera (the
// browser's BarcodeDetector where it has one for QR codes, else the vendored jsQR) or takes
// a typed or pasted code, asks the server, and shows the answer full screen. When the
// server cannot be reached it answers alone (entry.js: the signature, the revocation list,
// whom it let in), queues its check-ins and uploads them with `force` once the server
// answers again, saying how many wait.

import { Problem, request } from "../core/api.js";
import { eventTime } from "../core/format.js";
import { Door, importKeys, judge, parseSecret, typedCode, upload } from "./entry.js";
import { watch } from "./camera.js";

const $ = (id) => document.getElementById(id);

// One staff key per browser session, the console's and the scanner's.
const TOKEN_KEY = "boxoffice.console.token";
const GATE_KEY = "boxoffice.scan.gate";
// A check-in unanswered this long is answered here instead.
const ANSWER_WITHIN_MS = 4000;
// How often the queue is uploaded (or the server tried) while it is unreachable, and how
// often the revocation list and the keys are read again while it is not.
const RETRY_EVERY_MS = 3000;
const REFRESH_EVERY_MS = 30_000;
// How long a green answer to the camera fills the screen before scanning goes on. A red
// one, and any answer to a typed code, stays until it is dismissed: a refusal is seen.
const GREEN_SHOWN_MS = 1800;

const scan = {
  eventId: null,
  event: null,
  keys: new Map(),     // kid -> CryptoKey
  door: null,          // Door: entries, revocations and the queue, in localStorage
  labels: new Map(),   // seat id -> label
  seats: [],           // the event's seats in order (a compact secret's seat index)
  online: true,
  refreshedAt: 0,
  answerTimer: null,
  cameraOn: false,
  syncing: false,
};

const token = () => sessionStorage.getItem(TOKEN_KEY);

function call(method, path, json) {
  return request(method, path, { token: token(), json, signal: AbortSignal.timeout(ANSWER_WITHIN_MS) });
}

// ---- signing in and choosing the event ----

function signIn(reason) {
  for (const id of ["scanner", "events"]) $(id).hidden = true;
  $("signin").hidden = false;
  const error = $("signin-error");
  error.hidden = !reason;
  error.textContent = reason || "";
  $("signin-key").focus();
  $("signin-form").onsubmit = async (e) => {
    e.preventDefault();
    const key = $("signin-key").value.trim();
    try {
      const me = await request("GET", "/v1/me", { token: key });
      if (!me.rights || !me.rights.includes("check_in")) {
        throw new Problem(403, { detail: `A ${me.role} key may not check tickets in: use a check-in key.` });
      }
      sessionStorage.setItem(TOKEN_KEY, key);
      $("signin-key").value = "";
      $("signin").hidden = true;
      await start();
    } catch (err) {
      error.hidden = false;
      error.textContent = err instanceof Problem && err.status === 401 ? "That key is not known, or no longer valid." : err.message;
    }
  };
}

async function chooseEvent() {
  const me = await call("GET", "/v1/me");
  const query = me.organization_id ? "?organization=" + encodeURIComponent(me.organization_id) : "";
  const { events } = await call("GET", "/v1/events" + query);
  $("events").hidden = false;
  const list = $("event-list");
  list.replaceChildren();
  for (const e of events) {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = "/scan?event=" + encodeURIComponent(e.id);
    a.append(Object.assign(document.createElement("strong"), { textContent: e.name }), document.createElement("br"),
      Object.assign(document.createElement("span"), { textContent: eventTime(e.starts_at, e.time_zone) }));
    li.append(a);
    list.append(li);
  }
  $("events-empty").hidden = events.length > 0;
}

// ---- the event ----

async function openEvent(id) {
  const [event, keys, seats] = await Promise.all([
    call("GET", "/v1/events/" + encodeURIComponent(id)),
    call("GET", `/v1/events/${encodeURIComponent(id)}/entry/keys`),
    call("GET", `/v1/events/${encodeURIComponent(id)}/seats`),
  ]);
  scan.event = event;
  scan.keys = await importKeys(keys.keys);
  for (const s of seats.seats) scan.labels.set(s.id, s.label);
  scan.seats = seats.seats;
  scan.door = new Door(localStorage, id);
  await refresh();
  document.title = event.name + " · Scanner · Boxoffice";
  $("event-name").textContent = event.name;
  $("event-meta").textContent = eventTime(event.starts_at, event.time_zone) + (event.entry && event.entry.reentry ? " · re-entry allowed" : "");
  $("gate").value = localStorage.getItem(GATE_KEY) || "";
  $("gate").onchange = () => localStorage.setItem(GATE_KEY, $("gate").value.trim());
  $("scanner").hidden = false;
  $("typed").onsubmit = (e) => {
    e.preventDefault();
    const input = $("typed-secret");
    const text = input.value.trim();
    input.value = "";
    const code = typedCode(text);
    if (code) checkCode(code);
    else if (text) check(text, false);
  };
  $("camera").onclick = startCamera;
  // A tap anywhere on an answer dismisses it.
  $("answer").onclick = hideAnswer;
  window.addEventListener("offline", () => wentOffline());
  window.addEventListener("online", () => sync());
  setInterval(sync, RETRY_EVERY_MS);
  showLink();
  if (navigator.mediaDevices && navigator.mediaDevices.getUserMedia) startCamera();
}

// The revocation list since it was last read, and the keys again.
async function refresh() {
  const since = scan.door.asOf ? "?since=" + encodeURIComponent(scan.door.asOf) : "";
  const path = `/v1/events/${encodeURIComponent(scan.eventId)}`;
  const [revoked, keys] = await Promise.all([call("GET", path + "/entry/revoked" + since), call("GET", path + "/entry/keys")]);
  scan.door.revocations(revoked);
  scan.keys = await importKeys(keys.keys);
  scan.refreshedAt = Date.now();
}

// ---- the connection ----

function unreachable(e) {
  return e instanceof Problem && (e.status === 0 || e.status === 429 || e.status >= 500);
}

function wentOffline() {
  scan.online = false;
  showLink();
}

function showLink() {
  const link = $("link");
  const waiting = scan.door ? scan.door.queue.length : 0;
  link.dataset.state = scan.online ? "online" : "offline";
  link.dataset.queued = String(waiting);
  const queued = waiting ? ` · ${waiting} check-in${waiting === 1 ? "" : "s"} to upload` : "";
  link.textContent = (scan.online ? "Online" : "Offline: checking here") + queued;
}

// Uploads what waits, or tries the server again; reads the revocation list again now and
// then. One at a time.
async function sync() {
  if (scan.syncing || !scan.door) return;
  scan.syncing = true;
  try {
    if (scan.door.queue.length) {
      const path = `/v1/events/${encodeURIComponent(scan.eventId)}/checkins`;
      await upload(scan.door, async (c) => {
        try {
          const body = await call("POST", path, { ...c, force: true });
          scan.online = true;
          return { status: 201, body };
        } catch (e) {
          if (!(e instanceof Problem)) throw e;
          if (unreachable(e)) scan.online = false;
          else scan.online = true;
          return { status: e.status, body: e.body };
        }
      });
    }
    if (!scan.online || Date.now() - scan.refreshedAt > REFRESH_EVERY_MS) {
      await refresh();
      scan.online = true;
    }
  } catch (e) {
    if (unreachable(e)) scan.online = false;
  } finally {
    scan.syncing = false;
    showLink();
  }
}

// ---- a scan ----

// Checks one ticket in: `camera` when it was read by the camera (a green answer then gives
// way to the next scan by itself).
async function check(secret, camera) {
  const type = document.querySelector("input[name=mode]:checked").value;
  const gate = $("gate").value.trim() || null;
  const checkin = { secret, nonce: crypto.randomUUID(), type };
  if (gate) checkin.gate = gate;
  const at = new Date().toISOString();
  if (scan.online && !scan.door.queue.length) {
    try {
      const answer = await call("POST", `/v1/events/${encodeURIComponent(scan.eventId)}/checkins`, checkin);
      scan.door.passed(answer.ticket.id, type, at, gate);
      return show(camera, "ok", type, answer.ticket.label, typeName(answer.ticket.ticket_type));
    } catch (e) {
      if (!unreachable(e)) return refused(e, camera, type, secret);
      wentOffline();
    }
  }
  // Alone: the scanner's own judgement, and a check-in owed.
  const verdict = await judge(secret, {
    eventId: scan.eventId, keys: scan.keys, door: scan.door, type,
    reentry: !!(scan.event.entry && scan.event.entry.reentry),
  });
  const p = verdict.payload;
  if (verdict.result === "ok") {
    scan.door.passed(p.tid, type, at, gate);
    // Uploaded with `force` and when it was scanned, under the same nonce: an answer
    // lost on the way is not a second check-in.
    scan.door.owe({ ...checkin, scanned_at: at });
    showLink();
    return show(camera, "ok", type, labelOf(p), typeOf(p), "Checked here while offline: it uploads when the connection returns.");
  }
  showLink();
  return show(camera, verdict.result, type, p ? labelOf(p) : "", "", "", verdict.first);
}

// Checks one ticket in by the code typed from under its QR code: online only (the code
// carries no signature to check here).
async function checkCode(code) {
  const type = document.querySelector("input[name=mode]:checked").value;
  const gate = $("gate").value.trim() || null;
  const checkin = { code, nonce: crypto.randomUUID(), type };
  if (gate) checkin.gate = gate;
  const at = new Date().toISOString();
  try {
    const answer = await call("POST", `/v1/events/${encodeURIComponent(scan.eventId)}/checkins`, checkin);
    scan.door.passed(answer.ticket.id, type, at, gate);
    return show(false, "ok", type, answer.ticket.label, typeName(answer.ticket.ticket_type));
  } catch (e) {
    if (!unreachable(e)) return refused(e, false, type, "");
    wentOffline();
    return show(false, "offline_code", type, "", "", "A typed code is checked by the server: scan the QR code, or try again when the connection returns.");
  }
}

// The server's refusal, said; an entry it knows of is remembered here too, for when the
// connection goes.
function refused(e, camera, type, secret) {
  if (e.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    return signIn("The key is no longer valid: sign in again.");
  }
  const code = e.status === 422 ? "ticket_invalid" : e.code;
  const parsed = code === "ticket_invalid" ? null : parseSecret(secret);
  if (code === "already_redeemed" && e.body.first && parsed) {
    scan.door.inAlready(parsed.payload.tid, e.body.first.at, e.body.first.gate);
  }
  return show(camera, code, type, parsed ? labelOf(parsed.payload) : "", "", "", e.body.first);
}

function typeName(code) {
  const t = scan.event.ticket_types.find((k) => k.code === code);
  return t ? t.name : code || "";
}

// The ticket type a secret names: by code (JSON) or by its index among the event's
// types (compact; none for a place whose type is its area).
function typeOf(payload) {
  if (payload.typeIndex === undefined) return typeName(payload.type);
  const t = payload.typeIndex === null ? null : scan.event.ticket_types[payload.typeIndex];
  return t ? t.name : "";
}

function labelOf(payload) {
  if (payload.seatIndex !== undefined) {
    const seat = scan.seats[payload.seatIndex];
    return seat ? seat.label : "Seat " + (payload.seatIndex + 1);
  }
  if (payload.areaIndex !== undefined) {
    const area = scan.event.ga_areas[payload.areaIndex];
    return area ? area.name : "";
  }
  if (payload.seat) return scan.labels.get(payload.seat) || payload.seat;
  const area = scan.event.ga_areas.find((a) => a.code === payload.area);
  return area ? area.name : payload.area || "";
}

const clock = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", hourCycle: "h23" });

// What an answer says, full screen and in the last scans.
function show(camera, result, type, label, typeText, note = "", first = null) {
  let kind = "no", title, detail = label;
  if (result === "ok") {
    kind = "ok";
    title = type === "exit" ? "Out" : "Valid";
    detail = [label, typeText].filter(Boolean).join(" · ");
  } else if (result === "already_redeemed") {
    kind = "already";
    title = "Already in";
    const since = first && first.at ? "since " + clock.format(new Date(first.at)) + (first.gate ? ` (${first.gate})` : "") : "";
    detail = [since, label].filter(Boolean).join(" · ");
  } else if (result === "ticket_revoked") {
    title = "Revoked";
  } else if (result === "ticket_invalid") {
    title = "Not a ticket";
    detail = "";
  } else if (result === "wrong_event") {
    title = "Another event";
    detail = "";
  } else if (result === "offline_code") {
    kind = "warn";
    title = "Not checked";
    detail = "";
  } else {
    kind = "warn";
    title = "Not checked";
    detail = "The server refused: " + result;
  }
  const box = $("answer");
  box.dataset.kind = kind;
  box.dataset.result = result;
  $("answer-title").textContent = title;
  $("answer-detail").textContent = detail;
  $("answer-note").textContent = note;
  box.hidden = false;
  $("answer-next").focus();
  clearTimeout(scan.answerTimer);
  if (camera && kind === "ok") scan.answerTimer = setTimeout(hideAnswer, GREEN_SHOWN_MS);

  const li = document.createElement("li");
  li.dataset.kind = kind;
  li.dataset.result = result;
  const at = document.createElement("time");
  at.textContent = clock.format(new Date());
  li.append(at, [title, detail].filter(Boolean).join(" · ") + (note ? " (offline)" : ""));
  const recent = $("recent");
  recent.dataset.scans = String(Number(recent.dataset.scans || 0) + 1);
  recent.prepend(li);
  while (recent.children.length > 8) recent.lastElementChild.remove();
}

function hideAnswer() {
  clearTimeout(scan.answerTimer);
  if ($("answer").hidden) return;
  $("answer").hidden = true;
  if (!scan.cameraOn) $("typed-secret").focus();
}

// ---- the camera ----

async function startCamera() {
  const on = await watch($("video"), {
    failed: (why) => { $("camera-state").textContent = why; },
    paused: () => !$("answer").hidden,
    read: (text) => check(text, true),
  });
  if (!on) return;
  document.body.dataset.decoder = on;
  $("camera").parentElement.dataset.on = "true";
  scan.cameraOn = true;
}

// ---- start ----

async function start() {
  scan.eventId = new URLSearchParams(location.search).get("event");
  // A phone paired from the console opens `/scan?event=<id>#key=<key>`: the key (in the
  // fragment, which no server sees) signs it in and leaves the address and history at once.
  const paired = new URLSearchParams(location.hash.slice(1)).get("key");
  if (paired) sessionStorage.setItem(TOKEN_KEY, paired);
  if (paired) history.replaceState(null, "", location.pathname + location.search);
  if (!token()) return signIn();
  try {
    if (scan.eventId) await openEvent(scan.eventId);
    else await chooseEvent();
  } catch (e) {
    if (e instanceof Problem && e.status === 401) {
      sessionStorage.removeItem(TOKEN_KEY);
      return signIn("The key is no longer valid: sign in again.");
    }
    const fatal = $("fatal");
    fatal.hidden = false;
    fatal.textContent = e instanceof Problem && e.status === 404 ? "No such event."
      : e instanceof Problem && e.status === 403 ? "This key may not check tickets in for this event."
      : "Could not load: " + e.message;
  }
}

start();
