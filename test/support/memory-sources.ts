import type { EventStore } from "../../src/log/index.js";
import type { SourceAdapter } from "../../src/sources/index.js";
import {
  parseSourceManifest,
  type Source,
  type SourceContext,
  type SourceDefinition,
  type SourceManifest,
} from "../../src/sources/index.js";
import type { EventData, SpoolEvent } from "../../src/spec/index.js";

/**
 * An input that grows like a log file: lines appended by the test, and an end once `end()` is
 * called. Outlives the runtimes that read it (a restart reads on from the logged cursor).
 */
export class MemoryInput {
  readonly lines: string[] = [];
  ended = false;
  /** How many times a source started reading it (one per runner). */
  opened = 0;
  #waiters: (() => void)[] = [];

  append(...lines: string[]): void {
    this.lines.push(...lines);
    this.#wake();
  }

  end(): void {
    this.ended = true;
    this.#wake();
  }

  /** Resolves at the next append or end, or when `signal` aborts. */
  changed(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const done = () => resolve();
      this.#waiters.push(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter();
  }
}

/**
 * A `Source` over a `MemoryInput`, as the file adapter reads a file: from the cursor's line on,
 * in chunks of at most `definition.batching.maxLines` lines, each with the cursor after it
 * (`{ line }`), then `exhausted` once the input ended and everything was read. Our own interface
 * (the adapter contract), written small for tests.
 */
export function memorySource(definition: SourceDefinition, input: MemoryInput): Source {
  return {
    definition,
    async run(context: SourceContext) {
      input.opened += 1;
      let at = Number(context.cursor?.line ?? 0);
      const { signal } = context;
      while (!signal.aborted) {
        if (at < input.lines.length) {
          const lines = input.lines.slice(at, at + definition.batching.maxLines);
          const bytes = lines.reduce((total, line) => total + Buffer.byteLength(line) + 1, 0);
          const next = at + lines.length;
          try {
            await context.emit({ type: "chunk", lines, bytes, cursor: { line: next } });
          } catch {
            return;
          }
          at = next;
          continue;
        }
        if (input.ended) {
          await context.emit({ type: "exhausted", cursor: { line: at } }).catch(() => {});
          return;
        }
        await input.changed(signal);
      }
    },
  };
}

/** Adapters of `kinds` that read the `MemoryInput` named by each definition's target. */
export function memoryAdapters(
  inputs: Record<string, MemoryInput>,
  kinds: readonly ("file" | "dataset")[] = ["file", "dataset"],
): Partial<Record<"file" | "dataset", SourceAdapter>> {
  const adapter: SourceAdapter = (definition) => {
    const input = inputs[definition.target];
    if (!input) throw new Error(`the test has no input ${definition.target}`);
    return memorySource(definition, input);
  };
  return Object.fromEntries(kinds.map((kind) => [kind, adapter]));
}

/** A manifest's source sections, parsed. */
export function sourceManifest(raw: {
  sources?: unknown;
  source_actions?: unknown;
}): SourceManifest {
  return parseSourceManifest(raw);
}

/** The delivery turns of a log (`turn.added` with `sources`), in order. */
export function deliveries(events: readonly SpoolEvent[]): SpoolEvent[] {
  return events.filter(
    (event) =>
      event.type === "turn.added" && (event.data as EventData<"turn.added">).sources !== undefined,
  );
}

/** Every chunk range the delivery turns of a log cover, per source, in order. */
export function deliveredRanges(
  events: readonly SpoolEvent[],
): Map<string, { from: number; to: number }[]> {
  const ranges = new Map<string, { from: number; to: number }[]>();
  for (const event of deliveries(events)) {
    for (const entry of (event.data as EventData<"turn.added">).sources ?? []) {
      const list = ranges.get(entry.source_id) ?? [];
      list.push({ from: entry.from_chunk, to: entry.to_chunk });
      ranges.set(entry.source_id, list);
    }
  }
  return ranges;
}

/** The `n` of every `source.chunk` of `source` in a log, in order. */
export function chunkNumbers(events: readonly SpoolEvent[], source: string): number[] {
  return events
    .filter(
      (event) =>
        event.type === "source.chunk" &&
        (event.data as EventData<"source.chunk">).source_id === source,
    )
    .map((event) => (event.data as EventData<"source.chunk">).n);
}

/** Resolves once the log of `continuity` holds `count` events matching `match`. */
export async function untilLogged(
  store: EventStore,
  continuity: string,
  count: number,
  match: (event: SpoolEvent) => boolean,
): Promise<void> {
  const controller = new AbortController();
  let seen = 0;
  try {
    for await (const message of store.subscribe({ continuity, signal: controller.signal })) {
      if (message.type !== "event" || !match(message.event)) continue;
      seen += 1;
      if (seen >= count) return;
    }
  } finally {
    controller.abort();
  }
}
