import type { Database } from 'better-sqlite3';

/**
 * The usage database's schema, one step per `user_version`. Append new steps; never edit one
 * that has shipped. Times are epoch milliseconds (UTC).
 */
const STEPS: string[] = [
  // 1: requests, attempts, incidents, budget counters
  `CREATE TABLE requests (
     seq INTEGER PRIMARY KEY,
     id TEXT NOT NULL,
     started_at INTEGER NOT NULL,
     protocol TEXT NOT NULL,
     route TEXT NOT NULL,
     tier TEXT,
     provider TEXT,
     model TEXT,
     status INTEGER NOT NULL,
     outcome TEXT NOT NULL,
     stream INTEGER NOT NULL,
     ttft_ms REAL,
     duration_ms REAL NOT NULL,
     prompt_tokens INTEGER NOT NULL,
     completion_tokens INTEGER NOT NULL,
     cached_tokens INTEGER NOT NULL,
     token_source TEXT,
     cost_usd REAL NOT NULL,
     saved_usd REAL NOT NULL,
     chunk_errors INTEGER NOT NULL,
     failover INTEGER NOT NULL,
     saver_tokens_before INTEGER,
     saver_tokens_after INTEGER,
     saver_failures INTEGER NOT NULL
   );
   CREATE INDEX requests_by_time ON requests (started_at);
   CREATE TABLE attempts (
     request_seq INTEGER NOT NULL,
     n INTEGER NOT NULL,
     tier TEXT NOT NULL,
     attempt INTEGER NOT NULL,
     outcome TEXT NOT NULL,
     status INTEGER,
     ms REAL NOT NULL,
     PRIMARY KEY (request_seq, n)
   ) WITHOUT ROWID;
   CREATE TABLE incidents (
     id INTEGER PRIMARY KEY,
     key TEXT NOT NULL UNIQUE,
     route TEXT NOT NULL,
     tier TEXT NOT NULL,
     kind TEXT NOT NULL,
     opened_at INTEGER NOT NULL,
     closed_at INTEGER,
     trigger TEXT NOT NULL,
     closed_by TEXT
   );
   CREATE TABLE budget_windows (
     scope TEXT NOT NULL,
     per TEXT NOT NULL,
     unit TEXT NOT NULL,
     window_start INTEGER NOT NULL,
     window_end INTEGER NOT NULL,
     spent REAL NOT NULL DEFAULT 0,
     reserved REAL NOT NULL DEFAULT 0,
     PRIMARY KEY (scope, per, unit, window_start)
   );
   CREATE TABLE budget_holds (
     reservation TEXT NOT NULL,
     scope TEXT NOT NULL,
     per TEXT NOT NULL,
     unit TEXT NOT NULL,
     window_start INTEGER NOT NULL,
     amount REAL NOT NULL,
     expires_at INTEGER NOT NULL,
     PRIMARY KEY (reservation, scope, per, unit)
   );
   CREATE INDEX budget_holds_by_expiry ON budget_holds (expires_at);`,
  // 2: a stream that broke on a resume route: how it was resumed and how it went ("continue:ok", "replay:diverged").
  `ALTER TABLE requests ADD COLUMN resumed TEXT`,
  // 3: a tier that cut the prompt silently (docs/fit.md): {"sent":N,"read":M}
  'ALTER TABLE requests ADD COLUMN prompt_truncated TEXT;',
  // 4: a tool call the model wrote as text (docs/tool-text.md): {"format","calls","repaired","result"}
  'ALTER TABLE requests ADD COLUMN tool_text TEXT;',
  // 5: whose credential paid for the answer: 'client' when its tier was sent the client's own (api_key: from_client), else null
  'ALTER TABLE requests ADD COLUMN credential TEXT;',
  // 6: the llm-route process (a serve, an exec) that served the request: exec's exit summary and `usage --run` read one run's rows
  'ALTER TABLE requests ADD COLUMN run TEXT;',
  // 7: whether the tier's server reported its cached prompt tokens (1) or said nothing of a cache (0), for a hit rate that is not diluted by servers that never say
  'ALTER TABLE requests ADD COLUMN cache_reported INTEGER;',
  // 8: what the request asked for (docs/embeddings.md): 'chat' (every row before this step) or 'embeddings'
  "ALTER TABLE requests ADD COLUMN kind TEXT NOT NULL DEFAULT 'chat';",
];

export const SCHEMA_VERSION = STEPS.length;

/** Brings the database to SCHEMA_VERSION, each step in its own transaction. Refuses a newer file. */
export function migrate(db: Database): void {
  // One step per IMMEDIATE transaction, the version read inside it: another process opening
  // the same file at the same moment may have done the step meanwhile (it must not run twice).
  for (;;) {
    const migrated = db
      .transaction((): boolean => {
        const version = db.pragma('user_version', { simple: true }) as number;
        if (version > SCHEMA_VERSION) {
          throw new Error(`the usage database has schema version ${version}, newer than this llm-route knows (${SCHEMA_VERSION}); upgrade llm-route`);
        }
        if (version === SCHEMA_VERSION) return true;
        db.exec(STEPS[version]);
        db.pragma(`user_version = ${version + 1}`);
        return false;
      })
      .immediate();
    if (migrated) return;
  }
}
