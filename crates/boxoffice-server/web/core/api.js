// Calls to the API, as every surface makes them: JSON in and out, a failure thrown as a
// Problem carrying the API's problem document (RFC 9457), and a busy server's turn
// (`503`/`429` with `retry_after_ms`) waited out and the same call made again.

export class Problem extends Error {
  constructor(status, body) {
    const doc = body && typeof body === "object" ? body : {};
    super(doc.detail || doc.title || (status ? `The server answered ${status}.` : "The server could not be reached."));
    this.status = status;
    this.body = doc;
    this.code = doc.code || (status ? "http_" + status : "unreachable");
  }

  // When a busy server asked to be called again, in ms; null for any other refusal.
  get turnMs() {
    if (this.status !== 503 && this.status !== 429) return null;
    const ms = Number(this.body.retry_after_ms);
    return Number.isFinite(ms) && ms >= 0 ? ms : null;
  }
}

// One call. `json` is sent as JSON, or `body` as `type`; `token` as the bearer; `headers`
// added. Answers the parsed JSON (null when empty), or the body as a Blob with `blob`;
// throws a Problem otherwise, also when the server cannot be reached (status 0).
export async function request(method, url, { token, json, body, type, headers = {}, blob = false, signal } = {}) {
  const sent = { accept: "application/json", ...headers };
  if (token) sent.authorization = "Bearer " + token;
  let payload;
  if (json !== undefined && json !== null) {
    sent["content-type"] = "application/json";
    payload = JSON.stringify(json);
  } else if (body !== undefined) {
    sent["content-type"] = type;
    payload = body;
  }
  let response;
  try {
    response = await fetch(url, { method, headers: sent, body: payload, signal });
  } catch (e) {
    if (e && e.name === "AbortError") throw e;
    throw new Problem(0, { code: "unreachable", detail: "The server could not be reached." });
  }
  if (response.ok && blob) return response.blob();
  const text = await response.text().catch(() => "");
  let parsed = null;
  try { parsed = text ? JSON.parse(text) : null; } catch (_) { parsed = null; }
  if (!response.ok) throw new Problem(response.status, parsed);
  return parsed;
}

// How long, in all, a busy server's turns are waited out before its refusal stands.
export const PATIENCE_MS = 30_000;

// Makes `call` (a function returning a promise) and, while the server answers busy with a
// turn, waits that turn and makes it again, for up to PATIENCE_MS in all. `waiting(ms)`
// hears of each wait before it starts (and `waiting(0)` once the call is answered or given
// up), for the surface to say it is busy. One call at a time: nothing is sent twice at once.
export async function patiently(call, { waiting = () => {}, patience = PATIENCE_MS } = {}) {
  let waited = 0;
  for (;;) {
    try {
      const answer = await call();
      waiting(0);
      return answer;
    } catch (e) {
      const ms = e instanceof Problem ? e.turnMs : null;
      if (ms === null || waited + ms > patience) {
        waiting(0);
        throw e;
      }
      waiting(ms);
      waited += ms;
      await new Promise((resolve) => setTimeout(resolve, ms));
    }
  }
}
