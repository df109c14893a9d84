import type { EmbeddingAnswer, EmbeddingInput } from '../core/embedding-codec.js';

/** A batch as requests of at most `max` inputs each, in order (an empty batch: one empty part, which is never sent). */
export function splitBatch(inputs: readonly EmbeddingInput[], max: number): (readonly EmbeddingInput[])[] {
  if (inputs.length <= max) return [inputs];
  const parts: EmbeddingInput[][] = [];
  for (let i = 0; i < inputs.length; i += max) parts.push(inputs.slice(i, i + max));
  return parts;
}

/** The answers of a batch's parts, in order, as one: vectors in input order, the tokens summed (unknown when a part reported none). */
export function joinAnswers(answers: readonly EmbeddingAnswer[]): EmbeddingAnswer {
  if (answers.length === 1) return answers[0];
  let promptTokens: number | undefined = 0;
  for (const answer of answers) promptTokens = promptTokens === undefined || answer.promptTokens === undefined ? undefined : promptTokens + answer.promptTokens;
  const joined: EmbeddingAnswer = { vectors: answers.flatMap((answer) => answer.vectors), promptTokens };
  const model = answers.find((answer) => answer.model !== undefined)?.model;
  if (model !== undefined) joined.model = model;
  return joined;
}
