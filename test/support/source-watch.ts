/**
 * A runtime watching real sources, for tests that feed bad input through the whole path: the
 * manifest's definitions read by the real adapters into a real SQLite store, delivered as turns
 * to a scripted model that notes each one. The test waits for events in the log (never for
 * time), then closes the runtime and reads what was logged; the peak RSS growth seen at each
 * logged event is kept, so a test can say memory stayed bounded.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EventStore, openEventStore } from "../../src/log/index.js";
import { createScriptedProvider, type Provider } from "../../src/providers/index.js";
import type { AgentRuntime, RuntimeSources } from "../../src/runtime/index.js";
import { DEFAULT_SOURCE_ADAPTERS, parseSourceManifest } from "../../src/sources/index.js";
import type { EventData, SpoolEvent } from "../../src/spec/index.js";
import { longRunRuntime, SMALL_MODEL } from "./continuity-run.js";

export const WATCH_CONTINUITY = "watch";

/** What `startWatch` sets up. */
export interface WatchOptions {
  /** The manifest's `sources` entries, as written in YAML. */
  sources: unknown[];
  /** Whether commands may run (the agent has `shell.run`). */
  shell?: boolean;
  /** Hosts network sources may reach. */
  allowHosts?: string[];
  /** The model's first answer waits for this (the agent is busy while input piles up). */
  firstAnswer?: Promise<void>;
  /** Where the store and the workspace go (default: a new temporary directory). */
  dir?: string;
}

/** A running watch: its store, runtime and workspace. */
export interface Watch {
  store: EventStore;
  runtime: AgentRuntime;
  /** The workspace the sources' relative paths resolve against. */
  workspace: string;
  /** The peak RSS growth (bytes) since the watch started, sampled at each event waited on. */
  readonly peakRss: number;
  /**
   * Resolves once the log holds `count` events matching `match` (seen through a subscription, of
   * the event `types` named, or of all).
   */
  until(
    match: (event: SpoolEvent) => boolean,
    count?: number,
    types?: readonly string[],
  ): Promise<void>;
  /** Closes the runtime; resolves with every event of the continuity. */
  close(): Promise<SpoolEvent[]>;
  /** Closes the runtime, reading nothing (a child with a small heap). */
  stop(): Promise<void>;
  /** Removes the store and the workspace (after `close`). */
  remove(): Promise<void>;
}

/** A model that notes every delivery; its first answer waits for `firstAnswer`. */
function notingModel(firstAnswer: Promise<void> | undefined): Provider {
  const inner = createScriptedProvider({
    model: SMALL_MODEL,
    loop: true,
    script: ["<response>Noted.</response>"],
  });
  let first = true;
  return {
    name: "scripted",
    format: "scripted",
    async *stream(request, options) {
      if (first && firstAnswer !== undefined) {
        first = false;
        await firstAnswer;
      }
      yield* inner.stream(request, options);
    },
  };
}

/** Starts a runtime watching `options.sources`; submits a first turn (not awaited). */
export async function startWatch(options: WatchOptions): Promise<Watch> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), "spool-source-watch-"));
  const workspace = join(dir, "workspace");
  mkdirSync(workspace, { recursive: true });
  const store = await openEventStore({ db: join(dir, "store"), durability: "fast" });
  const sources: RuntimeSources = {
    manifest: parseSourceManifest({ sources: options.sources }),
    access: {
      workspace,
      allowPaths: [],
      allowHosts: options.allowHosts ?? [],
      shell: options.shell ?? false,
    },
    adapters: DEFAULT_SOURCE_ADAPTERS,
  };
  const runtime = longRunRuntime(store, notingModel(options.firstAnswer), { sources });
  const start = process.memoryUsage.rss();
  let closed = false;
  const stop = async (): Promise<void> => {
    closed = true;
    await submitted;
    await runtime.close();
  };
  const close = async (): Promise<SpoolEvent[]> => {
    await stop();
    const events: SpoolEvent[] = [];
    for await (const event of store.read({ continuity: WATCH_CONTINUITY })) events.push(event);
    return events;
  };
  let peak = 0;
  const submitted = runtime.submit(WATCH_CONTINUITY, {
    text: "Watch your sources and tell me what goes wrong.",
    actor: "ada",
    origin: "test",
  });
  return {
    store,
    runtime,
    workspace,
    get peakRss() {
      return peak;
    },
    async until(match, count = 1, types) {
      const controller = new AbortController();
      let seen = 0;
      try {
        for await (const message of store.subscribe({
          continuity: WATCH_CONTINUITY,
          signal: controller.signal,
          ...(types ? { types } : {}),
        })) {
          peak = Math.max(peak, process.memoryUsage.rss() - start);
          if (message.type !== "event" || !match(message.event)) continue;
          seen += 1;
          if (seen >= count) return;
        }
      } finally {
        controller.abort();
      }
    },
    close,
    stop,
    async remove() {
      // A test that failed before it closed the runtime: close it first, quietly.
      if (!closed) await stop().catch(() => undefined);
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Whether `event` is a `source.*` event of `source` (optionally of one type). */
export function ofSource(source: string, type?: string): (event: SpoolEvent) => boolean {
  return (event) =>
    event.type.startsWith("source.") &&
    (type === undefined || event.type === type) &&
    (event.data as { source_id?: string }).source_id === source;
}

/** The `source.failed` data of `source` in `events`. */
export function failuresOf(
  events: readonly SpoolEvent[],
  source: string,
): EventData<"source.failed">[] {
  return events
    .filter(ofSource(source, "source.failed"))
    .map((event) => event.data as EventData<"source.failed">);
}

/** The delivery turns (`turn.added` from a source) in `events`, with their text. */
export function deliveryTexts(events: readonly SpoolEvent[]): string[] {
  return events
    .filter((event) => event.type === "turn.added" && event.origin === "source")
    .map((event) => (event.data as EventData<"turn.added">).text);
}
