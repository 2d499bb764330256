// The dashboard's report: revenue, sales by ticket type and by section, seats sold a
// minute, the waiting list and the waiting room, and the sales channels (each released to
// general sale after a confirmation). Read again after the stream says something changed.

import { esc } from "../core/format.js";
import { $, api, errorBox, confirmDialog, money, may } from "./shared.js";

// Reads the report of the event at `path` and shows it; `names` has `typeName`, `areaName`
// and `sectionName` by code.
export async function showReport(event, path, { typeName, areaName, sectionName }) {
  const r = await api("GET", `${path}/report`).catch(() => null);
  if (!r) return;
  const revenue = $("revenue");
  revenue.dataset.revenueCents = r.revenue_cents;
  revenue.textContent = money(r.revenue_cents, r.currency);
  $("by-type").innerHTML = `<table><thead><tr><th>Ticket type</th><th class="num">Sold</th><th class="num">Revenue</th></tr></thead><tbody>${
    r.by_ticket_type.map((t) => `<tr><td>${esc(typeName.get(t.ticket_type) || t.ticket_type)}</td><td class="num">${t.sold}</td><td class="num">${esc(money(t.revenue_cents, r.currency))}</td></tr>`).join("")}${
    r.ga.map((g) => `<tr><td>${esc(areaName.get(g.code) || g.code)} (standing, ${g.left} of ${g.capacity} left)</td><td class="num">${g.capacity - g.left}</td><td class="num">${esc(money(g.revenue_cents, r.currency))}</td></tr>`).join("")}</tbody></table>`;
  $("by-section").innerHTML = `<table><thead><tr><th>Section</th><th class="num">Sold</th><th class="num">Held</th><th class="num">Available</th><th class="num">Revenue</th></tr></thead><tbody>${
    r.by_section.map((s) => `<tr data-section="${esc(s.section)}"><td>${esc(sectionName.get(s.section) || s.section)}</td><td class="num">${s.sold}</td><td class="num">${s.held}</td><td class="num">${s.available}</td><td class="num">${esc(money(s.revenue_cents, r.currency))}</td></tr>`).join("")}</tbody></table>`;
  const most = Math.max(1, ...r.sales_per_minute.map((m) => m.seats));
  $("chart").innerHTML = r.sales_per_minute.map((m, i) => {
    const h = (m.seats / most) * 120;
    return `<rect x="${i * 10 + 1}" y="${125 - h}" width="8" height="${h}"><title>${esc(new Date(m.minute).toLocaleTimeString("en-GB", { timeStyle: "short" }))}: ${m.seats}</title></rect>`;
  }).join("");
  $("chart-most").textContent = `now · at most ${most} a minute`;
  const waitlist = r.waitlist || { waiting: 0, offered: 0 };
  $("waitlist-counter").hidden = !(waitlist.waiting || waitlist.offered);
  $("waitlist-waiting").textContent = waitlist.waiting.toLocaleString("en");
  $("waitlist-offered").textContent = waitlist.offered.toLocaleString("en");
  if ($("channels")) {
    $("channels").innerHTML = (r.channels || []).map((c) => `<li data-channel="${esc(c.code)}"><span><strong>${esc(c.name)}</strong>
      · ${c.seats} seat${c.seats === 1 ? "" : "s"}: ${c.available} available, ${c.held} held, ${c.sold} sold</span>
      ${may("write_catalog") ? `<button type="button" data-release="${esc(c.code)}" ${c.available ? "" : "disabled"}>${c.available ? `Release ${c.available} to general sale` : "Nothing to release"}</button>` : ""}</li>`).join("");
    for (const b of document.querySelectorAll("[data-release]")) {
      b.onclick = () => release(event, path, b.dataset.release, () => showReport(event, path, { typeName, areaName, sectionName }));
    }
  }
  $("queue-counter").hidden = !r.queue;
  if (r.queue) {
    $("queue-waiting").textContent = r.queue.waiting.toLocaleString("en");
    $("queue-admitted").textContent = r.queue.admitted.toLocaleString("en");
    const rate = $("queue-rate");
    rate.dataset.admittingPerMinute = r.queue.admitting_per_minute;
    rate.dataset.slowedBecause = r.queue.slowed_because || "";
    rate.textContent = `admitting ${r.queue.admitting_per_minute.toLocaleString("en")} a minute`
      + (r.queue.slowed_because ? ` (${SLOWED[r.queue.slowed_because] || "slowed"})` : "");
  }
}

// Why the waiting room admits below its rate.
const SLOWED = {
  overload: "slowed: holds are being turned away",
  hold_latency: "slowed: holds answer slowly",
};

// Releasing a channel: its free seats go on general sale (to the waiting list first).
async function release(event, path, code, again) {
  const channel = event.channels.find((c) => c.code === code);
  const yes = await confirmDialog(`Release ${channel.name}'s seats?`,
    "Its seats that are neither held nor sold go on general sale now (to the waiting list first). Held and sold seats stay with the channel.",
    "Release");
  if (!yes) return;
  try {
    const answer = await api("POST", `${path}/channels/${encodeURIComponent(code)}/release`);
    $("channels-result").innerHTML = `<div class="ok" role="status"><p>${answer.released} seat${answer.released === 1 ? "" : "s"} of ${esc(channel.name)} released to general sale.</p></div>`;
    again();
  } catch (e) {
    $("channels-result").innerHTML = errorBox(e);
  }
}
