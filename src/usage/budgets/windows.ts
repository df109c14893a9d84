/** A budget window: [start, end) in epoch ms, UTC. */
export interface BudgetWindow {
  start: number;
  end: number;
}

/** The day (ending at UTC midnight) or month (ending on the 1st, 00:00 UTC) that holds `now`. */
export function budgetWindow(per: 'day' | 'month', now: number): BudgetWindow {
  const d = new Date(now);
  if (per === 'day') {
    const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    return { start, end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1) };
  }
  return { start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
}
