/** What adding an action to the graph found. */
export interface AddResult {
  /** The action lists itself in `depends_on`. */
  selfDependency: boolean;
  /**
   * Every action on a cycle this one closed (itself included), from it along dependencies;
   * absent when it closed none.
   */
  cycle?: string[];
  /** A dependency that had already failed (the first in `depends_on` order). */
  failedDependency?: string;
  /** Every dependency has already succeeded: it may start now. */
  ready: boolean;
}

/** What settling an action released. */
export interface SettleResult {
  /** Dependents whose last dependency just succeeded: they may start now. */
  ready: string[];
  /** Dependents that can no longer run because this action failed. */
  blocked: string[];
}

type NodeState = "open" | "succeeded" | "failed";

interface Node {
  deps: readonly string[];
  /** Dependencies not yet succeeded (seen or not). */
  remaining: Set<string>;
  dependents: Set<string>;
  state: NodeState;
}

/**
 * The `depends_on` DAG of one step, over ids seen and not yet seen.
 *
 * Contract: pure bookkeeping, no I/O and no timers; every method is O(edges touched). A dependent
 * is reported `ready` the moment its last dependency settles as succeeded, never before and never
 * twice. Every cycle is found when the action that closes it is added, and all its members are
 * reported. Ids waited for but never added are reported by `missing()`.
 */
export class DependencyGraph {
  readonly #nodes = new Map<string, Node>();
  /** Ids depended on but not added yet, with who waits for them. */
  readonly #unseen = new Map<string, Set<string>>();

  /** True when `id` has been added. */
  has(id: string): boolean {
    return this.#nodes.has(id);
  }

  /** `depends_on` of `id` as given, without duplicates. */
  dependenciesOf(id: string): readonly string[] {
    return this.#nodes.get(id)?.deps ?? [];
  }

  /** Adds action `id`, depending on `deps`. Throws on a duplicate id (the caller checks first). */
  add(id: string, deps: readonly string[]): AddResult {
    if (this.#nodes.has(id)) throw new Error(`action ${id} was added twice`);
    const unique = [...new Set(deps)];
    const node: Node = { deps: unique, remaining: new Set(), dependents: new Set(), state: "open" };
    this.#nodes.set(id, node);
    let failedDependency: string | undefined;
    for (const dep of unique) {
      if (dep === id) continue;
      const target = this.#nodes.get(dep);
      if (!target) {
        node.remaining.add(dep);
        const waiters = this.#unseen.get(dep);
        if (waiters) waiters.add(id);
        else this.#unseen.set(dep, new Set([id]));
      } else if (target.state === "open") {
        node.remaining.add(dep);
        target.dependents.add(id);
      } else if (target.state === "failed") {
        failedDependency ??= dep;
      }
    }
    const waiters = this.#unseen.get(id);
    if (waiters) {
      this.#unseen.delete(id);
      for (const waiter of waiters) node.dependents.add(waiter);
    }
    const selfDependency = unique.includes(id);
    const cycle = waiters ? this.#cycleThrough(id) : undefined;
    return {
      selfDependency,
      ...(cycle ? { cycle } : {}),
      ...(failedDependency !== undefined ? { failedDependency } : {}),
      ready: node.remaining.size === 0,
    };
  }

  /**
   * Marks `id` succeeded or failed. Returns the dependents it released (`ready`) or blocked.
   * Settling an already settled action changes nothing and returns nothing.
   */
  settle(id: string, succeeded: boolean): SettleResult {
    const result: SettleResult = { ready: [], blocked: [] };
    const node = this.#nodes.get(id);
    if (node?.state !== "open") return result;
    node.state = succeeded ? "succeeded" : "failed";
    for (const dependent of node.dependents) {
      const other = this.#nodes.get(dependent);
      if (other?.state !== "open") continue;
      if (succeeded) {
        other.remaining.delete(id);
        if (other.remaining.size === 0) result.ready.push(dependent);
      } else {
        result.blocked.push(dependent);
      }
    }
    return result;
  }

  /**
   * True when `id` waits, directly or through open dependencies, for an id not added yet: holding
   * the step's output until it finishes would wait forever.
   */
  waitsForUnseen(id: string): boolean {
    const seen = new Set<string>();
    const stack = [id];
    while (stack.length > 0) {
      const node = this.#nodes.get(stack.pop()!);
      if (!node) continue;
      for (const dep of node.remaining) {
        if (!this.#nodes.has(dep)) return true;
        if (!seen.has(dep)) {
          seen.add(dep);
          stack.push(dep);
        }
      }
    }
    return false;
  }

  /** Open actions waiting for ids never added, with those ids (in `depends_on` order). */
  missing(): Map<string, string[]> {
    const result = new Map<string, string[]>();
    for (const [id, node] of this.#nodes) {
      if (node.state !== "open") continue;
      const absent = node.deps.filter((dep) => dep !== id && !this.#nodes.has(dep));
      if (absent.length > 0) result.set(id, absent);
    }
    return result;
  }

  /**
   * The open actions on cycles through `id`: those it depends on (transitively) that also depend
   * on it (transitively). Ordered from `id` along dependencies (breadth first).
   */
  #cycleThrough(id: string): string[] | undefined {
    const dependsOnId = this.#reach(id, (node) => node.dependents);
    if (dependsOnId.size === 0) return undefined;
    const order: string[] = [id];
    const seen = new Set<string>([id]);
    for (let i = 0; i < order.length; i++) {
      const node = this.#nodes.get(order[i]!)!;
      for (const dep of node.remaining) {
        if (seen.has(dep) || !dependsOnId.has(dep)) continue;
        seen.add(dep);
        order.push(dep);
      }
    }
    return order.length > 1 || dependsOnId.has(id) ? order : undefined;
  }

  /** Open actions reachable from `id` through `edges` (not `id` itself unless on a loop). */
  #reach(id: string, edges: (node: Node) => Iterable<string>): Set<string> {
    const found = new Set<string>();
    const stack = [id];
    while (stack.length > 0) {
      const node = this.#nodes.get(stack.pop()!);
      if (!node) continue;
      for (const next of edges(node)) {
        const other = this.#nodes.get(next);
        if (other?.state !== "open" || found.has(next)) continue;
        found.add(next);
        stack.push(next);
      }
    }
    return found;
  }
}
