import { isRecord } from '../../util/is-record.js';
import type { StreamPart } from '../core/stream-part.js';
import type { RelayHandover, StreamRenderer } from '../core/stream-output.js';
import { mergeUsage, type Usage } from '../core/usage.js';
import type { MessagesRenderer } from './render.js';

/**
 * A relayed Messages stream a renderer takes over: the content blocks the client saw (how many,
 * and the text or thinking block still open, which the renderer goes on in or closes) and the
 * usage reported so far (message_start's input tokens), which the final message_delta repeats.
 */
export class MessagesHandover implements RelayHandover {
  private open: { type: 'text' | 'thinking'; index: number } | null = null;
  private nextBlock = 0;
  private usage: Usage | undefined;

  constructor(private readonly make: () => MessagesRenderer) {}

  relayed(json: unknown, parts: readonly StreamPart[]): void {
    if (!isRecord(json) || typeof json.type !== 'string') return;
    const index = typeof json.index === 'number' ? json.index : -1;
    if (json.type === 'content_block_start' && index >= 0) {
      const type = isRecord(json.content_block) ? json.content_block.type : undefined;
      this.nextBlock = Math.max(this.nextBlock, index + 1);
      this.open = type === 'text' || type === 'thinking' ? { type, index } : null;
    } else if (json.type === 'content_block_stop') {
      if (this.open?.index === index) this.open = null;
    } else if (json.type === 'message_start' || json.type === 'message_delta') {
      for (const part of parts) if (part.type === 'usage') this.usage = mergeUsage(this.usage, part.usage);
    }
  }

  renderer(): StreamRenderer {
    const renderer = this.make();
    renderer.continueAs({ open: this.open, nextBlock: this.nextBlock, usage: this.usage });
    return renderer;
  }
}
