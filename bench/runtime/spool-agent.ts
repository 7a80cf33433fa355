import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AnyTool } from "../../src/actions/index.js";
import { type EventStore, openEventStore } from "../../src/log/index.js";
import type { Provider } from "../../src/providers/index.js";
import { createAgentRuntime, type ThreadRunResult } from "../../src/runtime/index.js";

/** What a resolved append survives: `fast` (a killed process) or `strict` (a power cut, the default). */
export type BenchDurability = "fast" | "strict";

/** The durabilities every runtime figure is taken with, fast first. */
export const DURABILITIES: readonly BenchDurability[] = ["fast", "strict"];

/** A model name the catalogue does not know: no prices, the default context window. */
export const BENCH_MODEL = "bench-scripted";

/** SQLite stores in one temporary directory; `cleanup` closes them and removes it. */
export interface TempStores {
  open(durability: BenchDurability): Promise<EventStore>;
  cleanup(): Promise<void>;
}

/** Creates a temporary directory for SQLite stores, one subdirectory per store opened. */
export function tempStores(prefix: string): TempStores {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const opened: EventStore[] = [];
  return {
    async open(durability) {
      const store = await openEventStore({
        db: join(dir, `${durability}-${opened.length}`),
        durability,
      });
      opened.push(store);
      return store;
    },
    async cleanup() {
      for (const store of opened) await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Runs one turn of a fresh agent runtime on `continuity` to its end, as a user's turn would
 * (`submit`: the turn is appended, the thread started, stepped until a final response) and
 * closes the runtime. Throws unless the run completed: a benchmark of a broken run measures
 * nothing.
 */
export async function runSpoolAgent(options: {
  store: EventStore;
  provider: Provider;
  tools: readonly AnyTool[];
  continuity: string;
}): Promise<ThreadRunResult> {
  const runtime = createAgentRuntime({
    store: options.store,
    provider: options.provider,
    agent: {
      directive: "bench",
      instructions: "Call the tools the script calls.",
      model: BENCH_MODEL,
      limits: {},
      permits: () => true,
      tools: options.tools,
    },
  });
  try {
    const result = await runtime.submit(options.continuity, {
      text: "go",
      actor: "bench",
      origin: "bench",
    });
    if (result.status !== "completed") {
      throw new Error(
        `the runtime's run ended ${result.status}: ${result.error?.message ?? "no error"}`,
      );
    }
    return result;
  } finally {
    await runtime.close();
  }
}

/** Events `continuity` holds in `store`: all of them and the critical ones. */
export async function eventCounts(
  store: EventStore,
  continuity: string,
): Promise<{ total: number; critical: number }> {
  await store.flush();
  let total = 0;
  let critical = 0;
  for await (const event of store.read({ continuity })) {
    total += 1;
    if (event.criticality === "critical") critical += 1;
  }
  return { total, critical };
}
