// What the scanner decides without the server, and what it owes the server afterwards.
// A ticket's secret is taken apart and its Ed25519 signature checked against the event's
// entry keys with WebCrypto; the revocation list and the entries this scanner saw decide
// the rest. A secret is compact (`BX2:` and base45 of fixed fields, docs/api.md "Compact
// secrets") or, for tickets issued before, JSON (`bx1.<payload>.<signature>`). Check-ins
// made offline wait in a queue kept in storage (the browser's localStorage, or anything
// with getItem and setItem) and are uploaded with `force` when the server answers again.
// No DOM here: Node's test runner runs this module as it is.

export const PREFIX = "bx1.";
export const COMPACT_PREFIX = "BX2:";

// A compact secret's length: the prefix and base45 of 108 bytes (44 of fields, 64 of
// signature).
export const COMPACT_LEN = 166;
const COMPACT_FIELDS = 44;

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

const BASE45 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:";

// Base45 (RFC 9285) to bytes; null when it is not: a character outside the set, a length
// of 1 modulo 3, or a group past its bytes' range.
export function fromBase45(text) {
  if (typeof text !== "string" || text.length % 3 === 1) return null;
  const out = [];
  for (let i = 0; i < text.length; i += 3) {
    const group = text.slice(i, i + 3);
    let n = 0;
    for (let j = group.length - 1; j >= 0; j--) {
      const d = BASE45.indexOf(group[j]);
      if (d < 0) return null;
      n = n * 45 + d;
    }
    if (group.length === 3) {
      if (n > 0xffff) return null;
      out.push(n >> 8, n & 0xff);
    } else {
      if (n > 0xff) return null;
      out.push(n);
    }
  }
  return Uint8Array.from(out);
}

const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
const uuid = (bytes) => {
  const h = hex(bytes);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

// A compact secret's fields: `{tid, eid, keyTag, iat, seatIndex | areaIndex, typeIndex}`
// (`typeIndex` null for a place whose type is its area).
function compactPayload(b) {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const place = view.getUint32(38);
  const type = view.getUint16(42);
  const payload = {
    tid: uuid(b.subarray(0, 16)),
    eid: uuid(b.subarray(16, 32)),
    keyTag: [b[32], b[33]],
    iat: view.getUint32(34),
    typeIndex: type === 0xffff ? null : type,
  };
  if (place & 0x80000000) payload.areaIndex = place & 0x7fffffff;
  else payload.seatIndex = place;
  // A seat's type is always one of the event's: the reserved value goes with areas only.
  if (payload.seatIndex !== undefined && payload.typeIndex === null) return null;
  return payload;
}

// A secret taken apart, its signature not checked yet: `{payload, bytes, signature}`
// (`bytes` what the signature covers), or null when it is not shaped as one (truncated,
// not base64url or base45 as written, not a payload, a signature of the wrong length).
// A JSON payload has `kid`, `tid`, `eid`, `seat`, `area`, `type` and `iat`; a compact
// one, those of compactPayload.
export function parseSecret(secret) {
  if (typeof secret !== "string" || secret.length > MAX_SECRET_LEN) return null;
  if (secret.startsWith(COMPACT_PREFIX)) {
    if (secret.length !== COMPACT_LEN) return null;
    const all = fromBase45(secret.slice(COMPACT_PREFIX.length));
    if (!all || all.length !== COMPACT_FIELDS + 64) return null;
    const fields = all.subarray(0, COMPACT_FIELDS);
    const payload = compactPayload(fields);
    if (!payload) return null;
    const bytes = new Uint8Array(COMPACT_PREFIX.length + COMPACT_FIELDS);
    bytes.set(new TextEncoder().encode(COMPACT_PREFIX));
    bytes.set(fields, COMPACT_PREFIX.length);
    return { payload, bytes, signature: all.slice(COMPACT_FIELDS) };
  }
  if (!secret.startsWith(PREFIX)) return null;
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

// The entry keys of `GET …/entry/keys` as WebCrypto keys, by kid: `{key, raw}` (`raw` the
// public key's bytes). A key the browser cannot import is left out (its tickets then read
// as not checkable offline).
export async function importKeys(keys, subtle = globalThis.crypto.subtle) {
  const imported = new Map();
  for (const k of keys) {
    const raw = fromBase64Url(k.public_key);
    if (!raw || raw.length !== 32) continue;
    try {
      imported.set(k.kid, { key: await subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]), raw });
    } catch (_) { /* not this browser's */ }
  }
  return imported;
}

// Whether one of `keys` (from importKeys) signed the parsed secret: the key it names
// (JSON), or each whose public key starts with its key tag (compact).
export async function signedBy(parsed, keys, subtle = globalThis.crypto.subtle) {
  const { payload } = parsed;
  const candidates = payload.keyTag
    ? [...keys.values()].filter((k) => k.raw[0] === payload.keyTag[0] && k.raw[1] === payload.keyTag[1])
    : [keys.get(payload.kid)].filter(Boolean);
  for (const k of candidates) {
    try {
      if (await subtle.verify({ name: "Ed25519" }, k.key, parsed.signature, parsed.bytes)) return true;
    } catch (_) { /* not this key */ }
  }
  return false;
}

// A typed ticket code (`7KQF-2M9X-PD`: 10 characters of Crockford's base32, dashes,
// spaces and case ignored), as the server takes it; null when the text is not one.
export function typedCode(text) {
  if (typeof text !== "string") return null;
  const code = text.replace(/[-\s]/g, "").toUpperCase().replace(/[IL]/g, "1").replace(/O/g, "0");
  return /^[0-9A-HJKMNP-TV-Z]{10}$/.test(code) ? code : null;
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
