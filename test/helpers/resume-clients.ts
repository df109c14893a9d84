import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { RunningProxy } from './proxy.js';

/**
 * One streamed answer as a real SDK saw it: its text, the identities its events named (a
 * seamless resume shows exactly one of each), and whether the stream failed.
 */
export interface SeenStream {
  text: string;
  /** Chat: chunk ids; Messages: message ids and content block indexes; Responses: response ids, item ids, output/content indexes. */
  ids: Set<string>;
  indexes: Set<string>;
  /** The stream ended with the protocol's error (an SDK error, or Responses' error event). */
  failed: string | null;
  /** The SDK's accumulated final message text, when the stream completed. */
  finalText: string | null;
}

export type ClientProtocolName = 'chat' | 'responses' | 'messages';

export async function streamWith(protocol: ClientProtocolName, proxy: RunningProxy, prompt = 'write a sentence'): Promise<SeenStream> {
  const seen: SeenStream = { text: '', ids: new Set(), indexes: new Set(), failed: null, finalText: null };
  try {
    if (protocol === 'chat') await chat(proxy, prompt, seen);
    else if (protocol === 'responses') await responses(proxy, prompt, seen);
    else await messages(proxy, prompt, seen);
  } catch (err) {
    seen.failed = (err as Error).message;
  }
  return seen;
}

async function chat(proxy: RunningProxy, prompt: string, seen: SeenStream): Promise<void> {
  const client = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'x', maxRetries: 0 });
  const stream = await client.chat.completions.create({ model: 'chat', stream: true, messages: [{ role: 'user', content: prompt }] });
  let finished = false;
  for await (const chunk of stream) {
    seen.ids.add(chunk.id);
    for (const choice of chunk.choices) {
      seen.indexes.add(String(choice.index));
      seen.text += choice.delta.content ?? '';
      if (choice.finish_reason) finished = true;
    }
  }
  if (finished) seen.finalText = seen.text;
}

async function responses(proxy: RunningProxy, prompt: string, seen: SeenStream): Promise<void> {
  const client = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'x', maxRetries: 0 });
  const stream = client.responses.stream({ model: 'chat', input: prompt });
  for await (const event of stream) {
    if (event.type === 'response.created') seen.ids.add(event.response.id);
    if (event.type === 'response.output_text.delta') {
      seen.ids.add(event.item_id);
      seen.indexes.add(`${event.output_index}/${event.content_index}`);
      seen.text += event.delta;
    }
    if (event.type === 'error') seen.failed = event.message;
    if (event.type === 'response.completed') seen.ids.add(event.response.id);
  }
  if (seen.failed === null) seen.finalText = (await stream.finalResponse()).output_text;
}

async function messages(proxy: RunningProxy, prompt: string, seen: SeenStream): Promise<void> {
  const client = new Anthropic({ baseURL: proxy.origin, apiKey: 'x', maxRetries: 0 });
  const stream = client.messages.stream({ model: 'chat', max_tokens: 200, messages: [{ role: 'user', content: prompt }] });
  for await (const event of stream) {
    if (event.type === 'message_start') seen.ids.add(event.message.id);
    if (event.type === 'content_block_start') seen.indexes.add(String(event.index));
    if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
      seen.indexes.add(String(event.index));
      seen.text += event.delta.text;
    }
  }
  const final = await stream.finalMessage();
  seen.finalText = final.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}
