import { nearestName } from "../spec/index.js";

// Apart from usage.ts, which imports every command's help: a command that suggests names (the
// chat's slash commands) imports this without an import cycle through usage.ts.

/**
 * The closest command name to `input`, if one is close enough to be a likely typo (`nearestName`,
 * case-sensitive: a swap of two neighbouring letters is one edit; of equally close names, the one
 * nearest in length wins, so `/pnis` is `/pins`, not `/pin`).
 */
export function suggestCommand(input: string, candidates: readonly string[]): string | undefined {
  return nearestName(input, candidates, false);
}
