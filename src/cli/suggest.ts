// Apart from usage.ts, which imports every command's help: a command that suggests names (the
// chat's slash commands) imports this without an import cycle through usage.ts.

/**
 * The closest command name to `input`, if one is close enough to be a likely typo (an edit
 * distance that counts a swap of two neighbouring letters as one edit). Of equally close names,
 * the one nearest in length wins (`/pnis` is `/pins`, not `/pin`).
 */
export function suggestCommand(input: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; distance: number; length: number } | undefined;
  for (const name of candidates) {
    const distance = editDistance(input, name);
    const length = Math.abs(name.length - input.length);
    if (distance > (name.length <= 3 ? 1 : 2)) continue;
    if (!best || distance < best.distance || (distance === best.distance && length < best.length))
      best = { name, distance, length };
  }
  return best?.name;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps. */
function editDistance(a: string, b: string): number {
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
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        current[j] = Math.min(current[j]!, rows[i - 2]![j - 2]! + 1);
    }
    rows.push(current);
  }
  return rows[a.length]![b.length]!;
}
