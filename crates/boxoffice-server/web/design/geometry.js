// Where a drawing's seats and shapes are: a block of rows laid out from its form (straight
// or curved, numbered three ways), points turned about an origin, an ellipse as a polygon.
// Pure functions of plain data; the venue's units are seats 1 apart unless a block says
// otherwise, y grows down (towards the back of the hall, away from the stage).

export const NUMBERINGS = {
  ltr: "Left to right",
  rtl: "Right to left",
  centre: "Odd and even from the centre",
};

// Rounded to a millionth: what floating point adds is dropped, what a venue gave is kept.
const round = (v) => Math.round(v * 1e6) / 1e6;

// The point `p` turned by `deg` degrees (clockwise on screen) about the origin.
export function turn(p, deg) {
  if (!deg) return { x: p.x, y: p.y };
  const a = (deg * Math.PI) / 180, c = Math.cos(a), s = Math.sin(a);
  return { x: p.x * c - p.y * s, y: p.x * s + p.y * c };
}

// `p` turned by `deg` about the origin, then moved to `at`, rounded as the venue keeps it.
export function place(p, deg, at) {
  const t = turn(p, deg);
  return { x: round(t.x + at.x), y: round(t.y + at.y) };
}

// The labels of `count` rows from `first`: numbers count up (9, 10, 11), letters run on as
// columns of a spreadsheet do (Y, Z, AA, AB), in the case `first` was given in.
export function rowLabels(first, count) {
  const text = String(first);
  if (/^[0-9]+$/.test(text)) {
    const start = Number(text);
    return Array.from({ length: count }, (_, i) => String(start + i));
  }
  const lower = text === text.toLowerCase();
  let n = 0;
  for (const ch of text.toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
  return Array.from({ length: count }, (_, i) => {
    let k = n + i, label = "";
    while (k > 0) {
      const r = (k - 1) % 26;
      label = String.fromCharCode(65 + r) + label;
      k = Math.floor((k - 1) / 26);
    }
    return lower ? label.toLowerCase() : label;
  });
}

// The numbers of a row's `n` seats from left to right: 1 to n, n to 1, or odd and even
// from the centre (… 6 4 2 1 3 5 …: 1 in the middle, odd numbers to its right).
export function seatNumbers(n, numbering) {
  const plain = Array.from({ length: n }, (_, i) => String(i + 1));
  if (numbering === "rtl") return plain.reverse();
  if (numbering !== "centre") return plain;
  const evens = [], odds = [];
  for (let k = 1; k <= n; k++) (k % 2 ? odds : evens).push(String(k));
  return [...evens.reverse(), ...odds];
}

// A block's rows in its own frame: the middle of the front row at the origin, rows going
// back (y down). A curve of c degrees bends every row into an arc of c degrees about one
// centre in front of the block, so the rows stay parallel and face the stage.
export function blockRows(block) {
  const { rows, seatsPerRow: n, firstRow, numbering, curve, spacing } = block;
  const rowSpacing = spacing * 1.25;
  const labels = rowLabels(firstRow, rows);
  const numbers = seatNumbers(n, numbering);
  const span = (curve * Math.PI) / 180;
  const radius = n > 1 && span > 0 ? ((n - 1) * spacing) / span : 0;
  return labels.map((label, r) => {
    const seats = numbers.map((number, i) => {
      if (!radius) return { number, x: (i - (n - 1) / 2) * spacing, y: r * rowSpacing };
      const rr = radius + r * rowSpacing;
      const phi = -span / 2 + (i * span) / (n - 1);
      return { number, x: rr * Math.sin(phi), y: -radius + rr * Math.cos(phi) };
    });
    return { label, seats };
  });
}

// An ellipse of width w and height h about the origin, as `sides` points.
export function ellipse(w, h, sides = 32) {
  return Array.from({ length: sides }, (_, i) => {
    const a = (2 * Math.PI * i) / sides;
    return { x: (w / 2) * Math.cos(a), y: (h / 2) * Math.sin(a) };
  });
}

// The box around `points`.
export function boxOf(points) {
  if (!points.length) return { x: 0, y: 0, w: 0, h: 0 };
  const xs = points.map((p) => p.x), ys = points.map((p) => p.y);
  const x = Math.min(...xs), y = Math.min(...ys);
  return { x, y, w: Math.max(...xs) - x, h: Math.max(...ys) - y };
}
