/**
 * `node:crypto` in the dashboard's bundle. The protocol parser the dashboard shares with the
 * runtime is pure, but the spec module it imports also holds the log's hash chain (Node's
 * `hash`), which the dashboard never calls: this stands in for it so the bundle builds, and says
 * so plainly if anything ever does call it.
 */
export function hash(): never {
  throw new Error("node:crypto is not available in the dashboard");
}

/** As `hash`: never called by the dashboard. */
export function createHash(): never {
  throw new Error("node:crypto is not available in the dashboard");
}
