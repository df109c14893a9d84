import type { Database } from 'better-sqlite3';
import type { IncidentKind } from './tracker.js';

/** An incident as stored. */
export interface IncidentRecord {
  id: number;
  route: string;
  tier: string;
  kind: IncidentKind;
  openedAt: number;
  closedAt: number | null;
  closedBy: string | null;
  /** What the event said when it opened (the rule's reason and threshold, the alert's name). */
  trigger: Record<string, unknown>;
}

interface Row {
  id: number;
  route: string;
  tier: string;
  kind: IncidentKind;
  opened_at: number;
  closed_at: number | null;
  closed_by: string | null;
  trigger: string;
}

export function listIncidents(db: Database): IncidentRecord[] {
  return (
    db.prepare('SELECT id, route, tier, kind, opened_at, closed_at, closed_by, trigger FROM incidents ORDER BY opened_at DESC, id DESC').all() as Row[]
  ).map(toRecord);
}

export function findIncident(db: Database, id: number): IncidentRecord | null {
  const row = db.prepare('SELECT id, route, tier, kind, opened_at, closed_at, closed_by, trigger FROM incidents WHERE id = ?').get(id) as Row | undefined;
  return row ? toRecord(row) : null;
}

function toRecord(row: Row): IncidentRecord {
  let trigger: Record<string, unknown> = {};
  try {
    trigger = JSON.parse(row.trigger) as Record<string, unknown>;
  } catch {
    // an unreadable trigger leaves the numbers, which come from the rows anyway
  }
  return { id: row.id, route: row.route, tier: row.tier, kind: row.kind, openedAt: row.opened_at, closedAt: row.closed_at, closedBy: row.closed_by, trigger };
}
