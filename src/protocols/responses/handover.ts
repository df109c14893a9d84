import { isRecord } from '../../util/is-record.js';
import type { RelayHandover, StreamRenderer } from '../core/stream-output.js';
import type { Item, ResponsesRenderer } from './render.js';

/**
 * A relayed Responses stream a renderer takes over: the response's id, time and model (from
 * response.created), the next sequence number, and the output items the client saw, the one
 * still open with its text so far, so the renderer's items come after them and its
 * response.completed lists every one.
 */
export class ResponsesHandover implements RelayHandover {
  private response = { id: '', createdAt: 0, model: '' };
  private sequence = 0;
  private readonly output: Item[] = [];
  private open: { index: number; text: string } | null = null;

  constructor(private readonly make: () => ResponsesRenderer) {}

  relayed(json: unknown): void {
    if (!isRecord(json)) return;
    if (typeof json.sequence_number === 'number') this.sequence = json.sequence_number + 1;
    const index = typeof json.output_index === 'number' ? json.output_index : -1;
    switch (json.type) {
      case 'response.created': {
        const response = isRecord(json.response) ? json.response : {};
        if (typeof response.id === 'string') this.response.id = response.id;
        if (typeof response.created_at === 'number') this.response.createdAt = response.created_at;
        if (typeof response.model === 'string') this.response.model = response.model;
        return;
      }
      case 'response.output_item.added':
        if (index < 0 || !isRecord(json.item)) return;
        this.output[index] = { ...json.item } as Item;
        this.open = json.item.type === 'message' || json.item.type === 'reasoning' ? { index, text: '' } : null;
        return;
      case 'response.output_item.done':
        if (index < 0 || !isRecord(json.item)) return;
        this.output[index] = { ...json.item } as Item;
        if (this.open?.index === index) this.open = null;
        return;
      case 'response.output_text.delta':
      case 'response.reasoning_summary_text.delta':
        if (this.open?.index === index && typeof json.delta === 'string') this.open.text += json.delta;
        return;
    }
  }

  renderer(): StreamRenderer {
    const renderer = this.make();
    renderer.continueAs({ ...this.response, sequence: this.sequence, output: this.output, open: this.open });
    return renderer;
  }
}
