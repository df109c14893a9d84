import type { StreamPart } from './stream-part.js';

/** One tool call whose arguments are complete: its id, name and arguments as JSON text. */
export interface WholeCall {
  id: string;
  name: string;
  args: string;
}

/**
 * Tool calls gathered whole from a stream's parts, for a protocol that sends each call in one
 * piece (Ollama's `tool_calls` line, Gemini's `functionCall` part): a call opens at its
 * `tool-input-start`, grows by its deltas and is whole at its `tool-input-end`.
 */
export class WholeCalls {
  private readonly pending = new Map<string, { name: string; args: string }>();

  /** The call this part completes, if any (a start or a delta is kept until its end). */
  take(part: StreamPart): WholeCall | undefined {
    if (part.type === 'tool-input-start') this.pending.set(part.id, { name: part.toolName, args: '' });
    else if (part.type === 'tool-input-delta') {
      const call = this.pending.get(part.id);
      if (call) call.args += part.delta;
    } else if (part.type === 'tool-input-end') {
      const call = this.pending.get(part.id);
      if (!call) return undefined;
      this.pending.delete(part.id);
      return { id: part.id, ...call };
    }
    return undefined;
  }

  /** The calls still open when the stream ended (a break inside their arguments): what there is of them. */
  drain(): WholeCall[] {
    const open = [...this.pending].map(([id, call]) => ({ id, ...call }));
    this.pending.clear();
    return open;
  }
}
