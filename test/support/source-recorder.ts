import {
  DEFAULT_BATCHING,
  type Source,
  type SourceChunkEmission,
  type SourceCursor,
  type SourceDefinition,
  type SourceEmission,
} from "../../src/sources/index.js";

/** How long a condition may take before the test fails with what was recorded (a deadline, not a sleep). */
const DEADLINE_MS = 30_000;

/** A source started by a test, with every emission it made. */
export interface RunningSource {
  emissions: SourceEmission[];
  /** Resolves when `run` returned. */
  done: Promise<void>;
  /** Aborts the source's signal and waits for `run` to return. */
  stop(): Promise<void>;
  /** Resolves once `predicate` holds for the emissions so far; fails after a deadline, saying what it waited for. */
  until(what: string, predicate: (emissions: SourceEmission[]) => boolean): Promise<void>;
}

/** Options of `startSource`. */
export interface StartOptions {
  cursor?: SourceCursor;
  /** Runs inside `emit` before it resolves (a slow runner, a memory probe). */
  onEmit?: (emission: SourceEmission) => Promise<void> | void;
  /** Keep only a summary of chunks (no lines) to keep the test's own memory small. */
  keepLines?: boolean;
}

/** Runs `source` with an `emit` that records each emission. */
export function startSource(source: Source, options: StartOptions = {}): RunningSource {
  const controller = new AbortController();
  const emissions: SourceEmission[] = [];
  const waiters = new Set<() => void>();
  const emit = async (emission: SourceEmission): Promise<void> => {
    const kept =
      options.keepLines === false && emission.type === "chunk"
        ? { ...emission, lines: [] }
        : emission;
    emissions.push(kept);
    await options.onEmit?.(emission);
    for (const check of waiters) check();
  };
  const done = source.run({ cursor: options.cursor, signal: controller.signal, emit });
  let returned = false;
  void done.then(() => {
    returned = true;
    for (const check of waiters) check();
  });
  const until = (what: string, predicate: (all: SourceEmission[]) => boolean): Promise<void> =>
    new Promise((resolve, reject) => {
      const deadline = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`waited for ${what}; got ${describe(emissions)}`));
      }, DEADLINE_MS);
      const check = (): void => {
        if (predicate(emissions)) {
          clearTimeout(deadline);
          waiters.delete(check);
          resolve();
        } else if (returned) {
          clearTimeout(deadline);
          waiters.delete(check);
          reject(new Error(`the source returned before ${what}; got ${describe(emissions)}`));
        }
      };
      waiters.add(check);
      check();
    });
  return {
    emissions,
    done,
    until,
    stop: async () => {
      controller.abort();
      await done;
    },
  };
}

/** The chunks among `emissions`. */
export function chunksOf(emissions: readonly SourceEmission[]): SourceChunkEmission[] {
  return emissions.filter((emission): emission is SourceChunkEmission => emission.type === "chunk");
}

/** Every line of every chunk, in order. */
export function linesOf(emissions: readonly SourceEmission[]): string[] {
  return chunksOf(emissions).flatMap((chunk) => chunk.lines);
}

/** The emissions as a short list: lines of chunks, type and reason or code of the rest. */
export function summarize(emissions: readonly SourceEmission[]): string[] {
  return emissions.flatMap((emission) => {
    if (emission.type === "chunk") return emission.lines;
    if (emission.type === "rotated") return [`[rotated ${emission.reason}]`];
    if (emission.type === "notice" || emission.type === "failed") {
      return [`[${emission.type} ${emission.code}]`];
    }
    return [`[${emission.type}]`];
  });
}

/** The last cursor among `emissions`. */
export function lastCursor(emissions: readonly SourceEmission[]): SourceCursor | undefined {
  for (let index = emissions.length - 1; index >= 0; index--) {
    const emission = emissions[index]!;
    if ("cursor" in emission && emission.cursor !== undefined) return emission.cursor;
  }
  return undefined;
}

function describe(emissions: readonly SourceEmission[]): string {
  const text = JSON.stringify(summarize(emissions));
  return text.length > 2000 ? `${text.slice(0, 1000)} … ${text.slice(-1000)}` : text;
}

/** A definition for tests: small waits so held chunks go out quickly. */
export function testDefinition(
  kind: SourceDefinition["kind"],
  target: string,
  overrides: Partial<Omit<SourceDefinition, "batching">> & {
    batching?: Partial<SourceDefinition["batching"]>;
  } = {},
): SourceDefinition {
  const { batching, ...rest } = overrides;
  return {
    id: `test-${kind}`,
    kind,
    target,
    include: [],
    exclude: [],
    mode: "cursor",
    patterns: {},
    options: {},
    ...rest,
    batching: { ...DEFAULT_BATCHING, maxWaitMs: 5, ...batching },
  };
}
