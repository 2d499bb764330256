// The organization's keys, its buyer-token signing keys and its webhook: a new key or
// secret is shown once, with a copy button; revoking a key, retiring a signing key and
// removing the webhook each ask first.

import { esc } from "../core/format.js";
import { $, api, errorBox, screen, confirmDialog, when, whoAmI, organization } from "./shared.js";

const ROLES = {
  admin: "everything in the organization",
  sales: "orders: cancel, payments, releases",
  checkin: "lets tickets in",
  reports: "reads only",
};

// A secret shown this once: the words "shown once", the value, and a copy button.
function shownOnce(what, value, label) {
  return `<div class="ok made" role="status">
    <p><strong>Copy ${esc(what)} now: it is shown once.</strong> It is not kept where anyone can read it again.</p>
    <div class="secret"><code id="${label}">${esc(value)}</code>
      <button type="button" data-action="copy" data-copy="${label}">Copy</button></div>
    <p class="hint" aria-live="polite" data-copied="${label}"></p></div>`;
}

// Copies the text of the element a copy button names; says whether it could.
async function copy(button) {
  const id = button.dataset.copy;
  const said = document.querySelector(`[data-copied="${id}"]`);
  try {
    await navigator.clipboard.writeText($(id).textContent);
    said.textContent = "Copied.";
  } catch {
    const range = document.createRange();
    range.selectNodeContents($(id));
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    said.textContent = "Selected: press Ctrl+C (or ⌘C) to copy.";
  }
}

const lastUse = (k) => (k.last_used_at ? `used ${when(k.last_used_at)}` : "never used");

function keyItem(k) {
  const state = k.revoked_at
    ? `<span class="status-cancelled">revoked ${esc(when(k.revoked_at))}</span>`
    : k.expires_at && new Date(k.expires_at) <= new Date()
      ? `<span class="status-expired">expired ${esc(when(k.expires_at))}</span>`
      : `${esc(lastUse(k))}${k.expires_at ? ` · expires ${esc(when(k.expires_at))}` : ""}`;
  return `<li data-key-id="${esc(k.id)}"><div><strong>${esc(k.name)}</strong> · <span data-role="${esc(k.role)}">${esc(k.role)}</span>
      <div class="meta"><code>bxk_${esc(k.prefix)}…</code> · ${state}</div></div>
    ${k.revoked_at ? "" : `<button type="button" data-action="revoke" aria-label="Revoke the key ${esc(k.name)}">Revoke</button>`}</li>`;
}

function signingKeyItem(k) {
  return `<li data-kid="${esc(k.kid)}"><div><code>${esc(k.kid)}</code> · ${esc(k.algorithm)}
      <div class="meta">added ${esc(when(k.created_at))}${k.retired_at ? ` · <span class="status-cancelled">retired ${esc(when(k.retired_at))}</span>` : ""}</div></div>
    ${k.retired_at ? "" : `<button type="button" data-action="retire" aria-label="Retire the signing key ${esc(k.kid)}">Retire</button>`}</li>`;
}

export async function keysScreen() {
  const me = await whoAmI();
  const base = `/v1/organizations/${encodeURIComponent(organization())}`;
  const roles = me.role === "platform" ? { platform: "everything, in every organization", ...ROLES } : ROLES;
  screen("Keys", `<h1>Keys</h1>
    <section class="card" aria-labelledby="keys-title">
      <div class="head"><h2 id="keys-title">Keys</h2><p class="meta">Staff and servers call with a key. Several live at once: make the new one, move the clients, revoke the old.</p></div>
      <form id="new-key" class="form inline">
        <label>Name <input name="name" required maxlength="100" autocomplete="off" placeholder="Box office, front desk"></label>
        <label>Role <select name="role">${Object.entries(roles).map(([role, what]) =>
          `<option value="${role}" ${role === "sales" ? "selected" : ""}>${role}: ${esc(what)}</option>`).join("")}</select></label>
        <label>Expires <input name="expires_on" type="date" aria-describedby="expires-hint"><span class="hint" id="expires-hint">Optional: it stops at the end of that day (UTC)</span></label>
        <button type="submit">New key</button>
      </form>
      <div id="key-result" aria-live="polite"></div>
      <ul id="keys" class="list"></ul>
    </section>
    <section class="card" aria-labelledby="signing-title">
      <div class="head"><h2 id="signing-title">Signing keys for buyers' tokens</h2><p class="meta">The platform signs its buyers' tokens with one of these, named by <code>kid</code>.</p></div>
      <form id="new-signing-key" class="form inline">
        <label>Algorithm <select name="algorithm"><option value="HS256">HS256: a secret made here</option><option value="EdDSA">EdDSA: the platform's Ed25519 public key</option></select></label>
        <label id="public-key-label" hidden>Public key (PEM) <textarea name="public_key" rows="4" cols="48" placeholder="-----BEGIN PUBLIC KEY-----"></textarea></label>
        <button type="submit">Add signing key</button>
      </form>
      <div id="signing-result" aria-live="polite"></div>
      <ul id="signing-keys" class="list"></ul>
    </section>
    <section class="card" aria-labelledby="webhook-title">
      <div class="head"><h2 id="webhook-title">Webhook</h2><p class="meta">Orders and bookings are posted here, signed with its secret, in the order they happened.</p></div>
      <p id="webhook-now"></p>
      <form id="webhook-form" class="form inline">
        <label>URL <input name="url" type="url" required placeholder="https://platform.example/webhooks/boxoffice" size="40"></label>
        <label>Secret <input name="secret" autocomplete="off" minlength="16" aria-describedby="secret-hint"><span class="hint" id="secret-hint">Optional: leave empty to have one made</span></label>
        <button type="submit">Save webhook</button>
        <button type="button" id="remove-webhook" hidden>Remove webhook</button>
      </form>
      <div id="webhook-result" aria-live="polite"></div>
    </section>`);

  const keys = async () => {
    const list = (await api("GET", `${base}/keys`)).keys;
    $("keys").innerHTML = list.length ? list.slice().reverse().map(keyItem).join("") : `<li class="hint">No keys yet.</li>`;
  };
  const signingKeys = async () => {
    const list = (await api("GET", `${base}/signing-keys`)).signing_keys;
    $("signing-keys").innerHTML = list.length ? list.slice().reverse().map(signingKeyItem).join("")
      : `<li class="hint">None: buyers' tokens are checked with the server's own secret (the default organization) only.</li>`;
  };
  const webhook = async () => {
    try {
      const hook = await api("GET", `${base}/webhook`);
      $("webhook-now").innerHTML = `Posting to <code data-webhook-url>${esc(hook.url)}</code>, set ${esc(when(hook.updated_at))}.`;
      document.querySelector("#webhook-form [name=url]").value = hook.url;
      $("remove-webhook").hidden = false;
    } catch (e) {
      if (e.status !== 404) throw e;
      $("webhook-now").textContent = "No webhook: orders and bookings wait for one (up to 7 days).";
      $("remove-webhook").hidden = true;
    }
  };

  $("new-key").onsubmit = async (e) => {
    e.preventDefault();
    const form = e.target;
    const body = { name: form.name.value.trim(), role: form.role.value };
    if (form.expires_on.value) body.expires_at = `${form.expires_on.value}T23:59:59Z`;
    try {
      const made = await api("POST", `${base}/keys`, { json: body });
      $("key-result").innerHTML = shownOnce(`the key “${made.name}”`, made.key, "new-key-value");
      form.reset();
      await keys();
    } catch (err) {
      $("key-result").innerHTML = errorBox(err);
    }
  };
  $("keys").onclick = async (e) => {
    const button = e.target.closest("[data-action=revoke]");
    if (!button) return;
    const item = button.closest("[data-key-id]");
    const name = item.querySelector("strong").textContent;
    const yes = await confirmDialog(`Revoke the key “${name}”?`,
      "Calls made with it are refused on every server within a second. This cannot be undone: a client that still uses it needs a new key.",
      "Revoke the key");
    if (!yes) return;
    try {
      await api("DELETE", `${base}/keys/${encodeURIComponent(item.dataset.keyId)}`);
      $("key-result").innerHTML = `<p class="ok" role="status">The key “${esc(name)}” is revoked.</p>`;
      await keys();
    } catch (err) {
      $("key-result").innerHTML = errorBox(err);
    }
  };

  const algorithm = document.querySelector("#new-signing-key [name=algorithm]");
  algorithm.onchange = () => { $("public-key-label").hidden = algorithm.value !== "EdDSA"; };
  $("new-signing-key").onsubmit = async (e) => {
    e.preventDefault();
    const body = { algorithm: algorithm.value };
    if (algorithm.value === "EdDSA") body.public_key = e.target.public_key.value.trim();
    try {
      const made = await api("POST", `${base}/signing-keys`, { json: body });
      $("signing-result").innerHTML = made.secret
        ? shownOnce(`the secret of ${made.kid}`, made.secret, "new-signing-secret")
        : `<p class="ok" role="status">Added <code>${esc(made.kid)}</code>: tokens the platform signs with its private key and this <code>kid</code> are accepted.</p>`;
      e.target.reset();
      $("public-key-label").hidden = true;
      await signingKeys();
    } catch (err) {
      $("signing-result").innerHTML = errorBox(err);
    }
  };
  $("signing-keys").onclick = async (e) => {
    const button = e.target.closest("[data-action=retire]");
    if (!button) return;
    const kid = button.closest("[data-kid]").dataset.kid;
    const yes = await confirmDialog(`Retire the signing key ${kid}?`,
      "Buyers' tokens signed with it are refused on every server within a second. This cannot be undone.",
      "Retire the key");
    if (!yes) return;
    try {
      await api("DELETE", `${base}/signing-keys/${encodeURIComponent(kid)}`);
      $("signing-result").innerHTML = `<p class="ok" role="status"><code>${esc(kid)}</code> is retired.</p>`;
      await signingKeys();
    } catch (err) {
      $("signing-result").innerHTML = errorBox(err);
    }
  };

  $("webhook-form").onsubmit = async (e) => {
    e.preventDefault();
    const body = { url: e.target.url.value.trim() };
    const secret = e.target.secret.value.trim();
    if (secret) body.secret = secret;
    try {
      const set = await api("PUT", `${base}/webhook`, { json: body });
      $("webhook-result").innerHTML = shownOnce("the webhook's secret", set.secret, "webhook-secret");
      e.target.secret.value = "";
      await webhook();
    } catch (err) {
      $("webhook-result").innerHTML = errorBox(err);
    }
  };
  $("remove-webhook").onclick = async () => {
    const yes = await confirmDialog("Remove the webhook?",
      "Orders and bookings are no longer posted; they wait (up to 7 days) until a webhook is set again.",
      "Remove the webhook");
    if (!yes) return;
    try {
      await api("DELETE", `${base}/webhook`);
      $("webhook-result").innerHTML = `<p class="ok" role="status">The webhook is removed.</p>`;
      document.querySelector("#webhook-form [name=url]").value = "";
      await webhook();
    } catch (err) {
      $("webhook-result").innerHTML = errorBox(err);
    }
  };
  for (const result of ["key-result", "signing-result", "webhook-result"]) {
    $(result).onclick = (e) => {
      const button = e.target.closest("[data-action=copy]");
      if (button) copy(button);
    };
  }

  await Promise.all([keys(), signingKeys(), webhook()]);
}
