// What the console's screens share: signing in (with any key or the server's admin token,
// kept in sessionStorage for this browser session only, never in localStorage or a URL),
// who signed in and what their role may do (`GET /v1/me`), the organization the screens
// show (a platform key picks one), calls to the API with the key, moving between screens,
// problems shown as the organizer reads them, the confirmation dialog and downloads.

import { Problem, request } from "../core/api.js";
import { esc, money as formatMoney, eventTime } from "../core/format.js";

const TOKEN_KEY = "boxoffice.console.token";
const ORGANIZATION_KEY = "boxoffice.console.organization";

export const $ = (id) => document.getElementById(id);

export const money = (cents, currency) => formatMoney(cents, currency, "en");
// A time as every screen writes it: in `zone` (an event's), or else the browser's own.
export const when = (iso, zone) => eventTime(iso, zone);

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

// ---- who signed in ----

// The key signed in with, as `GET /v1/me` tells: `{key_id, name, role, organization_id,
// rights}`; read once per page load.
let me = null;

export async function whoAmI() {
  me ??= await api("GET", "/v1/me");
  return me;
}

// Whether the signed-in key's role has `right` (`write_catalog`, `change_orders`, …): the
// server's table decides, and the console shows only what it allows.
export function may(right) {
  return !!me && me.rights.includes(right);
}

// The organization the screens show: a key's own, or the one a platform key picked.
export function organization() {
  if (!me) return null;
  return me.role === "platform" ? sessionStorage.getItem(ORGANIZATION_KEY) : me.organization_id;
}

export function pickOrganization(id) {
  if (id) sessionStorage.setItem(ORGANIZATION_KEY, id);
  else sessionStorage.removeItem(ORGANIZATION_KEY);
}

// `path` with `?organization=` (or `&organization=`) naming the organization shown.
export function ofOrganization(path) {
  return `${path}${path.includes("?") ? "&" : "?"}organization=${encodeURIComponent(organization())}`;
}

// A call to the API as the admin. A 401 signs out; any other failure throws the Problem.
export async function api(method, path, options = {}) {
  try {
    return await request(method, path, { ...options, token: token() });
  } catch (e) {
    if (e instanceof Problem && e.status === 401) signOut("Your session has ended: sign in again.");
    throw e;
  }
}

// A problem document as the organizer reads it: what went wrong, and each field at fault.
export function errorBox(e) {
  const fields = (e.body && e.body.errors) || [];
  const list = fields.length
    ? `<ul>${fields.map((f) => `<li>${f.field ? `<code>${esc(f.field)}</code>: ` : ""}${esc(f.message)}</li>`).join("")}</ul>`
    : "";
  return `<div class="error" role="alert"><p>${esc(e.message)}</p>${list}</div>`;
}

// ---- screens ----

// What the current screen must stop when another is shown (its event stream, timers).
let leaving = null;

export function onLeave(stop) {
  leaving = stop;
}

export function leave() {
  if (leaving) leaving();
  leaving = null;
}

export function screen(title, html) {
  document.title = `${title} · Boxoffice console`;
  $("app").innerHTML = html;
}

// Moves to the console's `path`, as a link would.
export function go(path) {
  history.pushState(null, "", path);
  window.dispatchEvent(new PopStateEvent("popstate"));
}

// ---- signing in ----

export function signIn(message) {
  $("nav").hidden = true;
  screen("Sign in", `<section class="card signin" aria-labelledby="signin-title">
    <h1 id="signin-title">Sign in</h1>
    <p class="hint">Sign in with your key (it starts with <code>bxk_</code>) or this server's admin token. It is kept for this browser session only.</p>
    <form id="signin" class="form">
      <label>Key <input name="admin_token" type="password" autocomplete="off" required></label>
      <p id="signin-error" class="error" role="alert" ${message ? "" : "hidden"}>${esc(message)}</p>
      <button type="submit">Sign in</button>
    </form></section>`);
  $("signin").onsubmit = async (e) => {
    e.preventDefault();
    const value = e.target.admin_token.value.trim();
    const error = $("signin-error");
    try {
      me = await request("GET", "/v1/me", { token: value });
      sessionStorage.setItem(TOKEN_KEY, value);
      pickOrganization(null);
      go(location.pathname + location.search);
    } catch (err) {
      error.hidden = false;
      error.textContent = !(err instanceof Problem) || err.status === 0 || err.status >= 500
        ? "The server did not answer: try again."
        : err.status === 403
          ? "That is a buyer's token, not a key."
          : "That key is not valid here: unknown, revoked or expired.";
    }
  };
}

export function signOut(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  pickOrganization(null);
  me = null;
  leave();
  if (location.pathname !== "/admin") history.pushState(null, "", "/admin");
  signIn(message);
}

// ---- dialogs and files ----

// Asks before an action that cannot be undone; resolves to whether the organizer agreed.
export function confirmDialog(title, text, yes) {
  const dialog = $("confirm");
  $("confirm-title").textContent = title;
  $("confirm-text").textContent = text;
  $("confirm-yes").textContent = yes;
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "yes"), { once: true });
  });
}

export function download(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// ---- ticket types ----

// Adds a row for one ticket type (code, name, price in major units, currency) to the
// fieldset `types`; `hint` names the code's hint uniquely on the page.
export function addTicketType(types, code, name, price, hint) {
  const n = types.querySelectorAll(".row").length + 1;
  types.insertAdjacentHTML("beforeend", `<div class="row">
    <label>Code <input name="type_code" value="${esc(code)}" pattern="[A-Za-z0-9_]{1,32}" aria-describedby="${hint}-${n}"><span class="hint" id="${hint}-${n}">Letters, digits, _</span></label>
    <label>Name <input name="type_name" value="${esc(name)}"></label>
    <label>Price <input name="type_price" type="number" min="0" step="0.01" value="${esc(price)}"></label>
    <label>Currency <input name="type_currency" value="EUR" maxlength="3" size="4"></label></div>`);
}

// The ticket types of `form`'s rows, as the API takes them (rows left empty skipped).
export function ticketTypes(form) {
  const all = (name) => [...form.querySelectorAll(`[name=${name}]`)].map((i) => i.value.trim());
  const [codes, names, prices, currencies] = ["type_code", "type_name", "type_price", "type_currency"].map(all);
  return codes.map((code, i) => ({ code, name: names[i], price_cents: Math.round(Number(prices[i]) * 100), currency: currencies[i].toUpperCase() }))
    .filter((t) => t.code || t.name);
}
