import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../../src/usage/migrations.js';
import { requestRow } from '../../../src/usage/request-row.js';
import type { PriceBook } from '../../../src/usage/price-book.js';
import { UsageStore } from '../../../src/usage/store.js';
import { finished, readRequests, useTempDirs } from '../../helpers/usage-kit.js';

const tempDir = useTempDirs();

describe("the usage log's kind column (docs/usage.md)", () => {
  it('a database from before it is migrated in place: its rows read as chat; new rows say embeddings when they are', () => {
    const path = join(tempDir(), 'usage.db');
    const book: PriceBook = { tiers: {}, firstPriced: {}, local: {} };
    // A database as the previous version left it: one chat row, no `kind`, schema one step behind.
    const old = new UsageStore(path);
    old.insert([requestRow(finished({ id: 'before' }), book, undefined)]);
    old.db.exec('ALTER TABLE requests DROP COLUMN kind');
    old.db.pragma(`user_version = ${SCHEMA_VERSION - 1}`);
    old.db.close();

    const store = new UsageStore(path);
    store.insert([
      requestRow(finished({ id: 'vectors', embeddings: { inputs: 3, width: 768 }, usage: { prompt_tokens: 9, completion_tokens: 0 } }), book, undefined),
    ]);
    store.db.close();
    const rows = readRequests(path);
    expect(rows.map((row) => [row.id, row.kind])).toEqual([
      ['before', 'chat'],
      ['vectors', 'embeddings'],
    ]);
    const db = new Database(path, { readonly: true });
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    db.close();
  });
});
