import { z } from "zod";
import type { EventStore } from "../log/index.js";
import { KvState } from "./kv-state.js";
import type { Relic, RelicContext, RelicDescription } from "./relic.js";
import { RelicError } from "./relic-error.js";

/** Options of `createKvRelic`. */
export interface KvRelicOptions {
  /** The relic's name, and the `relic` field of its events (default `kv`). */
  name?: string;
  /** Largest value, in bytes of its JSON text (default 64 KiB). */
  maxValueBytes?: number;
}

/** The default cap on one value: 64 KiB of JSON. */
export const KV_MAX_VALUE_BYTES = 64 * 1024;

const key = z.string().min(1).max(512);
const version = z
  .number()
  .int()
  .nonnegative()
  .describe("the version last read (0: the key must not exist)");

const methods = {
  get: {
    description: "Reads a key: { key, found, value?, version? }.",
    parameters: z.strictObject({ key }),
  },
  set: {
    description:
      "Stores a JSON value under a key; with if_version, only when the key is still at that version (0: absent). Returns { key, version }.",
    parameters: z.strictObject({ key, value: z.json(), if_version: version.optional() }),
  },
  delete: {
    description:
      "Deletes a key; with if_version, only when it is still at that version. Returns { key, deleted }.",
    parameters: z.strictObject({ key, if_version: version.optional() }),
  },
  list: {
    description:
      "Lists keys with a prefix in sorted order, after a key (for paging): { entries: [{ key, version, value? }], next_after? }.",
    parameters: z.strictObject({
      prefix: z.string().max(512).default(""),
      after: z.string().max(512).optional(),
      limit: z.number().int().min(1).max(1000).default(100),
      values: z.boolean().default(true),
    }),
  },
} as const;

type Parameters<M extends keyof typeof methods> = z.output<(typeof methods)[M]["parameters"]>;

/**
 * The built-in key-value relic. Its state lives in the log: every write is a critical `kv.set`
 * or `kv.deleted` event on the continuity, and the state is their fold, so it survives crashes,
 * replays and moves between SQLite and PostgreSQL with the log. A key's version is the `seq` of
 * the event that last wrote it, so versions never repeat, even after a delete.
 *
 * Contract: `start` reads the continuity's kv events once (O(changes)); each write appends its
 * event, waits until it is durable, then updates the in-memory map; reads never touch the store.
 * Writes of one relic are serialized, so `if_version` compare-and-set is atomic within the
 * process that owns the continuity (the log has one writer per continuity). A conflict rejects
 * with `relic.kv.conflict`, a value over the cap with `relic.kv.value-too-large`; neither writes
 * anything. `stop` drops the map; a restart loads it again.
 */
export function createKvRelic(options: KvRelicOptions = {}): Relic {
  const name = options.name ?? "kv";
  const maxValueBytes = options.maxValueBytes ?? KV_MAX_VALUE_BYTES;
  const description: RelicDescription = {
    description: "A durable key-value store kept in the continuity's log.",
    methods,
  };
  let running: { state: KvState; store: EventStore; continuity: string } | undefined;
  let writes: Promise<unknown> = Promise.resolve();

  const serialized = <T>(write: () => Promise<T>): Promise<T> => {
    const next = writes.then(write, write);
    writes = next.catch(() => undefined);
    return next;
  };

  const checkVersion = (state: KvState, key: string, expected: number | undefined) => {
    if (expected === undefined) return;
    const current = state.get(key)?.version ?? 0;
    if (current === expected) return;
    throw new RelicError(
      "relic.kv.conflict",
      current === 0
        ? `key "${key}" does not exist, but if_version was ${expected}`
        : `key "${key}" is at version ${current}, not ${expected}`,
      { hint: `Read it again with ${name}.get and retry with its current version` },
    );
  };

  const handlers = {
    get: async ({ key }: Parameters<"get">) => {
      const entry = current().state.get(key);
      return entry
        ? { key, found: true, value: entry.value, version: entry.version }
        : { key, found: false };
    },
    set: ({ key, value, if_version }: Parameters<"set">) => {
      const bytes = Buffer.byteLength(JSON.stringify(value), "utf8");
      if (bytes > maxValueBytes) {
        throw new RelicError(
          "relic.kv.value-too-large",
          `the value for key "${key}" is ${bytes} bytes of JSON; the limit is ${maxValueBytes} bytes`,
          { hint: "Store a smaller value, or split it across several keys" },
        );
      }
      return serialized(async () => {
        const { state, store, continuity } = current();
        checkVersion(state, key, if_version);
        const event = await store.append({
          continuity,
          type: "kv.set",
          data: { relic: name, key, value },
        });
        state.apply(event);
        return { key, version: event.seq };
      });
    },
    delete: ({ key, if_version }: Parameters<"delete">) =>
      serialized(async () => {
        const { state, store, continuity } = current();
        checkVersion(state, key, if_version);
        if (!state.get(key)) return { key, deleted: false };
        const event = await store.append({
          continuity,
          type: "kv.deleted",
          data: { relic: name, key },
        });
        state.apply(event);
        return { key, deleted: true };
      }),
    list: async ({ prefix, after, limit, values }: Parameters<"list">) => {
      const page = current().state.list(prefix, after, limit);
      return {
        entries: page.entries.map(({ key, entry }) =>
          values
            ? { key, version: entry.version, value: entry.value }
            : { key, version: entry.version },
        ),
        ...(page.nextAfter !== undefined ? { next_after: page.nextAfter } : {}),
      };
    },
  };

  const current = () => {
    if (!running) {
      throw new RelicError("relic.kv.stopped", `relic "${name}" is not running`, {
        retryable: true,
      });
    }
    return running;
  };

  return {
    name,
    describe: () => description,
    async start(context: RelicContext) {
      const state = await KvState.load(context.store, context.continuity, name);
      running = { state, store: context.store, continuity: context.continuity };
    },
    async call(method, parameters) {
      switch (method) {
        case "get":
          return handlers.get(parameters as Parameters<"get">);
        case "set":
          return handlers.set(parameters as Parameters<"set">);
        case "delete":
          return handlers.delete(parameters as Parameters<"delete">);
        case "list":
          return handlers.list(parameters as Parameters<"list">);
        default:
          throw new RelicError("relic.unknown-method", `relic "${name}" has no method "${method}"`);
      }
    },
    async stop() {
      await writes;
      running = undefined;
    },
  };
}
