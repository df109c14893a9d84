import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database, { type Database as Db, type Statement } from 'better-sqlite3';
import { migrate } from './migrations.js';
import type { RequestRow } from './request-row.js';

export interface StoreOptions {
  /** How long a statement waits for another connection's lock before failing (SQLITE_BUSY). */
  busyTimeoutMs?: number;
  /** Caps the file's size in pages (tests use it to make the database "full"). */
  maxPageCount?: number;
}

const INSERT_REQUESTS = `INSERT INTO requests (id, started_at, protocol, route, tier, provider, model, status, outcome, stream, ttft_ms,
  duration_ms, prompt_tokens, completion_tokens, cached_tokens, token_source, cost_usd, saved_usd, chunk_errors, failover,
  saver_tokens_before, saver_tokens_after, saver_failures, resumed, prompt_truncated, tool_text, credential, run, cache_reported, kind) VALUES`;
const REQUEST_COLUMNS = 30;
const INSERT_ATTEMPTS = 'INSERT INTO attempts (request_seq, n, tier, attempt, outcome, status, ms) VALUES';
const ATTEMPT_COLUMNS = 7;
/** Rows per multi-row INSERT. */
const GROUP = 20;

const pause = new Int32Array(new SharedArrayBuffer(4));

/** Runs `step` again every 10 ms while it fails with SQLITE_BUSY, for up to `withinMs`. */
function retryWhileBusy(step: () => unknown, withinMs: number): void {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      step();
      return;
    } catch (err) {
      const busy = (err as { code?: string }).code?.startsWith('SQLITE_BUSY') === true;
      if (!busy || Date.now() >= deadline) throw err;
      Atomics.wait(pause, 0, 0, 10);
    }
  }
}

function values(columns: number, rows: number): string {
  const row = `(${new Array<string>(columns).fill('?').join(', ')})`;
  return new Array<string>(rows).fill(row).join(', ');
}

function pushRequest(r: RequestRow, out: unknown[]): void {
  out.push(
    r.id,
    r.startedAt,
    r.protocol,
    r.route,
    r.tier,
    r.provider,
    r.model,
    r.status,
    r.outcome,
    r.stream ? 1 : 0,
    r.ttftMs,
    r.durationMs,
    r.promptTokens,
    r.completionTokens,
    r.cachedTokens,
    r.tokenSource,
    r.costUsd,
    r.savedUsd,
    r.chunkErrors,
    r.failover ? 1 : 0,
    r.saverTokensBefore,
    r.saverTokensAfter,
    r.saverFailures,
    r.resumed,
    r.promptTruncated,
    r.toolText,
    r.credential,
    r.run,
    r.cacheReported ? 1 : 0,
    r.kind,
  );
}

function pushAttempts(r: RequestRow, seq: number, out: unknown[]): void {
  for (let n = 0; n < r.attempts.length; n++) {
    const a = r.attempts[n];
    out.push(seq, n, a.tier, a.attempt, a.outcome, a.status, a.ms);
  }
}

/** An incident as the tracker opens it. */
export interface IncidentOpen {
  key: string;
  route: string;
  tier: string;
  kind: 'rollback' | 'alert' | 'down';
  openedAt: number;
  trigger: Record<string, unknown>;
}

/** Today's totals, for the UI header at start. */
export interface DayTotals {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  costUsd: number;
  savedUsd: number;
  saverTokensSaved: number;
}

/**
 * The usage database, opened for writing: WAL (readers never block the writer), NORMAL
 * synchronous (a committed batch survives the process being killed), migrations by
 * `user_version`. Opening throws on a locked, corrupt or unwritable file.
 */
export class UsageStore {
  readonly db: Db;
  private readonly insertRequest: Statement;
  private readonly insertRequests: Statement;
  private readonly insertAttempt: Statement;
  private readonly insertAttempts: Statement;
  private readonly insertIncident: Statement;
  private readonly closeIncidentStmt: Statement;

  constructor(
    readonly path: string,
    options: StoreOptions = {},
  ) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
    const db = new Database(path, { timeout: busyTimeoutMs });
    try {
      // Switching a new file to WAL needs its exclusive lock, and SQLite answers SQLITE_BUSY at
      // once (no busy handler) while another process holds it for the same switch.
      retryWhileBusy(() => db.pragma('journal_mode = WAL'), busyTimeoutMs);
      db.pragma('synchronous = NORMAL');
      if (options.maxPageCount !== undefined) db.pragma(`max_page_count = ${options.maxPageCount}`);
      migrate(db);
    } catch (err) {
      db.close();
      throw err;
    }
    this.db = db;
    this.insertRequest = db.prepare(`${INSERT_REQUESTS} ${values(REQUEST_COLUMNS, 1)}`);
    this.insertRequests = db.prepare(`${INSERT_REQUESTS} ${values(REQUEST_COLUMNS, GROUP)}`);
    this.insertAttempt = db.prepare(`${INSERT_ATTEMPTS} ${values(ATTEMPT_COLUMNS, 1)}`);
    this.insertAttempts = db.prepare(`${INSERT_ATTEMPTS} ${values(ATTEMPT_COLUMNS, GROUP)}`);
    this.insertIncident = db.prepare('INSERT OR IGNORE INTO incidents (key, route, tier, kind, opened_at, trigger) VALUES (?, ?, ?, ?, ?, ?)');
    this.closeIncidentStmt = db.prepare('UPDATE incidents SET closed_at = ?, closed_by = ? WHERE key = ? AND closed_at IS NULL');
  }

  /**
   * Rows in one transaction: all of them are written, or (on an error) none. GROUP rows go in
   * per statement (a tenth less CPU than one each); the rowids of one INSERT are consecutive
   * (max + 1 each, and no other writer inside the transaction), which gives each attempt its request.
   */
  insert(rows: readonly RequestRow[]): void {
    this.db.transaction(() => {
      const attempts: unknown[] = [];
      let i = 0;
      for (; i + GROUP <= rows.length; i += GROUP) {
        const params: unknown[] = [];
        for (let j = i; j < i + GROUP; j++) pushRequest(rows[j], params);
        const last = Number(this.insertRequests.run(params).lastInsertRowid);
        for (let j = i; j < i + GROUP; j++) pushAttempts(rows[j], last - (i + GROUP - 1 - j), attempts);
      }
      for (; i < rows.length; i++) {
        const params: unknown[] = [];
        pushRequest(rows[i], params);
        pushAttempts(rows[i], Number(this.insertRequest.run(params).lastInsertRowid), attempts);
      }
      let a = 0;
      const width = ATTEMPT_COLUMNS * GROUP;
      for (; a + width <= attempts.length; a += width) this.insertAttempts.run(attempts.slice(a, a + width));
      for (; a < attempts.length; a += ATTEMPT_COLUMNS) this.insertAttempt.run(attempts.slice(a, a + ATTEMPT_COLUMNS));
    })();
  }

  openIncident(incident: IncidentOpen): void {
    this.insertIncident.run(incident.key, incident.route, incident.tier, incident.kind, incident.openedAt, JSON.stringify(incident.trigger));
  }

  closeIncident(key: string, closedAt: number, closedBy: string): void {
    this.closeIncidentStmt.run(closedAt, closedBy, key);
  }

  /** Deletes requests (with their attempts) and closed incidents older than `before`. Returns the requests deleted. */
  prune(before: number): number {
    return this.db
      .transaction(() => {
        this.db.prepare('DELETE FROM attempts WHERE request_seq IN (SELECT seq FROM requests WHERE started_at < ?)').run(before);
        const { changes } = this.db.prepare('DELETE FROM requests WHERE started_at < ?').run(before);
        this.db.prepare('DELETE FROM incidents WHERE closed_at IS NOT NULL AND closed_at < ?').run(before);
        this.db.prepare('DELETE FROM budget_windows WHERE window_end < ?').run(before);
        return changes;
      })
      .immediate();
  }

  dayTotals(from: number): DayTotals {
    const row = this.db
      .prepare(
        `SELECT count(*) AS requests, total(prompt_tokens) AS promptTokens, total(completion_tokens) AS completionTokens,
         total(cached_tokens) AS cachedTokens, total(cost_usd) AS costUsd, total(saved_usd) AS savedUsd,
         total(saver_tokens_before - saver_tokens_after) AS saverTokensSaved
       FROM requests WHERE started_at >= ?`,
      )
      .get(from) as DayTotals;
    return row;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
