/** The Levenshtein distance between `a` and `b`: insertions, deletions and substitutions. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The candidate closest to `input` when it is close enough to be a likely typo: at most one edit
 * from a name of three characters or fewer, two from a longer one (`antropic` → `anthropic`,
 * `llama.cpp` → `llamacpp`); undefined otherwise (`nope`). The first of equally close names wins.
 * Case counts as an edit only when `ignoreCase` is false (default true).
 */
export function nearestName(
  input: string,
  candidates: readonly string[],
  ignoreCase = true,
): string | undefined {
  const typed = ignoreCase ? input.toLowerCase() : input;
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = editDistance(typed, ignoreCase ? name.toLowerCase() : name);
    if (distance <= (name.length <= 3 ? 1 : 2) && (!best || distance < best.distance)) {
      best = { name, distance };
    }
  }
  return best?.name;
}
