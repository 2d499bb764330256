// The element's words in English and German, and its style sheet (inside its shadow root;
// colours and the font from the host's CSS custom properties).

export const STRINGS = {
  en: {
    map: "Seat map. Arrow keys move between seats, Enter or Space selects.",
    chosen: (n) => (n === 1 ? "1 seat chosen" : `${n} seats chosen`),
    none: "No seats chosen",
    held: (n, until) => `${n} held until ${until}`,
    wheelchair: "wheelchair space", companion: "companion seat", restricted: "restricted view",
    zoomIn: "Zoom in", zoomOut: "Zoom out", fit: "Fit", tools: "Map",
    best: "Or let us choose", seats: "Seats", type: "Type", any: "Any", bestHold: "Best available",
    bestBusy: "Release your seats to let us choose",
    busy: (s) => `Busy: many buyers at once. Trying again in ${s} s…`,
    standing: "Standing", places: "Places", book: "Book",
    each: (price) => `${price} each`, left: (n) => `${n} left`,
    booked: (n, total) => `Booked ${n} · ${total}`,
    status: { available: "available", held: "held", sold: "sold", resale: "resale", not_for_sale: "not for sale" },
  },
  de: {
    map: "Saalplan. Pfeiltasten wechseln den Platz, Eingabe oder Leertaste wählt.",
    chosen: (n) => (n === 1 ? "1 Platz gewählt" : `${n} Plätze gewählt`),
    none: "Keine Plätze gewählt",
    held: (n, until) => `${n} reserviert bis ${until}`,
    wheelchair: "Rollstuhlplatz", companion: "Begleitplatz", restricted: "eingeschränkte Sicht",
    zoomIn: "Vergrößern", zoomOut: "Verkleinern", fit: "Ganzer Saal", tools: "Saalplan",
    best: "Oder wir wählen für Sie", seats: "Plätze", type: "Kategorie", any: "Alle", bestHold: "Beste Plätze",
    bestBusy: "Geben Sie Ihre Plätze frei, um wählen zu lassen",
    busy: (s) => `Viel Andrang. Neuer Versuch in ${s} s…`,
    standing: "Stehplätze", places: "Plätze", book: "Buchen",
    each: (price) => `je ${price}`, left: (n) => `noch ${n}`,
    booked: (n, total) => `${n} gebucht · ${total}`,
    status: { available: "frei", held: "reserviert", sold: "verkauft", resale: "Weiterverkauf", not_for_sale: "nicht im Verkauf" },
  },
};

export const STYLE = `
  :host { display: block; font-family: var(--bo-font, system-ui, sans-serif); color: #1d2125; }
  svg { width: 100%; height: auto; max-height: 80vh; display: block; touch-action: none; user-select: none; }
  svg.dragging { cursor: grabbing; }
  .tools { display: flex; gap: .3rem; justify-content: flex-end; margin-bottom: .3rem; }
  button, select { font: inherit; min-height: 2.25rem; min-width: 2.25rem; border-radius: .3rem;
    border: 1px solid #6c757d; background: #fff; color: #1d2125; padding: 0 .6rem; cursor: pointer; }
  button:disabled { color: #5c6670; cursor: not-allowed; }
  button:focus-visible, select:focus-visible { outline: 3px solid #0a58ca; outline-offset: 1px; }
  .best { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin: .6rem 0 0; padding: 0; border: 0; }
  .best legend { font-weight: 600; padding: 0; margin-bottom: .3rem; }
  .best label { display: flex; flex-direction: column; font-size: .85rem; gap: .15rem; }
  .seat[aria-busy="true"] { opacity: .55; }
  .seat { fill: var(--bo-available, #2f6fb3); stroke: #fff; stroke-width: .06; cursor: pointer; }
  .seat[data-status="held"] { fill: var(--bo-held, #aab2ba); cursor: not-allowed; }
  .seat[data-status="sold"] { fill: var(--bo-sold, #4a525a); cursor: not-allowed; }
  .seat[data-status="resale"] { stroke: var(--bo-resale, #6a2c91); stroke-width: .14; stroke-dasharray: .18 .07; }
  .seat[data-status="not_for_sale"] { fill: #fff; stroke: #b8c0c8; stroke-width: .05; stroke-dasharray: .12 .1; cursor: not-allowed; }
  .seat[aria-checked="true"], .seat.mine { fill: var(--bo-selected, #e0a800); stroke: #111; stroke-width: .16; }
  .seat:focus { outline: none; stroke: #0a58ca; stroke-width: .26; }
  .seat-mark, .shape, text { pointer-events: none; }
  .section-label { font-size: .9px; fill: #3d454d; font-weight: 700; text-anchor: middle; dominant-baseline: central; }
  .row-label { font-size: .55px; fill: #5c6670; text-anchor: middle; dominant-baseline: central; }
  .shape text { text-anchor: middle; dominant-baseline: central; fill: #3d454d; font-weight: 600; }
  .shape-stage rect, .shape-stage circle, .shape-stage polygon { fill: #e3e6ea; stroke: #8a949e; stroke-width: .08; }
  .shape-area rect, .shape-area circle, .shape-area polygon { fill: #f3f5f7; stroke: #b8c0c8; stroke-width: .06; stroke-dasharray: .3 .2; }
  .status { margin: .3rem 0 0; font-size: .9rem; }
  .standing h3 { font-size: 1rem; margin: .8rem 0 .3rem; }
  .standing .area { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin: 0 0 .5rem; }
  .standing .area-head { flex: 1 1 100%; margin: 0; display: flex; flex-wrap: wrap; justify-content: space-between; gap: .3rem; }
  .standing .area-name { font-weight: 600; }
  .standing label { display: flex; flex-direction: column; font-size: .85rem; gap: .15rem; }
  .standing input { font: inherit; width: 4.5rem; min-height: 2.25rem; padding: 0 .4rem; border: 1px solid #6c757d; border-radius: .3rem; }
  .standing .area-result { flex: 1 1 100%; margin: 0; font-size: .9rem; }
  .standing .area-result:empty { display: none; }
  .busy { margin: .3rem 0 0; font-size: .9rem; padding: .3rem .5rem; border-radius: .3rem; background: #eef4fc; border: 1px solid #8fb3e3; }`;
