/** Edit distance (insertions, deletions, substitutions) between two strings. */
export function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length];
}

/**
 * The candidate the user most likely meant by `word`, or undefined when none is close:
 * a case-insensitive match, then a prefix ("ttft" → "ttft_ms"), then a small edit distance.
 */
export function closestMatch(word: string, candidates: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  const sameIgnoringCase = candidates.find((c) => c.toLowerCase() === lower);
  if (sameIgnoringCase !== undefined) return sameIgnoringCase;

  if (lower.length >= 3) {
    const prefixed = candidates.find((c) => {
      const other = c.toLowerCase();
      return other.length >= 3 && (other.startsWith(lower) || lower.startsWith(other));
    });
    if (prefixed !== undefined) return prefixed;
  }

  // Short words get less slack, or every two-letter typo would "match" something.
  const maxDistance = word.length <= 3 ? 1 : 2;
  let best: string | undefined;
  let bestDistance = maxDistance + 1;
  for (const candidate of candidates) {
    const distance = levenshtein(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}
