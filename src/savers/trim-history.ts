import { messageTokens } from './body-view.js';
import type { Edit, Saver, ViewMessage } from './types.js';

export interface TrimHistoryOptions {
  max_tokens: number;
  keep_last: number;
}

/**
 * `trim_history`: while the conversation is over `max_tokens`, its oldest messages go. System
 * messages always stay, and so do the last `keep_last` other messages. A tool call and the
 * results answering it (and a Responses reasoning item and what follows it) go together or not
 * at all, and the conversation left opens with a user turn, not with an answer whose question
 * was dropped (in an agent loop that is the task itself, kept while the tool turns after it go).
 */
export function trimHistorySaver(options: TrimHistoryOptions): Saver {
  return {
    name: 'trim_history',
    run(view, count) {
      const messages = view.messages;
      const sizes = messages.map((message) => messageTokens(message, count));
      let total = sizes.reduce((a, b) => a + b, 0);
      if (total <= options.max_tokens) return [];

      const groups = toolGroups(messages);
      const isProtected = protectedGroups(messages, groups, options.keep_last);
      const { order, tokens, first } = summarize(messages, groups, sizes);

      // The groups dropped are always the oldest few: `drop` of them, in `order`.
      let drop = 0;
      while (drop < order.length && total > options.max_tokens && !isProtected.has(order[drop])) total -= tokens.get(order[drop++]) ?? 0;
      if (drop === 0) return [];
      const dropped = new Set(order.slice(0, drop));
      // What is left must open with the user speaking, not with a reply to a dropped question:
      // drop on to the next user turn; when a kept message stands in the way (an agent loop, where
      // every later "user" turn is a tool result), keep the last dropped user turn to open with.
      const opensWithUser = (at: number): boolean => at >= order.length || messages[first.get(order[at]) ?? 0].role === 'user';
      if (!opensWithUser(drop)) {
        let on = drop;
        while (on < order.length && !opensWithUser(on) && !isProtected.has(order[on])) dropped.add(order[on++]);
        if (on === order.length || !opensWithUser(on)) {
          for (let i = drop; i < on; i++) dropped.delete(order[i]);
          const opener = order.slice(0, drop).findLast((_, i) => opensWithUser(i));
          if (opener !== undefined) dropped.delete(opener);
        }
      }
      if (dropped.size === 0) return [];
      const edits: Edit[] = [];
      messages.forEach((message, i) => {
        if (groups[i] !== -1 && dropped.has(groups[i])) edits.push({ kind: 'drop_message', message });
      });
      return edits;
    },
  };
}

/** For each message, the id of the group it must go or stay with (-1 for system messages, which stay). */
function toolGroups(messages: readonly ViewMessage[]): number[] {
  const parent = messages.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]];
    return i;
  };
  const join = (a: number, b: number): void => {
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
  };
  const caller = new Map<string, number>();
  messages.forEach((message, i) => {
    if (message.role === 'system') return;
    for (const id of message.calls) if (!caller.has(id)) caller.set(id, i);
  });
  messages.forEach((message, i) => {
    if (message.role === 'system') return;
    for (const id of message.answers) {
      const call = caller.get(id);
      if (call !== undefined) join(call, i);
    }
    const next = messages[i + 1];
    if (message.stickyNext && next && next.role !== 'system') join(i, i + 1);
  });
  return messages.map((message, i) => (message.role === 'system' ? -1 : find(i)));
}

/** The groups holding one of the last `keepLast` non-system messages. */
function protectedGroups(messages: readonly ViewMessage[], groups: number[], keepLast: number): Set<number> {
  const kept = new Set<number>();
  let left = keepLast;
  for (let i = messages.length - 1; i >= 0 && left > 0; i--) {
    if (groups[i] === -1) continue;
    kept.add(groups[i]);
    left--;
  }
  return kept;
}

/** Group ids oldest first (by their first message), each group's tokens and first message. */
function summarize(messages: readonly ViewMessage[], groups: number[], sizes: number[]) {
  const order: number[] = [];
  const tokens = new Map<number, number>();
  const first = new Map<number, number>();
  messages.forEach((_, i) => {
    const group = groups[i];
    if (group === -1) return;
    if (!first.has(group)) {
      first.set(group, i);
      order.push(group);
    }
    tokens.set(group, (tokens.get(group) ?? 0) + sizes[i]);
  });
  return { order, tokens, first };
}
