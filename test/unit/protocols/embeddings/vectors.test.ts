import { describe, expect, it } from 'vitest';
import { joinAnswers, splitBatch } from '../../../../src/protocols/embeddings/batches.js';
import { AnswerWriter, vectorBase64, vectorJson, vectorNumbers, vectorWidth } from '../../../../src/protocols/embeddings/vectors.js';
import { vectorBase64 as referenceBase64 } from '../../../helpers/embedding-upstream.js';

describe('a vector, numbers or base64', () => {
  it('base64 is little-endian float32, as OpenAI writes it and its SDK reads it', () => {
    const numbers = [0.5, -0.25, 1e-3, 3];
    const text = vectorBase64(numbers);
    expect(text).toBe(referenceBase64(numbers));
    expect(vectorWidth({ base64: text })).toBe(4);
    expect(Array.from(vectorNumbers({ base64: text }))).toEqual([0.5, -0.25, Math.fround(1e-3), 3]);
    expect(vectorJson({ base64: text }, 'base64')).toBe(`"${text}"`);
    expect(vectorJson({ base64: text }, 'float')).toBe(JSON.stringify([0.5, -0.25, Math.fround(1e-3), 3]));
    expect(vectorJson(numbers, 'float')).toBe('[0.5,-0.25,0.001,3]');
  });

  it('a vector kept as its bytes: written as they came (no string made of them), decoded only for base64', () => {
    const json = { json: Buffer.from('[0.5,-0.25,1e-3]') };
    expect(vectorWidth(json)).toBe(3);
    expect(vectorWidth({ json: Buffer.from('[ ]') })).toBe(0);
    expect(vectorWidth({ json: Buffer.from('[7]') })).toBe(1);
    expect(vectorJson(json, 'float')).toBe('[0.5,-0.25,1e-3]');
    expect(vectorJson(json, 'base64')).toBe(`"${referenceBase64([0.5, -0.25, 1e-3])}"`);
    const written = new AnswerWriter('float').write('{"v":[').vector(json).write(',').vector([1, 2]).write(']}').done();
    expect(written.toString()).toBe('{"v":[[0.5,-0.25,1e-3],[1,2]]}');
    expect(new AnswerWriter('base64').write('[').vector(json).write(']').done().toString()).toBe(`["${referenceBase64([0.5, -0.25, 1e-3])}"]`);
  });

  it('a width from base64 alone, for every padding', () => {
    for (const width of [1, 2, 3, 5, 768]) expect(vectorWidth({ base64: referenceBase64(Array.from({ length: width }, (_, i) => i)) })).toBe(width);
  });
});

describe('a batch', () => {
  it('is split in order into parts of at most max; an empty one is one empty part', () => {
    expect(splitBatch(['a', 'b', 'c', 'd', 'e'], 2)).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    expect(splitBatch(['a'], 256)).toEqual([['a']]);
    expect(splitBatch([], 256)).toEqual([[]]);
  });

  it('joins answers in order, tokens summed, unknown when a part reported none', () => {
    const joined = joinAnswers([
      { vectors: [[1], [2]], promptTokens: 3, model: 'm' },
      { vectors: [[3]], promptTokens: 4 },
    ]);
    expect(joined).toEqual({ vectors: [[1], [2], [3]], promptTokens: 7, model: 'm' });
    expect(
      joinAnswers([
        { vectors: [[1]], promptTokens: 3 },
        { vectors: [[2]], promptTokens: undefined },
      ]).promptTokens,
    ).toBeUndefined();
  });
});
