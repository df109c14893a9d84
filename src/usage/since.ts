const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `--since`: `30m`, `24h`, `7d`, `2w` before `now`, or an ISO date / date-time. Throws on anything else. */
export function parseSince(text: string, now: number): number {
  const relative = /^\s*(\d+(?:\.\d+)?)\s*([mhdw])\s*$/.exec(text);
  if (relative) return now - Number(relative[1]) * UNITS[relative[2]];
  if (/^\d{4}-\d{2}-\d{2}/.test(text.trim())) {
    const at = Date.parse(text.trim());
    if (Number.isFinite(at)) return at;
  }
  throw new Error(`invalid --since "${text}": expected a duration such as 30m, 24h, 7d, 2w, or an ISO date such as 2025-01-31 or 2025-01-31T12:00:00Z`);
}
