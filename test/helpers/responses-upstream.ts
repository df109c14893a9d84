import type { Script, ScriptContext } from './fake-upstream.js';

/** Scripts for a FakeUpstream serving OpenAI's Responses API (a passthrough tier), with its exact event shapes. */

export class ResponsesScript {
  private sequence = 0;

  constructor(
    private readonly ctx: ScriptContext,
    readonly id = 'resp_upstream',
  ) {}

  event(type: string, data: Record<string, unknown>): void {
    this.ctx.raw(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...data })}\n\n`);
  }

  start(): void {
    this.ctx.startStream();
    const response = this.response('in_progress', []);
    this.event('response.created', { response });
    this.event('response.in_progress', { response });
  }

  text(words: string[], outputIndex = 0): void {
    const item = { id: 'msg_upstream', type: 'message', status: 'in_progress', role: 'assistant', content: [] };
    this.event('response.output_item.added', { output_index: outputIndex, item });
    this.event('response.content_part.added', {
      item_id: item.id,
      output_index: outputIndex,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    for (const delta of words) this.event('response.output_text.delta', { item_id: item.id, output_index: outputIndex, content_index: 0, delta, logprobs: [] });
    const text = words.join('');
    this.event('response.output_text.done', { item_id: item.id, output_index: outputIndex, content_index: 0, text, logprobs: [] });
    this.event('response.output_item.done', {
      output_index: outputIndex,
      item: { ...item, status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] },
    });
  }

  complete(
    output: unknown[],
    usage = {
      input_tokens: 30,
      input_tokens_details: { cached_tokens: 10 },
      output_tokens: 6,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 36,
    },
  ): void {
    this.event('response.completed', { response: { ...this.response('completed', output), usage } });
    this.ctx.res.end();
  }

  private response(status: string, output: unknown[]): Record<string, unknown> {
    return { id: this.id, object: 'response', created_at: 1764500000, status, model: 'gpt-5-mini', output, usage: null, error: null };
  }
}

/** A passthrough tier answering one text message. */
export function responsesTextStream(words: string[]): Script {
  return (ctx) => {
    const script = new ResponsesScript(ctx);
    script.start();
    script.text(words);
    script.complete([
      {
        id: 'msg_upstream',
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: words.join(''), annotations: [] }],
      },
    ]);
  };
}
