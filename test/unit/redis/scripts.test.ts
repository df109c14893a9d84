import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { defineScripts } from '../../../src/redis/redis-scripts.js';

/**
 * The Lua behind the shared state, as it is registered on a connection. Redis hands a script as
 * many KEYS as the call says: a script that reads KEYS[3] while registered with two gets nil and
 * goes on, silently wrong; so each script's registered key count is the most it reads. (What the
 * scripts do is run against a real redis-server in test/integration/shared-state/.)
 */

function registered(): Map<string, { numberOfKeys?: number; lua: string }> {
  const definitions = new Map<string, { numberOfKeys?: number; lua: string }>();
  const connection = { defineCommand: (name: string, definition: { numberOfKeys?: number; lua: string }) => definitions.set(name, definition) };
  defineScripts(connection as unknown as Redis);
  return definitions;
}

function highestKeyRead(lua: string): number {
  return Math.max(0, ...[...lua.matchAll(/KEYS\[(\d+)\]/g)].map((match) => Number(match[1])));
}

describe('the shared state scripts, as registered', () => {
  it('registers each of them once: limits, budgets, idempotency records and weights', () => {
    expect([...registered().keys()].sort()).toEqual(
      [
        'llmBudgetCharge',
        'llmBudgetEnd',
        'llmBudgetReserve',
        'llmIdemAbandon',
        'llmIdemBegin',
        'llmIdemComplete',
        'llmIdemRenew',
        'llmLimitRenew',
        'llmLimitSettle',
        'llmLimitTake',
        'llmWeightsPut',
      ].sort(),
    );
  });

  it('a script of fixed keys reads exactly as many as it is registered with', () => {
    for (const [name, { numberOfKeys, lua }] of registered()) {
      if (numberOfKeys === undefined) continue;
      expect(highestKeyRead(lua), name).toBe(numberOfKeys);
    }
  });

  it("a script whose key count is the call's own (one key a budget window) walks #KEYS, and every script returns", () => {
    for (const [name, { numberOfKeys, lua }] of registered()) {
      if (numberOfKeys === undefined) expect(lua, name).toMatch(/#KEYS/);
      expect(lua, name).toMatch(/\breturn\b/);
    }
  });
});
