import { isRecord } from '../../util/is-record.js';

/**
 * Claude Code's billing line: the first system block (or the start of a string system prompt)
 * is `x-anthropic-billing-header: cc_version=2.1.42.834; cc_entrypoint=cli; cch=65abc;`, and
 * in several versions its `cch` changes on every request. Anthropic reads it; any other server
 * reads it as prompt, and a prompt whose first line changes every turn is never found in a
 * local server's KV cache: each turn re-reads the whole conversation. So it is removed before
 * a Messages request reaches a server that is not Anthropic (vLLM's and SGLang's own Anthropic
 * endpoints drop it too; llama.cpp's pins its nonce). See docs/caching.md.
 */
const PREFIX = 'x-anthropic-billing-header:';
/** The prefix and its `key=value;` fields. */
const FIELDS = /^x-anthropic-billing-header:(?:[ \t]*[A-Za-z_][\w.-]*=[^;\n]*;)*/;
/** What may follow the fields on their line and still be the line's: spaces, or one more field its `;` was left off. */
const LINE_TAIL = /^[ \t]*(?:[A-Za-z_][\w.-]*=[^;\s]*)?[ \t]*\r?(?:\n|$)/;

/** `system` without the billing line; the same value when it has none (most requests: one string comparison). */
export function withoutBillingLine(system: unknown): unknown {
  if (typeof system === 'string') return system.startsWith(PREFIX) ? stripLine(system) : system;
  if (!Array.isArray(system) || system.length === 0) return system;
  const first: unknown = system[0];
  if (!isRecord(first) || typeof first.text !== 'string' || !first.text.startsWith(PREFIX)) return system;
  const rest = stripLine(first.text);
  // The line alone in its block (as Claude Code sends it): the block goes; else its text is what follows the line.
  return rest.trim() === '' ? system.slice(1) : [{ ...first, text: rest }, ...system.slice(1)];
}

/** The text after the billing line it starts with. */
function stripLine(text: string): string {
  const fields = FIELDS.exec(text)?.[0] ?? PREFIX;
  const after = text.slice(fields.length);
  const tail = LINE_TAIL.exec(after);
  if (tail) return after.slice(tail[0].length);
  // Prose right after the last `;` (two blocks joined without a newline) is the prompt's: only the fields go.
  if (fields.length > PREFIX.length) return after;
  // A line of a shape not seen yet: all of it goes.
  const newline = text.indexOf('\n');
  return newline === -1 ? '' : text.slice(newline + 1);
}
