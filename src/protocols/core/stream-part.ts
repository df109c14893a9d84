import type { FinishReason } from './neutral.js';
import type { Usage } from './usage.js';

/**
 * One piece of a streamed answer, as every wire's reader decodes it and every client's
 * renderer draws it: vercel/ai's LanguageModelV2StreamPart vocabulary, cut to what llm-route
 * carries. A block (a run of text, of reasoning, one tool call's input) opens with `*-start`,
 * grows by `*-delta` and closes with `*-end`, all naming it by `id`. Renderers close a block at
 * its `*-end` (and key tool calls by id) instead of guessing where it stops; they open text and
 * reasoning at the first delta, so an empty block is never drawn. A stream that breaks may leave
 * a block open: renderers close what is open when they end.
 *
 * What llm-route adds to vercel's vocabulary:
 * - `choice`: the Chat Completions choice a part belongs to, on a stream asked with n > 1 and
 *   only when it is not 0 (absent = choice 0). Content in any choice commits a relayed stream;
 *   a translation never carries n > 1, so renderers draw choice 0 alone.
 * - `reasoning-end.signature`: Anthropic signs a thinking block at its end (signature_delta), and
 *   only signed thinking can be sent back to Anthropic.
 * - `opaque`: content of a wire's own kind that no other protocol carries (a Responses custom or
 *   hosted tool item, a Messages citations delta, …): it commits the stream; renderers draw nothing.
 * Tool-call ids are the upstream's (a made-up `call_<n>` when it sends none); tool-input
 * deltas name their call by that id.
 */
export type StreamPart =
  | { type: 'text-start'; id: string; choice?: number }
  | { type: 'text-delta'; id: string; delta: string; choice?: number }
  | { type: 'text-end'; id: string; choice?: number }
  | { type: 'reasoning-start'; id: string; choice?: number }
  | { type: 'reasoning-delta'; id: string; delta: string; choice?: number }
  | { type: 'reasoning-end'; id: string; signature?: string; choice?: number }
  | { type: 'tool-input-start'; id: string; toolName: string; choice?: number }
  | { type: 'tool-input-delta'; id: string; delta: string; choice?: number }
  | { type: 'tool-input-end'; id: string; choice?: number }
  | { type: 'finish'; reason: FinishReason; choice?: number }
  | { type: 'usage'; usage: Partial<Usage> }
  | { type: 'error'; message: string }
  | { type: 'opaque'; text?: string };

/** A block a reader has open: what kind of part closes it, and its id (Anthropic's thinking also its signature). */
export interface OpenBlock {
  kind: 'text' | 'reasoning' | 'tool' | 'other';
  id: string;
  signature?: string;
}

/** Closes the block open at `index` of a wire that numbers its blocks (Messages' content blocks, Responses' output items). */
export function closeBlockAt(blocks: Array<OpenBlock | undefined>, index: unknown, parts: StreamPart[]): void {
  const block = typeof index === 'number' ? blocks[index] : undefined;
  if (!block) return;
  blocks[index as number] = undefined;
  const end = blockEnd(block);
  if (end) parts.push(end);
}

/** The part that closes an open block; null for a block of the wire's own kind (`opaque`), which has none. */
export function blockEnd(block: OpenBlock): StreamPart | null {
  switch (block.kind) {
    case 'text':
      return { type: 'text-end', id: block.id };
    case 'tool':
      return { type: 'tool-input-end', id: block.id };
    case 'reasoning':
      return block.signature === undefined ? { type: 'reasoning-end', id: block.id } : { type: 'reasoning-end', id: block.id, signature: block.signature };
    default:
      return null;
  }
}

/**
 * The runs of text and of reasoning on a wire that has no blocks (Ollama's lines, Gemini's
 * chunks): a run is one block, opened by its first delta and closed when the other kind starts, a
 * tool call comes or the answer ends. Writes into its reader's parts array.
 */
export class BlockRuns {
  private open: OpenBlock | null = null;
  private blocks = 0;

  constructor(private readonly parts: StreamPart[]) {}

  /** A delta into the open run of its kind, else a new one. */
  run(kind: 'text' | 'reasoning', delta: string): void {
    let open = this.open;
    if (open?.kind !== kind) {
      this.close();
      open = this.open = { kind, id: `${kind}-${this.blocks++}` };
      this.parts.push({ type: kind === 'text' ? 'text-start' : 'reasoning-start', id: open.id });
    }
    this.parts.push(kind === 'text' ? { type: 'text-delta', id: open.id, delta } : { type: 'reasoning-delta', id: open.id, delta });
  }

  /** Closes the open run, if any. */
  close(): void {
    const open = this.open;
    if (open === null) return;
    this.open = null;
    const end = blockEnd(open);
    if (end) this.parts.push(end);
  }

  /** A tool call that came whole (its name and all its arguments at once): the open run closed, then its start, its arguments as one delta, its end. */
  wholeCall(id: string, toolName: string, args: string): void {
    this.close();
    this.parts.push({ type: 'tool-input-start', id, toolName }, { type: 'tool-input-delta', id, delta: args }, { type: 'tool-input-end', id });
  }
}
