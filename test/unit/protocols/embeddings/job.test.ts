import { describe, expect, it, vi } from 'vitest';
import type { ClientRequest } from '../../../../src/protocols/core/types.js';
import { EmbeddingJob } from '../../../../src/protocols/embeddings/embedding-job.js';
import { embeddingsCodec } from '../../../../src/protocols/registry.js';
import { tier } from '../../../helpers/config.js';
import { vectorFor } from '../../../helpers/embedding-upstream.js';
import { registryEmbeddingWire } from './wires.js';

/** An embeddings batch bound to one tier: relayed as its bytes when it can be, else split, decoded and joined in order. */

const codec = embeddingsCodec('chat');
const client = codec?.embeddings;

function request(body: Record<string, unknown>): ClientRequest {
  const parsed = codec?.parse({ model: 'embed', ...body }, {});
  if (!parsed?.ok) throw new Error('not parsed');
  return parsed.request;
}

/** llama-server's answer to `inputs`. */
function answer(inputs: string[]): Buffer {
  const data = inputs.map((text, index) => ({ embedding: vectorFor(text, 4), index, object: 'embedding' }));
  return Buffer.from(JSON.stringify({ model: 'm', object: 'list', usage: { prompt_tokens: inputs.length, total_tokens: inputs.length }, data }));
}

describe('an embeddings job', () => {
  it('one request in the client’s own protocol: relayed, the answer is the very bytes the server sent, never decoded', () => {
    const wire = registryEmbeddingWire('chat');
    const decode = vi.spyOn(wire, 'decode');
    const job = EmbeddingJob.plan(tier('box', { embedding: { space: 's', max_batch: undefined } }), client!, request({ input: ['a', 'b'] }), ['a', 'b']);
    if ('unsupported' in job) throw new Error(job.unsupported);
    expect([job.relays, job.requests.length]).toEqual([true, 1]);
    const body = answer(['a', 'b']);
    const done = job.finish([body], 'application/json', performance.now());
    expect(done).toMatchObject({ count: 2, width: 4, promptTokens: 2 });
    expect('body' in done && done.body).toBe(body);
    expect(decode).not.toHaveBeenCalled();
    decode.mockRestore();
  });

  it('a batch over max_batch: its parts in order, their answers joined, indexes renumbered, tokens summed', () => {
    const job = EmbeddingJob.plan(tier('box', { embedding: { space: 's', max_batch: 2 } }), client!, request({ input: ['a', 'b', 'c'] }), ['a', 'b', 'c']);
    if ('unsupported' in job) throw new Error(job.unsupported);
    expect(job.relays).toBe(false);
    expect(job.requests.map((r) => JSON.parse(r.body).input)).toEqual([['a', 'b'], ['c']]);
    const done = job.finish([answer(['a', 'b']), answer(['c'])], 'application/json', performance.now());
    if (!('body' in done)) throw new Error(done.bad);
    const joined = JSON.parse(done.body.toString()) as { data: { index: number; embedding: number[] }[]; usage: { prompt_tokens: number } };
    expect(joined.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(joined.data.map((d) => d.embedding)).toEqual(['a', 'b', 'c'].map((t) => vectorFor(t, 4)));
    expect(joined.usage.prompt_tokens).toBe(3);
  });

  it('parts of different widths are no answer', () => {
    const job = EmbeddingJob.plan(tier('box', { embedding: { space: 's', max_batch: 1 } }), client!, request({ input: ['a', 'b'] }), ['a', 'b']);
    if ('unsupported' in job) throw new Error(job.unsupported);
    const wider = Buffer.from(JSON.stringify({ data: [{ embedding: [1, 2, 3], index: 0 }] }));
    expect(job.finish([answer(['a']), wider], 'application/json', performance.now())).toEqual({
      bad: 'the embeddings answers hold vectors of different widths',
    });
  });
});
