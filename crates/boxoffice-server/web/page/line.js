// The waiting room: an event whose queue is on shows the line first (the buyer's place and
// the estimated wait, polled), and the map once the buyer's turn comes; the pass is kept
// for the page's holds and shown counting down.

import { Problem } from "../core/api.js";
import { aboutMinutes, countdown, eventClock } from "../core/format.js";
import { $, state, api, say } from "./shared.js";

const PASS_KEY = "boxoffice.pass.";   // + event id: {ticket, pass, expires_at}
const POLL_MS = 2000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function savedPass() {
  try {
    const saved = JSON.parse(localStorage.getItem(PASS_KEY + state.event.id) || "null");
    if (saved && Date.parse(saved.expires_at) - Date.now() > 5_000) return saved;
  } catch (_) { /* none */ }
  return null;
}

// Joins the event's line (or finds this buyer's ticket) and polls it until admitted,
// showing the place and the estimated wait.
export async function waitForTurn() {
  state.pass = savedPass();
  if (state.pass) return;
  const e = state.event;
  $("event").hidden = true;
  const screen = $("waiting");
  screen.hidden = false;
  $("waiting-name").textContent = e.name;
  const base = `/v1/events/${e.id}/queue`;
  let ticket = null, first = null;
  for (;;) {
    let standing;
    try {
      if (!ticket) ticket = (await api("POST", base)).ticket;
      standing = await api("GET", `${base}/${ticket}`);
    } catch (err) {
      if (err instanceof Problem && (err.code === "ticket_not_found" || err.code === "ticket_invalid")) {
        ticket = null;
        continue;
      }
      // The line is not open (any more): the sale is open to all.
      if (err instanceof Problem && err.code === "queue_not_found") break;
      $("waiting-estimate").textContent = "Reconnecting to the waiting room…";
      await sleep(POLL_MS);
      continue;
    }
    // Joined before the opening: the line answers the ticket again with its place.
    if (standing.ticket) ticket = standing.ticket;
    screen.dataset.ticket = ticket;
    if (standing.admitted) {
      state.pass = { ticket, pass: standing.pass, expires_at: standing.pass_expires_at };
      localStorage.setItem(PASS_KEY + e.id, JSON.stringify(state.pass));
      break;
    }
    const position = standing.position;
    screen.dataset.position = position ?? "";
    if (position === null || position === undefined) {
      $("waiting-position").textContent = "The sale opens at " + eventClock(e.queue.opens_at, e.time_zone);
      $("waiting-estimate").textContent = "Everyone here before then gets a random place in line when it opens: there is no need to hurry.";
    } else {
      first ??= position;
      $("waiting-position").textContent = position === 1
        ? "You are next in line"
        : `You are number ${position.toLocaleString()} in line`;
      $("waiting-estimate").textContent = "Estimated wait: " + aboutMinutes(standing.estimated_wait_seconds);
      $("waiting-progress").style.width = `${Math.round(100 * (1 - (position - 1) / Math.max(first, 1)))}%`;
    }
    // Spread, so pages that arrived together do not poll together.
    await sleep(POLL_MS * (0.75 + Math.random() / 2));
  }
  screen.hidden = true;
  $("event").hidden = false;
  say("");
}

// The pass was refused or ended: back to the line, then on with the map.
export async function backInLine(text) {
  state.pass = null;
  localStorage.removeItem(PASS_KEY + state.event.id);
  await waitForTurn();
  say(text, "warn");
  renderPass();
}

// The pass ended on the server (a checkout, or the last hold released).
export function passEnded() {
  if (!state.pass) return;
  state.pass = null;
  localStorage.removeItem(PASS_KEY + state.event.id);
  renderPass();
}

export function renderPass() {
  const info = $("pass-info");
  const left = state.pass ? Date.parse(state.pass.expires_at) - Date.now() : 0;
  if (state.pass && left <= 0) passEnded();
  info.hidden = !state.pass;
  if (!state.pass) return;
  $("pass-left").textContent = countdown(left / 1000);
}

// A refusal that means the buyer's turn is over.
export function turnOver(e) {
  return e instanceof Problem && e.code === "queue_required";
}
