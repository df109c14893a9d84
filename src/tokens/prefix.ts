/**
 * The end of a prefix of `text` of at most `budget` tokens (`total`: the whole text's count),
 * found from its characters per token and checked by counting (a few counts, not one per cut),
 * never splitting a surrogate pair. What cuts a text to a token budget: a tool output a saver
 * shortens, an embedding input cut to a tier's window.
 */
export function prefixEnd(text: string, budget: number, total: number, count: (text: string) => number): number {
  if (budget <= 0) return 0;
  let end = Math.floor((text.length * budget) / total);
  for (let i = 0; i < 8 && end > 0; i++) {
    const tokens = count(text.slice(0, end));
    if (tokens <= budget) break;
    end = Math.floor(((end * budget) / tokens) * 0.97);
  }
  return isLowSurrogate(text.charCodeAt(end)) ? end - 1 : end;
}

export function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
