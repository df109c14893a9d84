import { tokenCounter, type TokenCounter } from '../../../src/tokens/count.js';
import { applySavers, type SaverOptions, type SaversResult } from '../../../src/savers/pipeline.js';
import type { Saver } from '../../../src/savers/types.js';
import type { ClientProtocol } from '../../../src/telemetry/events.js';

let counter: TokenCounter | undefined;

/** The real o200k_base counter (loaded once per test file). */
export async function o200k(): Promise<TokenCounter> {
  return (counter ??= await tokenCounter('o200k_base'));
}

/** A clock that never moves: a test not about the time budget must not depend on how loaded the machine is. */
export const stoppedClock = (): number => 0;

/** Runs savers with the real tokenizer (and a stopped clock unless `options.now` is given). */
export async function run(protocol: ClientProtocol, body: Record<string, unknown>, savers: Saver[], options?: SaverOptions): Promise<SaversResult> {
  return applySavers(protocol, body, savers, await o200k(), { now: stoppedClock, ...options });
}

/** A deep, frozen copy: a saver that touched the caller's body would throw. */
export function frozen<T>(value: T): T {
  const copy = structuredClone(value);
  const freeze = (v: unknown): void => {
    if (typeof v !== 'object' || v === null) return;
    Object.freeze(v);
    for (const inner of Object.values(v)) freeze(inner);
  };
  freeze(copy);
  return copy;
}

/** Lines of text that tokenize to about `n` tokens each... a long log. */
export function logLines(n: number, prefix = 'INFO'): string {
  return Array.from(
    { length: n },
    (_, i) => `2024-05-01T12:00:${String(i % 60).padStart(2, '0')}Z ${prefix} worker-${i % 7} processed batch ${i} in ${(i * 37) % 1000} ms`,
  ).join('\n');
}
