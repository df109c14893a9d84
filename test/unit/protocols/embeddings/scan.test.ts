import { describe, expect, it } from 'vitest';
import type { EmbeddingAnswer } from '../../../../src/protocols/core/embedding-codec.js';
import { registryEmbeddingWire } from './wires.js';
import { vectorBase64, vectorFor } from '../../../helpers/embedding-upstream.js';

/** A relayed answer is read off its bytes: how many vectors, the first one's width, its encoding and tokens; never decoded. */

const openai = registryEmbeddingWire('chat');
const ollama = registryEmbeddingWire('ollama');

const texts = ['a', 'b', 'c'];

/** A decoded answer with each vector still in its bytes shown as their text. */
function readable(answer: EmbeddingAnswer | 'not_json') {
  if (answer === 'not_json') return answer;
  return { ...answer, vectors: answer.vectors.map((v) => ('json' in v ? v.json.toString() : v)) };
}

describe("an OpenAI-shaped answer's scan", () => {
  it('reads llama-server’s, OpenAI’s and vLLM’s answers, numbers or base64, whatever their key order', () => {
    const numbers = texts.map((t) => vectorFor(t, 5));
    const llama = {
      data: numbers.map((embedding, index) => ({ embedding, index, object: 'embedding' })),
      model: 'm',
      object: 'list',
      usage: { prompt_tokens: 7, total_tokens: 7 },
    };
    expect(openai.scan(Buffer.from(JSON.stringify(llama)))).toEqual({ count: 3, width: 5, encoding: 'float', promptTokens: 7 });
    const own = {
      object: 'list',
      data: numbers.map((v, index) => ({ object: 'embedding', index, embedding: vectorBase64(v) })),
      model: 'm',
      usage: { prompt_tokens: 3, total_tokens: 3 },
    };
    expect(openai.scan(Buffer.from(JSON.stringify(own, null, 2)))).toEqual({ count: 3, width: 5, encoding: 'base64', promptTokens: 3 });
    const vllm = {
      id: 'embd-1',
      object: 'list',
      created: 1,
      model: 'm',
      data: [{ index: 0, object: 'embedding', embedding: [0.5, -1e-5, 2] }],
      usage: { prompt_tokens: 1, total_tokens: 1, completion_tokens: 0, prompt_tokens_details: null },
    };
    expect(openai.scan(Buffer.from(JSON.stringify(vllm)))).toEqual({ count: 1, width: 3, encoding: 'float', promptTokens: 1 });
  });

  it('a slash escaped in base64 is read as JSON; no usage is undefined tokens; a body that is no answer is not_json', () => {
    const escaped = `{"data":[{"embedding":"${vectorBase64([1, 2, 3, 4]).replace(/\//g, '\\/')}","index":0}]}`;
    expect(openai.scan(Buffer.from(escaped))).toEqual({ count: 1, width: 4, encoding: 'base64', promptTokens: undefined });
    expect(openai.scan(Buffer.from('{"error":{"message":"no"}}'))).toBe('not_json');
    expect(openai.scan(Buffer.from('<html>'))).toBe('not_json');
    expect(openai.scan(Buffer.from('{"data":[{"embedding":{"x":1}}]}'))).toBe('not_json');
  });
});

describe("an Ollama answer's scan", () => {
  it('counts the vectors of `embeddings` and reads prompt_eval_count', () => {
    const body = JSON.stringify({ model: 'm', embeddings: texts.map((t) => vectorFor(t, 6)), total_duration: 1, load_duration: 1, prompt_eval_count: 9 });
    expect(ollama.scan(Buffer.from(body))).toEqual({ count: 3, width: 6, encoding: 'float', promptTokens: 9 });
    expect(ollama.scan(Buffer.from('{"model":"m","embeddings":[ ]}'))).toEqual({ count: 0, width: 0, encoding: 'float', promptTokens: undefined });
    expect(ollama.scan(Buffer.from('{"model":"m","embeddings":[[1,2],[3'))).toBe('not_json');
    expect(ollama.scan(Buffer.from('{"error":"model \'m\' not found"}'))).toBe('not_json');
  });
});

describe('decoding without parsing a number', () => {
  it('an OpenAI answer in order: its vectors’ text as written, numbers or base64; out of order, parsed and put in order', () => {
    const written =
      '{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,-1e-05,2]},{"object":"embedding","index":1,"embedding":"AAAAPw=="}],"usage":{"prompt_tokens":4,"total_tokens":4}}';
    expect(readable(openai.decode(Buffer.from(written)))).toEqual({ vectors: ['[0.5,-1e-05,2]', { base64: 'AAAAPw==' }], promptTokens: 4 });
    const shuffled = {
      data: [
        { index: 1, embedding: [2] },
        { index: 0, embedding: [1] },
      ],
      model: 'm',
    };
    expect(openai.decode(Buffer.from(JSON.stringify(shuffled)))).toEqual({ vectors: [[1], [2]], promptTokens: undefined, model: 'm' });
  });

  it('an Ollama answer: each vector’s text', () => {
    const written = '{"model":"m","embeddings":[[0.1,0.2],[0.3,0.4]],"total_duration":1,"load_duration":1,"prompt_eval_count":2}';
    expect(readable(ollama.decode(Buffer.from(written)))).toEqual({ vectors: ['[0.1,0.2]', '[0.3,0.4]'], promptTokens: 2 });
    expect(ollama.decode(Buffer.from('{"error":"no"}'))).toBe('not_json');
  });
});
