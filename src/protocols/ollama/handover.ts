import { isRecord } from '../../util/is-record.js';
import type { StreamPart } from '../core/stream-part.js';
import type { RelayHandover, StreamRenderer } from '../core/stream-output.js';
import type { OllamaRenderer } from './render.js';

/**
 * A relayed Ollama stream a renderer takes over (a tool call written as text after relayed
 * text): Ollama's lines carry no ids or open blocks, so what carries on is the model the lines
 * named and the index of the next tool call.
 */
export class OllamaHandover implements RelayHandover {
  private model: string | undefined;
  private calls = 0;

  constructor(private readonly make: () => OllamaRenderer) {}

  relayed(json: unknown, parts: readonly StreamPart[]): void {
    if (this.model === undefined && isRecord(json) && typeof json.model === 'string') this.model = json.model;
    for (const part of parts) if (part.type === 'tool-input-start') this.calls++;
  }

  renderer(): StreamRenderer {
    const renderer = this.make();
    renderer.continueAs(this.model, this.calls);
    return renderer;
  }
}
