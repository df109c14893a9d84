/** How many lines the recent-requests and log panes get, so the whole screen fits the terminal. */
export interface PaneHeights {
  recent: number;
  log: number;
}

/** Header, footer, pane titles and the blank lines between the blocks. */
const CHROME_LINES = 10;
const MAX_RECENT = 10;
const MAX_LOG = 8;

/**
 * An Ink frame as tall as the terminal makes it clear and redraw the whole screen each
 * time (flicker), so the panes share only what the table leaves free.
 */
export function paneHeights(terminalRows: number | undefined, tableLines: number): PaneHeights {
  if (terminalRows === undefined) return { recent: 8, log: 5 };
  const free = Math.max(2, terminalRows - 1 - CHROME_LINES - tableLines);
  const recent = Math.min(MAX_RECENT, Math.max(1, Math.ceil(free * 0.6)));
  const log = Math.min(MAX_LOG, Math.max(1, free - recent));
  return { recent, log };
}
