// Money, times and escaping, as every surface writes them. One formatter per currency and
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

// Times as every page writes them, in the event's time zone (an IANA name; the browser's
// own when none is given) with the zone's abbreviation: "Wed 6 Jan 2027, 20:30 CET", the
// same words the PDF prints (boxoffice_core::local_time). A zone CLDR names only by offset
// in British English ("GMT-5") takes its American name ("EST") where it has one.
const timeFormats = new Map();

function partsIn(zone, withDate) {
  const key = (zone || "") + (withDate ? "\u0000d" : "");
  if (!timeFormats.has(key)) {
    const options = { timeZone: zone || undefined, hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZoneName: "short" };
    if (withDate) Object.assign(options, { weekday: "short", day: "numeric", month: "short", year: "numeric" });
    let british, american;
    try {
      british = new Intl.DateTimeFormat("en-GB", options);
      american = new Intl.DateTimeFormat("en-US", { timeZone: options.timeZone, timeZoneName: "short" });
    } catch (_) {
      british = new Intl.DateTimeFormat("en-GB", { ...options, timeZone: "UTC" });
      american = new Intl.DateTimeFormat("en-US", { timeZone: "UTC", timeZoneName: "short" });
    }
    timeFormats.set(key, (date) => {
      const parts = {};
      for (const p of british.formatToParts(date)) parts[p.type] = p.value;
      if (/^GMT[+-]/.test(parts.timeZoneName)) {
        const named = american.formatToParts(date).find((p) => p.type === "timeZoneName");
        if (named && !/^GMT[+-]/.test(named.value)) parts.timeZoneName = named.value;
      }
      return parts;
    });
  }
  return timeFormats.get(key);
}

// A date and time, day and minute: "Wed 6 Jan 2027, 20:30 CET".
export function eventTime(iso, zone) {
  const p = partsIn(zone, true)(new Date(iso));
  return `${p.weekday} ${p.day} ${p.month} ${p.year}, ${p.hour}:${p.minute} ${p.timeZoneName}`;
}

// A time of day, to the minute: "20:45 CET".
export function eventClock(iso, zone) {
  const p = partsIn(zone, false)(new Date(iso));
  return `${p.hour}:${p.minute} ${p.timeZoneName}`;
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
