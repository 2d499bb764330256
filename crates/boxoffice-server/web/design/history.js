// Undo and redo over drawings: the drawings before the present one, and those undone.
// Pure: each step answers a new history.

const DEPTH = 200;

export const start = (drawing) => ({ past: [], present: drawing, future: [] });

// The history with `drawing` as its present (a change): the old present can be undone to,
// and what was undone can no longer be redone. A change that changes nothing is no step.
export function record(h, drawing) {
  if (drawing === h.present) return h;
  return { past: [...h.past, h.present].slice(-DEPTH), present: drawing, future: [] };
}

export const canUndo = (h) => h.past.length > 0;
export const canRedo = (h) => h.future.length > 0;

export function undo(h) {
  if (!canUndo(h)) return h;
  return { past: h.past.slice(0, -1), present: h.past[h.past.length - 1], future: [h.present, ...h.future] };
}

export function redo(h) {
  if (!canRedo(h)) return h;
  return { past: [...h.past, h.present], present: h.future[0], future: h.future.slice(1) };
}
