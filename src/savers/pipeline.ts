import type { ClientProtocol, SaverMeasure } from '../telemetry/events.js';
import { memoizedCounter, type TokenCounter } from '../tokens/count.js';
import type { BodyView } from './body-view.js';
import type { CountTokens, Edit, Saver } from './types.js';
import { viewOf } from './view.js';

/** A saver's own time (tokenizer time excluded) above this skips it for the request. */
export const SAVER_BUDGET_MS = 20;

export interface SaverOptions {
  budgetMs?: number;
  /** The clock savers are timed with (milliseconds). */
  now?: () => number;
  /** Also return what each applied saver changed (for `savers try`). */
  trace?: boolean;
}

/** A saver skipped for this request. */
export interface SaverFailure {
  saver: string;
  reason: 'threw' | 'overran';
  message: string;
}

/** One change an applied saver made, for diffs. */
export type SaverChange = { kind: 'rewrite'; path: string; before: string; after: string } | { kind: 'drop'; path: string; role: string; texts: string[] };

export interface SaversResult {
  /** The body to send: the one passed in when nothing changed, else a changed copy. */
  body: Record<string, unknown>;
  changed: boolean;
  /** One per saver, in order: tokens before and after it (equal when it was not applied). */
  measures: SaverMeasure[];
  failures: SaverFailure[];
  /** With `trace`: per saver, what it changed (empty when it was not applied). */
  changes?: SaverChange[][];
  /** With `trace`: per saver, its own time in ms (tokenizer time excluded). */
  ownMs?: number[];
}

/**
 * Runs a route's savers over a request body, in order, once. Each saver reads the conversation
 * view and returns edits; the pipeline times it, applies its edits, and re-measures. A saver
 * that throws or overruns is skipped (its edits never applied); a rewrite that is not fewer
 * tokens than the text it replaces is left out, and a saver whose result is not smaller in all
 * is undone, so savings are never negative. The body passed in is never modified.
 */
export function applySavers(
  protocol: ClientProtocol,
  body: Record<string, unknown>,
  savers: readonly Saver[],
  counter: TokenCounter,
  options: SaverOptions = {},
): SaversResult {
  const result: SaversResult = { body, changed: false, measures: [], failures: [] };
  if (savers.length === 0) return result;
  const view = viewOf(protocol, structuredClone(body));
  if (!view) return result;
  const memo = memoizedCounter(counter).count;
  const now = options.now ?? (() => performance.now());
  const budgetMs = options.budgetMs ?? SAVER_BUDGET_MS;
  if (options.trace) {
    result.changes = [];
    result.ownMs = [];
  }

  let counting = 0; // ms the current saver spent in the tokenizer
  const timedCount: CountTokens = (text) => {
    const started = now();
    const tokens = memo(text);
    counting += now() - started;
    return tokens;
  };

  let tokens = view.measure(memo);
  for (const saver of savers) {
    counting = 0;
    const started = now();
    let edits: readonly Edit[];
    try {
      edits = saver.run(view, timedCount);
    } catch (error) {
      result.ownMs?.push(now() - started - counting);
      skip(result, saver.name, tokens, 'threw', error instanceof Error ? error.message : String(error));
      continue;
    }
    const ownMs = now() - started - counting;
    result.ownMs?.push(ownMs);
    if (ownMs > budgetMs) {
      skip(result, saver.name, tokens, 'overran', `took ${ownMs.toFixed(1)} ms (budget ${budgetMs} ms)`);
      continue;
    }
    let applied: Applied;
    try {
      applied = applyEdits(view, edits, memo, options.trace === true);
    } catch (error) {
      skip(result, saver.name, tokens, 'threw', error instanceof Error ? error.message : String(error));
      continue;
    }
    const after = view.measure(memo);
    if (after >= tokens) {
      applied.undo();
      result.measures.push({ saver: saver.name, before: tokens, after: tokens });
      result.changes?.push([]);
      continue;
    }
    result.measures.push({ saver: saver.name, before: tokens, after });
    result.changes?.push(applied.changes);
    result.changed = true;
    tokens = after;
  }
  if (result.changed) result.body = view.finish();
  return result;
}

interface Applied {
  undo(): void;
  changes: SaverChange[];
}

/** Applies the edits worth applying (a rewrite must be fewer tokens than what it replaces). */
function applyEdits(view: BodyView, edits: readonly Edit[], count: CountTokens, trace: boolean): Applied {
  if (!Array.isArray(edits)) throw new Error('a saver must return a list of edits');
  const worth = edits.filter((edit) => edit.kind !== 'rewrite' || (typeof edit.text === 'string' && count(edit.text) < count(edit.part.text)));
  const changes = trace ? describe(worth) : [];
  return { undo: view.apply(worth), changes };
}

function describe(edits: readonly Edit[]): SaverChange[] {
  return edits.map((edit): SaverChange => {
    switch (edit.kind) {
      case 'rewrite':
        return { kind: 'rewrite', path: edit.part.path, before: edit.part.text, after: edit.text };
      case 'drop_part':
        return { kind: 'drop', path: edit.part.path, role: 'system', texts: [edit.part.text] };
      case 'drop_message':
        return {
          kind: 'drop',
          path: edit.message.path,
          role: edit.message.role,
          texts: [...edit.message.parts.map((p) => p.text), ...edit.message.fixedTexts],
        };
    }
  });
}

function skip(result: SaversResult, saver: string, tokens: number, reason: SaverFailure['reason'], message: string): void {
  result.measures.push({ saver, before: tokens, after: tokens, failed: true });
  result.failures.push({ saver, reason, message });
  result.changes?.push([]);
}
