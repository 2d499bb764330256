// The scanner's offline judgement (web/scan/entry.js) under Node's test runner, with
// secrets signed here by WebCrypto as the server signs them: `node --test tests/js/`.

import { test } from "node:test";
import assert from "node:assert/strict";
import { webcrypto } from "node:crypto";
import { parseSecret, importKeys, judge, Door, upload, fromBase64Url, fromBase45, typedCode } from "../../web/scan/entry.js";

const subtle = webcrypto.subtle;
const EVENT = "6f1c1a52-8e1b-4c55-9a55-4d9c1f0b0a01";
const OTHER_EVENT = "6f1c1a52-8e1b-4c55-9a55-4d9c1f0b0a02";

const b64url = (bytes) => Buffer.from(bytes).toString("base64url");

// The test vector of docs/api.md ("Compact secrets"), as Rust's tickets::secret has it.
const VECTOR_PUBLIC = "6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw";
const VECTOR_SECRET = "BX2:HKFT0K2:59 92XJ5PB::FFLJDZ1SQ5/H9A-8F/M7TI:EE82C%RTFPDUOQ000B00100T%SZLHTS9NYJM0QIBP.3BD+I0NH/$EHQELFVRXMV3N-C8I 8E2QP31P2N88IA5K2IDGW2Y93J2JWY7:%JOCF%$L$JDB205G9";

class Memory {
  constructor() { this.items = new Map(); }
  getItem(k) { return this.items.has(k) ? this.items.get(k) : null; }
  setItem(k, v) { this.items.set(k, String(v)); }
}

async function entryKey(kid) {
  const pair = await subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  const raw = new Uint8Array(await subtle.exportKey("raw", pair.publicKey));
  return { kid, pair, listed: { kid, public_key: b64url(raw), created_at: "2026-12-01T00:00:00Z", retired_at: null } };
}

async function secretOf(key, payload) {
  const bytes = new TextEncoder().encode(JSON.stringify(payload));
  const signature = new Uint8Array(await subtle.sign({ name: "Ed25519" }, key.pair.privateKey, bytes));
  return "bx1." + b64url(bytes) + "." + b64url(signature);
}

function ticket(tid, eid = EVENT, kid = "ek_1") {
  return { kid, tid, eid, seat: "stalls-A-1", area: null, type: "standard", iat: 1_800_000_000 };
}

async function fixture() {
  const key = await entryKey("ek_1");
  const keys = await importKeys([key.listed], subtle);
  const door = new Door(new Memory(), EVENT);
  return { key, keys, door, at: { eventId: EVENT, keys, door, subtle } };
}

test("base64url decodes as the server encodes, and refuses anything else", () => {
  assert.deepEqual([...fromBase64Url("AQID")], [1, 2, 3]);
  assert.deepEqual([...fromBase64Url("-_8")], [251, 255]);
  assert.equal(fromBase64Url("AQ=="), null, "no padding");
  assert.equal(fromBase64Url("A+/B"), null, "not the URL alphabet");
  assert.equal(fromBase64Url("ABCDE"), null, "no such length");
  assert.deepEqual([...fromBase64Url("AQ")], [1]);
  assert.equal(fromBase64Url("AR"), null, "unused bits set: not as the server writes it");
});

test("a signed ticket of the event is let in once, then is inside", async () => {
  const { key, at, door } = await fixture();
  const secret = await secretOf(key, ticket("t-1"));
  const first = await judge(secret, at);
  assert.equal(first.result, "ok");
  assert.equal(first.payload.seat, "stalls-A-1");
  door.passed("t-1", "entry", "2026-12-05T19:02:00Z", "North");
  const second = await judge(secret, at);
  assert.equal(second.result, "already_redeemed");
  assert.deepEqual(second.first, { at: "2026-12-05T19:02:00Z", gate: "North" });
});

test("a forged, altered, truncated or foreign secret is not a ticket", async () => {
  const { key, at } = await fixture();
  const stranger = await entryKey("ek_1");
  const secret = await secretOf(key, ticket("t-1"));
  const [, payload, signature] = secret.split(".");
  const otherSeat = b64url(new TextEncoder().encode(JSON.stringify({ ...ticket("t-1"), seat: "stalls-A-2" })));
  const cases = {
    "signed by another key of the same kid": await secretOf(stranger, ticket("t-1")),
    "another seat under the signature": `bx1.${otherSeat}.${signature}`,
    "truncated": secret.slice(0, -3),
    "the signature's last character with unused bits set": secret.slice(0, -1) + (secret.endsWith("A") ? "B" : "A"),
    "no signature": `bx1.${payload}`,
    "another prefix": "bx2" + secret.slice(3),
    "not base64url": `bx1.${payload}!.${signature}`,
    "unknown kid": await secretOf(key, ticket("t-1", EVENT, "ek_9")),
    "too long": "bx1." + "A".repeat(1200) + "." + signature,
    "empty": "",
  };
  for (const [what, forged] of Object.entries(cases)) {
    assert.equal((await judge(forged, at)).result, "ticket_invalid", what);
  }
  assert.equal(parseSecret(`bx1.${b64url(new TextEncoder().encode("{\"kid\":1}"))}.${signature}`), null);
});

test("another event's ticket, and a revoked one, are said as such", async () => {
  const { key, at, door } = await fixture();
  const elsewhere = await secretOf(key, ticket("t-2", OTHER_EVENT));
  assert.equal((await judge(elsewhere, at)).result, "wrong_event");
  const secret = await secretOf(key, ticket("t-3"));
  door.revocations({ revoked: [{ ticket_id: "t-3", revoked_at: "2026-12-05T18:00:00Z" }], as_of: "2026-12-05T18:30:00Z" });
  assert.equal((await judge(secret, at)).result, "ticket_revoked");
  assert.equal(door.asOf, "2026-12-05T18:30:00Z");
});

test("a ticket that went out comes in again only where the event allows re-entry", async () => {
  const { key, at, door } = await fixture();
  const secret = await secretOf(key, ticket("t-4"));
  door.passed("t-4", "entry", "2026-12-05T19:00:00Z", null);
  door.passed("t-4", "exit", "2026-12-05T19:30:00Z", null);
  assert.equal((await judge(secret, at)).result, "already_redeemed");
  assert.equal((await judge(secret, { ...at, reentry: true })).result, "ok");
  assert.equal((await judge(secret, { ...at, type: "exit" })).result, "ok");
});

test("what the scanner knows survives a reload, one event's apart from another's", async () => {
  const storage = new Memory();
  const door = new Door(storage, EVENT);
  door.passed("t-5", "entry", "2026-12-05T19:00:00Z", "South");
  door.owe({ nonce: "n-1", secret: "bx1.a.b", type: "entry", scanned_at: "2026-12-05T19:00:00Z" });
  const again = new Door(storage, EVENT);
  assert.equal(again.entries["t-5"].gate, "South");
  assert.equal(again.queue.length, 1);
  assert.equal(new Door(storage, OTHER_EVENT).queue.length, 0);
});

test("the queue uploads in order, stops at the first unanswered check-in and keeps it", async () => {
  const door = new Door(new Memory(), EVENT);
  for (const n of ["n-1", "n-2", "n-3", "n-4"]) door.owe({ nonce: n, secret: "s", type: "entry" });
  const sent = [];
  const answers = {
    "n-1": { status: 201, body: { result: "ok" } },
    "n-2": { status: 201, body: { result: "duplicate" } },
    "n-3": { status: 503, body: null },
  };
  const first = await upload(door, async (c) => { sent.push(c.nonce); return answers[c.nonce]; });
  assert.deepEqual(first, { sent: 2, duplicates: 1, left: 2 });
  assert.deepEqual(sent, ["n-1", "n-2", "n-3"]);
  assert.deepEqual(door.queue.map((c) => c.nonce), ["n-3", "n-4"]);

  // The network gone: a thrown fetch keeps everything.
  const lost = await upload(door, async () => { throw new TypeError("Failed to fetch"); });
  assert.deepEqual(lost, { sent: 0, duplicates: 0, left: 2 });

  // A key no longer let in keeps the queue for a key that is; a refused ticket leaves it.
  const revokedKey = await upload(door, async () => ({ status: 401, body: { code: "unauthorized" } }));
  assert.equal(revokedKey.left, 2);
  const answered = await upload(door, async (c) => c.nonce === "n-3"
    ? { status: 403, body: { code: "ticket_invalid" } }
    : { status: 410, body: { code: "ticket_revoked" } });
  assert.deepEqual(answered, { sent: 2, duplicates: 0, left: 0 });
});

// ---- compact secrets (docs/api.md, "Compact secrets") ----

const BASE45 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:";
function toBase45(bytes) {
  let out = "";
  for (let i = 0; i < bytes.length; i += 2) {
    if (i + 1 < bytes.length) {
      let n = bytes[i] * 256 + bytes[i + 1];
      for (let j = 0; j < 3; j++) { out += BASE45[n % 45]; n = Math.floor(n / 45); }
    } else {
      let n = bytes[i];
      for (let j = 0; j < 2; j++) { out += BASE45[n % 45]; n = Math.floor(n / 45); }
    }
  }
  return out;
}
const uuidBytes = (id) => Uint8Array.from(Buffer.from(id.replace(/-/g, ""), "hex"));

// A compact secret signed here as the server signs it.
async function compactOf(key, { tid, eid = EVENT, iat = 1_800_000_000, seat = 0, area = null, type = 0 }) {
  const raw = fromBase64Url(key.listed.public_key);
  const fields = new Uint8Array(44);
  const view = new DataView(fields.buffer);
  fields.set(uuidBytes(tid), 0);
  fields.set(uuidBytes(eid), 16);
  fields.set(raw.subarray(0, 2), 32);
  view.setUint32(34, iat);
  view.setUint32(38, area === null ? seat : (0x80000000 | area) >>> 0);
  view.setUint16(42, type === null ? 0xffff : type);
  const signed = new Uint8Array([...new TextEncoder().encode("BX2:"), ...fields]);
  const signature = new Uint8Array(await subtle.sign({ name: "Ed25519" }, key.pair.privateKey, signed));
  return "BX2:" + toBase45(new Uint8Array([...fields, ...signature]));
}

const T1 = "11111111-2222-4333-8444-555555555555";

test("the test vector of docs/api.md reads and checks here as in Rust", async () => {
  const keys = await importKeys([{ kid: "ek_vector", public_key: VECTOR_PUBLIC, created_at: "2026-12-01T00:00:00Z", retired_at: null }], subtle);
  const parsed = parseSecret(VECTOR_SECRET);
  assert.equal(VECTOR_SECRET.length, 166);
  assert.equal(parsed.payload.tid, "7a3c9e51-2f4b-4d8e-9c1a-5b6d7e8f9a0b");
  assert.equal(parsed.payload.eid, "0e1d2c3b-4a59-4687-b5a4-938271605f4e");
  assert.equal(parsed.payload.iat, 1800000000);
  assert.equal(parsed.payload.seatIndex, 11);
  assert.equal(parsed.payload.typeIndex, 1);
  const verdict = await judge(VECTOR_SECRET, { eventId: "0e1d2c3b-4a59-4687-b5a4-938271605f4e", keys, door: new Door(new Memory(), "v"), subtle });
  assert.equal(verdict.result, "ok");
});

test("a compact secret is let in once, its place and type by index; altered ones are not tickets", async () => {
  const { key, at, door } = await fixture();
  const secret = await compactOf(key, { tid: T1, seat: 7, type: 2 });
  assert.equal(secret.length, 166);
  assert.ok([...secret].every((c) => BASE45.includes(c)));
  const first = await judge(secret, at);
  assert.equal(first.result, "ok");
  assert.equal(first.payload.seatIndex, 7);
  assert.equal(first.payload.typeIndex, 2);
  door.passed(T1, "entry", "2026-12-05T19:02:00Z", null);
  assert.equal((await judge(secret, at)).result, "already_redeemed");
  const place = parseSecret(await compactOf(key, { tid: T1, area: 3, type: null })).payload;
  assert.deepEqual([place.areaIndex, place.typeIndex, place.seatIndex], [3, null, undefined]);
  assert.equal((await judge(await compactOf(key, { tid: T1, eid: OTHER_EVENT }), at)).result, "wrong_event");
  const stranger = await entryKey("ek_2");
  const flipped = secret.slice(0, 10) + (secret[10] === "0" ? "1" : "0") + secret.slice(11);
  for (const [what, forged] of Object.entries({
    "signed by a key the event does not have": await compactOf(stranger, { tid: T1 }),
    "a character of the fields changed": flipped,
    "truncated": secret.slice(0, -3),
    "lowercase": secret.toLowerCase(),
    "another prefix": "BX3:" + secret.slice(4),
    "a seat with no type": await compactOf(key, { tid: T1, type: null }),
  })) {
    assert.equal((await judge(forged, at)).result, "ticket_invalid", what);
  }
  assert.equal(fromBase45("GGW"), null, "a group past two bytes");
  assert.deepEqual([...fromBase45("BB8")], [65, 66]);
  assert.deepEqual([...fromBase45("%69 VD92EX0")], [...new TextEncoder().encode("Hello!!")]);
});

test("a typed code reads as the server reads it", () => {
  assert.equal(typedCode("7kqf-2m9x-pd"), "7KQF2M9XPD");
  assert.equal(typedCode(" 7KQF 2M9X PD "), "7KQF2M9XPD");
  assert.equal(typedCode("OIL0-0000-00"), "0110000000");
  for (const bad of ["", "7KQF-2M9X", "7KQF-2M9X-PDX", "UUUU-UUUU-UU", "BX2:ABC"]) assert.equal(typedCode(bad), null, bad);
});
