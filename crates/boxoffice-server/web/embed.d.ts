// Types of <boxoffice-seat-map>, the element GET /embed.js defines (served beside it as
// GET /embed.d.ts).
//
// Attributes: `server` (the Boxoffice server's base URL), `event` (the event id), `token`
// (a user token the platform minted, which the element also reads the seats with: a
// sales channel's buyer sees the channel's seats; without one the element asks for an
// anonymous session), `max-seats` (default 8), `locale` (`en` or `de`; default the browser's),
// `ticket-types` (comma-separated codes offered; default all), `hold-on-select` (each
// click holds its seat at once and each unclick frees it, in one hold that grows and
// shrinks; `hold` or `holdfailed` follows every click).
// Theming: CSS custom properties `--bo-available`, `--bo-held`, `--bo-sold`,
// `--bo-resale` (the ring of a seat offered for resale), `--bo-selected`, `--bo-font` on
// the element or above it.

/** A seat as the element offers it. */
export interface SeatChoice {
  id: string;
  label: string;
  /** `null` for a seat not on sale. */
  ticket_type: string | null;
  price_cents: number | null;
}

/** A problem document of the API (RFC 9457), or the element's own for a failed call. */
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  /**
   * A stable code: `seat_unavailable`, `hold_limit_exceeded`, `hold_not_live`,
   * `nothing_selected`, `unavailable` (still busy after 30 s of waiting its turns),
   * `unreachable`…
   */
  code: string;
  detail?: string;
  errors?: { field: string; message: string }[];
}

/** A seat `select()` could not take, and why. */
export interface SelectRefusal {
  id: string;
  reason: "taken" | "not_for_sale" | "unknown" | "limit";
}

/** A seat with the price quoted for it. */
export interface PricedSeat {
  id: string;
  label: string;
  ticket_type: string;
  price_cents: number;
}

/** The API's answer to a hold. */
export interface Hold {
  hold_token: string;
  event_id: string;
  seats: PricedSeat[];
  total_cents: number;
  currency: string;
  /** RFC 3339. */
  expires_at: string;
}

/** The API's answer to a checkout. */
export interface Order {
  order_id: string;
  event_id: string;
  user_id: string;
  seats: PricedSeat[];
  total_cents: number;
  currency: string;
  /**
   * `paid` at once in an event without a payment window; with one, `pending_payment` until
   * the platform's server records the payment (`POST /v1/orders/{id}/payment`), or
   * `expired` once `pay_by` passed unpaid.
   */
  status: "pending_payment" | "paid" | "expired" | "cancelled";
  /** RFC 3339. */
  created_at: string;
  /** In an event with a payment window: when the order expires unpaid (RFC 3339). */
  pay_by?: string;
  /** When its payment was recorded (RFC 3339). */
  paid_at?: string;
  /** The payment provider's reference. */
  payment_reference?: string;
}

/** The API's answer to a booking of standing places. */
export interface Booking {
  booking_id: string;
  event_id: string;
  /** The standing area's code. */
  area: string;
  quantity: number;
  total_cents: number;
  currency: string;
  /**
   * `paid` at once in an event without a payment window (its tickets issued); with one,
   * `pending_payment` until the platform's server records the payment
   * (`POST /v1/bookings/{id}/payment`) before `pay_by`.
   */
  status: "pending_payment" | "paid" | "expired" | "cancelled";
  /** In an event with a payment window: when the places go back unpaid (RFC 3339). */
  pay_by?: string;
}

/** The events the element dispatches (they bubble and cross its shadow root). */
export interface BoxofficeSeatMapEventMap {
  ready: CustomEvent<{ event: string; seats: number }>;
  selectionchange: CustomEvent<{ seats: SeatChoice[] }>;
  hold: CustomEvent<Hold>;
  holdfailed: CustomEvent<Problem>;
  expired: CustomEvent<Problem | { hold_token: string }>;
  order: CustomEvent<Order>;
  booking: CustomEvent<Booking>;
  /** `sold_out` (with `left`), `limit_exceeded`, `area_not_found`, `event_started`… */
  bookingfailed: CustomEvent<Problem>;
}

/**
 * The element. No method throws: a failure is an event (and a `null` result). A busy
 * server's `503`/`429` with `retry_after_ms` is waited out and the call made again, for up
 * to 30 s, with "busy, trying again in …" shown under the map (its `busy` part).
 */
export declare class BoxofficeSeatMap extends HTMLElement {
  /** The chosen seats. */
  readonly selection: SeatChoice[];
  /**
   * Chooses these seats instead of the selection: a programmatic change, so no
   * `selectionchange`. Answers the seats it could not take, with why: `taken` (held or
   * sold), `not_for_sale` (not on sale, or of a type the element does not offer), `unknown`
   * (no such seat on the map), `limit` (past `max-seats`).
   */
  select(ids: string[]): SelectRefusal[];
  clearSelection(): void;
  /**
   * Holds the selection, all or none: `hold`, or `holdfailed` and `null`; with nothing
   * chosen, `holdfailed` with `{code: "nothing_selected"}` and no request sent.
   */
  hold(): Promise<Hold | null>;
  /**
   * Holds the best `quantity` seats free now (of `ticketType`, if given), side by side
   * where a row has them, as the element's own picker does: `hold` (and
   * `selectionchange`), or `holdfailed` and `null` (`hold_exists` while a hold lives).
   */
  holdBest(quantity: number, ticketType?: string): Promise<Hold | null>;
  /** Releases the hold, if there is one. */
  release(): Promise<void>;
  /** Turns the hold into an order: `order`, or `holdfailed` / `expired` and `null`. */
  checkout(): Promise<Order | null>;
  /**
   * Books `quantity` places in the standing area `area` (its code), as the area's own form
   * under the map does: `booking`, or `bookingfailed` and `null`.
   */
  book(area: string, quantity: number): Promise<Booking | null>;
  addEventListener<K extends keyof BoxofficeSeatMapEventMap>(
    type: K,
    listener: (this: BoxofficeSeatMap, event: BoxofficeSeatMapEventMap[K]) => unknown,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject,
    options?: boolean | AddEventListenerOptions,
  ): void;
}

declare global {
  interface HTMLElementTagNameMap {
    "boxoffice-seat-map": BoxofficeSeatMap;
  }
}
