import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach } from 'vitest';
import type { RequestFinished } from '../../src/telemetry/events.js';

/** Fresh temp dirs, removed after each test. Call once at the top level of a test file. */
export function useTempDirs(): () => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), 'llm-route-usage-'));
    dirs.push(dir);
    return dir;
  };
}

/** Every request row of a usage database, oldest first (read with plain SQL: what is really in the file). */
export function readRequests(path: string): Array<Record<string, unknown>> {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT * FROM requests ORDER BY seq').all() as Array<Record<string, unknown>>;
  } finally {
    db.close();
  }
}

export function readAttempts(path: string): Array<Record<string, unknown>> {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT r.id AS request_id, a.* FROM attempts a JOIN requests r ON r.seq = a.request_seq ORDER BY a.request_seq, a.n').all() as Array<
      Record<string, unknown>
    >;
  } finally {
    db.close();
  }
}

let nextId = 1;

/** A synthetic request_end event, as the request path emits it (for writer-level tests). */
export function finished(fields: Partial<RequestFinished> = {}): RequestFinished {
  return {
    type: 'request_end',
    id: `req-${nextId++}`,
    route: 'chat',
    tier: 'cloud',
    provider: 'p_cloud',
    model: 'cloud-model',
    protocol: 'chat',
    status: 200,
    outcome: 'ok',
    stream: true,
    committed: true,
    attempts: [{ tier: 'cloud', attempt: 1, outcome: 'ok', status: 200, ms: 120 }],
    ttftMs: 130,
    durationMs: 400,
    startedAt: Date.now(),
    usage: { prompt_tokens: 100, completion_tokens: 50 },
    chunkErrors: 0,
    ...fields,
  };
}
