// An order's tickets on the buyer's page: each with its QR code, seat, event and ticket
// type, and one PDF of them all; a seat's ticket offered for resale ("Resell") or taken
// back before anyone buys it. Both are the buyer's alone, so they are fetched with the
// buyer's token and shown from blob URLs. Also the page of `/?order=<id>`: the order and
// its tickets, to show at the door.

import { Problem, request } from "../core/api.js";
import { eventTime } from "../core/format.js";
import { $, buyer, api, read, say } from "./shared.js";

const STATUS = { valid: "Valid", redeemed: "Used", revoked: "Cancelled" };

// Each object URL made for this order's QR codes, let go when the order is drawn again.
let urls = [];

// Draws the tickets of `order` (an order of seats, or a booking of standing places) into
// `box` (an element of the page): nothing for one that is not paid, which has no tickets
// yet. A seat's ticket may be offered for resale; a standing place's may not.
export async function renderTickets(order, box, zone) {
  for (const url of urls) URL.revokeObjectURL(url);
  urls = [];
  box.replaceChildren();
  box.hidden = order.status !== "paid";
  if (box.hidden) return;
  const path = pathOf(order);
  const [{ tickets }, { listed }] = await Promise.all([
    api("GET", path + "/tickets"),
    order.event_id && order.order_id ? api("GET", path + "/resale") : { listed: [] },
  ]);
  const events = new Map();
  for (const t of tickets) if (!events.has(t.event_id)) events.set(t.event_id, null);
  await Promise.all([...events.keys()].map(async (id) => {
    events.set(id, await read("/v1/events/" + encodeURIComponent(id)).catch(() => null));
  }));

  const heading = document.createElement("h3");
  heading.textContent = tickets.length === 1 ? "Your ticket" : `Your ${tickets.length} tickets`;
  const hint = document.createElement("p");
  hint.className = "hint";
  hint.textContent = "Show the code at the door, on this screen or printed.";
  const pdf = document.createElement("button");
  pdf.type = "button";
  pdf.id = "tickets-pdf";
  pdf.textContent = "Download the tickets (PDF)";
  pdf.onclick = () => download(path, order.order_id || order.booking_id, pdf);
  const list = document.createElement("ul");
  list.className = "ticket-list";
  box.append(heading, hint, pdf, list);

  for (const t of tickets) {
    const event = events.get(t.event_id);
    const li = document.createElement("li");
    li.className = "ticket";
    li.dataset.ticketId = t.id;
    li.dataset.status = t.status;
    const img = document.createElement("img");
    img.width = 180;
    img.height = 180;
    img.alt = "Entry code of the ticket for " + t.label;
    const text = document.createElement("div");
    const seat = document.createElement("strong");
    seat.textContent = t.label;
    const what = document.createElement("span");
    const type = event && event.ticket_types.find((k) => k.code === t.ticket_type);
    const kind = t.area ? "Standing" : type ? type.name : t.ticket_type;
    what.textContent = kind + " · " + (STATUS[t.status] || t.status);
    const when = document.createElement("span");
    when.textContent = event ? event.name + ", " + eventTime(event.starts_at, event.time_zone || zone) : "";
    text.append(seat, what, when);
    // Under the QR code, the code a steward types when the camera cannot read it.
    const figure = document.createElement("figure");
    figure.className = "ticket-qr";
    const caption = document.createElement("figcaption");
    caption.className = "ticket-code";
    caption.dataset.code = t.code;
    caption.textContent = `${t.code.slice(0, 4)}-${t.code.slice(4, 8)}-${t.code.slice(8)}`;
    caption.setAttribute("aria-label", "Code to type at the door: " + [...t.code].join(" "));
    figure.append(img, caption);
    li.append(figure, text);
    const started = !event || Date.parse(event.starts_at) <= Date.now();
    if (order.order_id && order.event_id && t.seat_id && t.status === "valid" && !started) {
      li.append(resale(order, t, listed.includes(t.seat_id), box));
    }
    list.append(li);
    if (t.status !== "revoked") {
      request("GET", `/v1/tickets/${encodeURIComponent(t.id)}/qr.svg`, { token: buyer.token, blob: true })
        .then((svg) => {
          const url = URL.createObjectURL(svg);
          urls.push(url);
          img.src = url;
        })
        .catch(() => { img.alt = "The entry code could not be loaded: reload the page."; });
    } else {
      figure.hidden = true;
    }
  }
  box.dataset.tickets = String(tickets.length);
}

// The ticket's resale: "Resell" offers its seat to other buyers (it stays the buyer's, and
// their ticket valid, until someone buys it); a seat offered says so and may be taken back.
function resale(order, t, listed, box) {
  const part = document.createElement("div");
  part.className = "resale";
  if (listed) {
    const note = document.createElement("span");
    note.textContent = "Offered for resale: yours until someone buys it.";
    part.append(note);
    part.dataset.state = "listed";
  }
  const button = document.createElement("button");
  button.type = "button";
  button.dataset.resale = listed ? "take-back" : "resell";
  button.textContent = listed ? "Take back" : "Resell";
  button.setAttribute("aria-label", (listed ? "Take back from resale: " : "Resell ") + t.label);
  const path = `/v1/orders/${encodeURIComponent(order.order_id)}/resale`;
  // Offering a seat asks first, and says what happens to the ticket and the money.
  const confirm = () => {
    const question = document.createElement("p");
    question.className = "resale-question";
    question.textContent = `Offer ${t.label} for resale? It stays yours, and this ticket valid, until another buyer pays for it; then this ticket stops working and the seller of your order refunds you.`;
    const offer = document.createElement("button");
    offer.type = "button";
    offer.dataset.resale = "offer";
    offer.textContent = "Offer it";
    offer.setAttribute("aria-label", "Offer it for resale: " + t.label);
    const keep = document.createElement("button");
    keep.type = "button";
    keep.dataset.resale = "keep";
    keep.textContent = "Keep it";
    keep.setAttribute("aria-label", "Keep it: " + t.label);
    keep.onclick = () => { part.replaceChildren(button); button.focus(); };
    offer.onclick = () => act(offer);
    part.replaceChildren(question, offer, keep);
    offer.focus();
  };
  const act = async (pressed) => {
    pressed.disabled = true;
    try {
      if (listed) await api("DELETE", `${path}/${encodeURIComponent(t.seat_id)}`);
      else await api("POST", path, { seats: [t.seat_id] });
      say(listed ? `${t.label} is yours alone again.` : `${t.label} is offered for resale. You keep it until someone buys it.`, "ok");
      await renderTickets(order, box);
    } catch (e) {
      say(e.status === 409 && e.body && e.body.code === "seat_unavailable"
        ? `Someone is buying ${t.label} right now: it cannot be taken back.` : e.message, "error");
      pressed.disabled = false;
    }
  };
  button.onclick = () => (listed ? act(button) : confirm());
  part.append(button);
  return part;
}

// Where an order's or a booking's tickets are.
const pathOf = (order) => order.booking_id
  ? `/v1/bookings/${encodeURIComponent(order.booking_id)}`
  : `/v1/orders/${encodeURIComponent(order.order_id)}`;

// The PDF of the tickets at `path`, saved as a file.
async function download(path, id, button) {
  button.disabled = true;
  try {
    const pdf = await request("GET", `${path}/tickets.pdf`, { token: buyer.token, blob: true });
    const url = URL.createObjectURL(pdf);
    const a = document.createElement("a");
    a.href = url;
    a.download = `tickets-${id}.pdf`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  } finally {
    button.disabled = false;
  }
}

// The buyer's own orders and bookings (`GET /v1/me/orders`), of one event or of all, each
// shaped as its own route answers it: an order as `GET /v1/orders/{id}`, a booking as
// `POST …/bookings`.
export async function myOrders(eventId) {
  const query = eventId ? "?event=" + encodeURIComponent(eventId) : "";
  const { orders } = await api("GET", "/v1/me/orders" + query);
  return orders.map((o) => o.kind === "booking"
    ? { booking_id: o.id, event_id: o.event_id, area: o.area, quantity: o.quantity, status: o.status,
      pay_by: o.pay_by, total_cents: o.total_cents, currency: o.currency, tickets: o.tickets }
    : { order_id: o.id, event_id: o.event_id, seats: o.seats, status: o.status, pay_by: o.pay_by,
      total_cents: o.total_cents, currency: o.currency, tickets: o.tickets });
}

// The buyer's booking `id`, from their own orders (404 if it is not theirs).
export async function myBooking(id, eventId) {
  const found = (await myOrders(eventId)).find((o) => o.booking_id === id);
  if (!found) throw new Problem(404, { detail: "No such booking of yours." });
  return found;
}

// `/?order=<id>` (or `/?booking=<id>`): the signed-in buyer's order and its tickets,
// without the map.
export async function showOrderPage(id, showOrder, kind = "order") {
  const order = kind === "booking" ? await myBooking(id) : await api("GET", "/v1/orders/" + encodeURIComponent(id));
  const page = $("order-page");
  page.hidden = false;
  const event = order.event_id ? await read("/v1/events/" + encodeURIComponent(order.event_id)).catch(() => null) : null;
  $("order-page-name").textContent = event ? event.name : "Your order";
  $("order-page-meta").textContent = event ? eventTime(event.starts_at, event.time_zone) : "";
  if (event) {
    const back = $("order-page-map");
    back.href = "/?event=" + encodeURIComponent(event.id);
    back.hidden = false;
  }
  document.title = ($("order-page-name").textContent) + " · your tickets · Boxoffice";
  showOrder(order, $("order-page-box"), event && event.time_zone);
}
