// Money, dates and escaping, as every surface writes them. One formatter per currency and
// locale: making one is far dearer than using it, and a map labels every seat with its
// price.

const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" };

// `text` safe inside HTML, in an element or a quoted attribute.
export function esc(text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

const moneyFormats = new Map();

// `cents` of `currency`, as `locale` (the browser's by default) writes money.
export function money(cents, currency, locale) {
  const key = currency + "\u0000" + (locale || "");
  if (!moneyFormats.has(key)) {
    let format;
    try {
      format = new Intl.NumberFormat(locale || undefined, { style: "currency", currency }).format;
    } catch (_) {
      format = (amount) => amount.toFixed(2) + " " + currency;
    }
    moneyFormats.set(key, format);
  }
  return moneyFormats.get(key)(cents / 100);
}

// A date and time, day and minute.
export function dateTime(iso, locale) {
  return new Date(iso).toLocaleString(locale || undefined, { dateStyle: "medium", timeStyle: "short" });
}

// A time of day, to the minute.
export function clockTime(iso, locale) {
  return new Date(iso).toLocaleTimeString(locale || undefined, { timeStyle: "short" });
}

// Seconds left as m:ss.
export function countdown(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

// A wait in words: "less than a minute", "about 5 minutes", "about 2 h 10 min".
export function aboutMinutes(seconds) {
  if (seconds < 60) return "less than a minute";
  const m = Math.round(seconds / 60);
  if (m < 60) return m === 1 ? "about a minute" : `about ${m} minutes`;
  return `about ${Math.floor(m / 60)} h ${m % 60} min`;
}
