import { isRecord } from '../../util/is-record.js';

/**
 * Gemini 3 refuses a conversation whose model turns made function calls without the
 * `thoughtSignature` it returned with them ("Function call is missing a thought_signature in
 * functionCall parts", 400): the first `functionCall` part of each model step must carry one.
 * A call another tier made, or one a client that speaks another protocol carried back (it has
 * nowhere to keep a signature), has none; for those, Google's thought-signatures guide
 * documents a value that skips the check. Signatures Gemini made are never touched, and no
 * signature ever leaves for a tier of another type (the readers drop them).
 */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';

type Part = Record<string, unknown>;

/** A model content's parts with the skip value on its first function call when that call has no signature; the same array when it has one. */
export function signedCallParts(parts: readonly unknown[]): readonly unknown[] {
  const first = parts.findIndex((part) => isRecord(part) && isRecord(part.functionCall));
  if (first === -1) return parts;
  const call = parts[first] as Part;
  if (typeof call.thoughtSignature === 'string' && call.thoughtSignature !== '') return parts;
  const signed = parts.slice();
  signed[first] = { ...call, thoughtSignature: SKIP_SIGNATURE };
  return signed;
}

/** A Gemini body's `contents` with every model turn's calls signed (see signedCallParts); the same array when none needed it. */
export function withSignedCalls(contents: unknown): unknown {
  if (!Array.isArray(contents)) return contents;
  let changed = false;
  const signed = contents.map((content: unknown) => {
    if (!isRecord(content) || content.role !== 'model' || !Array.isArray(content.parts)) return content;
    const parts = signedCallParts(content.parts);
    if (parts === content.parts) return content;
    changed = true;
    return { ...content, parts };
  });
  return changed ? signed : contents;
}
