/**
 * The optimal string alignment distance between `a` and `b`: insertions, deletions,
 * substitutions, and a swap of two neighbouring characters as one edit (`pnis` → `pins`).
 */
export function editDistance(a: string, b: string): number {
  const rows = [Array.from({ length: b.length + 1 }, (_, index) => index)];
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    const previous = rows[i - 1]!;
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        current[j] = Math.min(current[j]!, rows[i - 2]![j - 2]! + 1);
      }
    }
    rows.push(current);
  }
  return rows[a.length]![b.length]!;
}

/**
 * The candidate closest to `input` when it is close enough to be a likely typo: at most one edit
 * from a name of three characters or fewer, two from a longer one (`antropic` → `anthropic`,
 * `llama.cpp` → `llamacpp`); undefined otherwise (`nope`). Of equally close names, the one
 * nearest in length wins (`pnis` → `pins`, not `pin`), then the first.
 * Case counts as an edit only when `ignoreCase` is false (default true).
 */
export function nearestName(
  input: string,
  candidates: readonly string[],
  ignoreCase = true,
): string | undefined {
  const typed = ignoreCase ? input.toLowerCase() : input;
  let best: { name: string; distance: number; length: number } | undefined;
  for (const name of candidates) {
    const distance = editDistance(typed, ignoreCase ? name.toLowerCase() : name);
    if (distance > (name.length <= 3 ? 1 : 2)) continue;
    const length = Math.abs(name.length - input.length);
    if (!best || distance < best.distance || (distance === best.distance && length < best.length)) {
      best = { name, distance, length };
    }
  }
  return best?.name;
}
