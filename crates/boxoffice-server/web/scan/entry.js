// What the scanner decides without the server, and what it owes the server afterwards.
// A ticket's secret (`bx1.<payload>.<signature>`) is taken apart and its Ed25519 signature
// checked against the event's entry keys with WebCrypto; the revocation list and the
// entries this scanner saw decide the rest. Check-ins made offline wait in a queue kept
// in storage (the browser's localStorage, or anything with getItem and setItem) and are
// uploaded with `force` when the server answers again. No DOM here: Node's test runner
// runs this module as it is.

export const PREFIX = "bx1.";

// Longest secret looked at, as the server does.
export const MAX_SECRET_LEN = 1000;

// base64url without padding to bytes; null when it is not, or not as the server writes it
// (unused bits set in the last character: the server refuses those too).
export function fromBase64Url(text) {
  if (typeof text !== "string" || !/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  const plain = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  const binary = atob(plain);
  if (btoa(binary) !== plain) return null;
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

// A secret taken apart, its signature not checked yet: `{payload, bytes, signature}`, or
// null when it is not shaped as one (truncated, not base64url, not a payload, a signature
// of the wrong length).
export function parseSecret(secret) {
  if (typeof secret !== "string" || secret.length > MAX_SECRET_LEN || !secret.startsWith(PREFIX)) return null;
  const parts = secret.slice(PREFIX.length).split(".");
  if (parts.length !== 2) return null;
  const bytes = fromBase64Url(parts[0]);
  const signature = fromBase64Url(parts[1]);
  if (!bytes || !signature || signature.length !== 64) return null;
  let payload;
  try {
    payload = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (_) {
    return null;
  }
  const ok = payload && typeof payload === "object"
    && typeof payload.kid === "string" && typeof payload.tid === "string"
    && typeof payload.eid === "string" && typeof payload.type === "string"
    && Number.isInteger(payload.iat);
  return ok ? { payload, bytes, signature } : null;
}

// The entry keys of `GET …/entry/keys` as WebCrypto keys, by kid. A key the browser cannot
// import is left out (its tickets then read as not checkable offline).
export async function importKeys(keys, subtle = globalThis.crypto.subtle) {
  const imported = new Map();
  for (const k of keys) {
    const raw = fromBase64Url(k.public_key);
    if (!raw || raw.length !== 32) continue;
    try {
      imported.set(k.kid, await subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]));
    } catch (_) { /* not this browser's */ }
  }
  return imported;
}

// Whether one of `keys` (from importKeys) signed the parsed secret.
export async function signedBy(parsed, keys, subtle = globalThis.crypto.subtle) {
  const key = keys.get(parsed.payload.kid);
  if (!key) return false;
  try {
    return await subtle.verify({ name: "Ed25519" }, key, parsed.signature, parsed.bytes);
  } catch (_) {
    return false;
  }
}

// What this scanner knows of the door, kept across reloads: the entries it saw (by ticket
// id: `{at, gate, inside}`), the tickets revoked (by ticket id: when), up to when the
// revocation list was read, and the check-ins waiting to be uploaded.
export class Door {
  constructor(storage, eventId) {
    this.storage = storage;
    this.name = "boxoffice.scan." + eventId;
    let kept = null;
    try { kept = JSON.parse(storage.getItem(this.name) || "null"); } catch (_) { kept = null; }
    this.entries = kept?.entries || {};
    this.revoked = kept?.revoked || {};
    this.asOf = kept?.asOf || null;
    this.queue = kept?.queue || [];
  }

  save() {
    this.storage.setItem(this.name, JSON.stringify({
      entries: this.entries, revoked: this.revoked, asOf: this.asOf, queue: this.queue,
    }));
  }

  // A ticket passed: in (`entry`) or out (`exit`), at `at` (ISO), through `gate`.
  passed(ticketId, type, at, gate) {
    const seen = this.entries[ticketId];
    if (type === "exit") {
      if (seen) seen.inside = false;
    } else if (!seen || !seen.inside) {
      this.entries[ticketId] = { at, gate: gate || null, inside: true };
    }
    this.save();
  }

  // The server said the ticket is in already, since `at` through `gate`.
  inAlready(ticketId, at, gate) {
    this.entries[ticketId] = { at, gate: gate || null, inside: true };
    this.save();
  }

  // An answer of `GET …/entry/revoked`.
  revocations({ revoked, as_of }) {
    for (const r of revoked) this.revoked[r.ticket_id] = r.revoked_at;
    this.asOf = as_of;
    this.save();
  }

  // A check-in made offline, to upload later.
  owe(checkin) {
    this.queue.push(checkin);
    this.save();
  }

  settled(nonce) {
    this.queue = this.queue.filter((c) => c.nonce !== nonce);
    this.save();
  }
}

// What the scanner answers a secret on its own: `{result, payload?, first?}`, `result` one
// of the server's: `ok`, `already_redeemed` (with `first: {at, gate}`), `ticket_revoked`,
// `ticket_invalid`, `wrong_event`. `keys` from importKeys; `reentry` the event's setting;
// `type` entry or exit.
export async function judge(secret, { eventId, keys, door, reentry = false, type = "entry", subtle }) {
  const parsed = parseSecret(secret);
  if (!parsed || !(await signedBy(parsed, keys, subtle))) return { result: "ticket_invalid" };
  const { payload } = parsed;
  if (payload.eid !== eventId) return { result: "wrong_event", payload };
  if (door.revoked[payload.tid]) return { result: "ticket_revoked", payload };
  const seen = door.entries[payload.tid];
  if (type === "entry" && seen && (seen.inside || !reentry)) {
    return { result: "already_redeemed", payload, first: { at: seen.at, gate: seen.gate } };
  }
  return { result: "ok", payload };
}

// Uploads the queue in order with `send(checkin)`, which answers the server's status (a
// thrown error or a status of 0, 429 or 5xx: the server is not reachable now; 401 or a 403
// other than `ticket_invalid`: the key is no longer let in). An answered check-in leaves
// the queue, whatever the answer (a duplicate is the organizer's to see); the first
// unanswered one stops the upload. Answers `{sent, duplicates, left}`.
export async function upload(door, send) {
  let sent = 0, duplicates = 0;
  for (const checkin of [...door.queue]) {
    let answer;
    try {
      answer = await send(checkin);
    } catch (_) {
      break;
    }
    const status = answer ? answer.status : 0;
    const refused = status === 401 || (status === 403 && answer.body?.code !== "ticket_invalid");
    if (status === 0 || status === 429 || status >= 500 || refused) break;
    door.settled(checkin.nonce);
    sent += 1;
    if (answer.body && answer.body.result === "duplicate") duplicates += 1;
  }
  return { sent, duplicates, left: door.queue.length };
}
