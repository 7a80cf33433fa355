/**
 * The contract between the sources module and its adapters. A source reads one continuous input
 * (a file tail, a command's output, an HTTP resource, an SSE or WebSocket feed, a dataset) and
 * hands what it read to its runner as emissions, each with the cursor after it. The runner logs
 * each emission (the chunk and its cursor in one event), in order, so a crash resumes every
 * source from its last logged cursor: no line lost, none delivered twice.
 */

/** A JSON value, as cursors and options hold them. */
export type SourceJson =
  | string
  | number
  | boolean
  | null
  | readonly SourceJson[]
  | { readonly [key: string]: SourceJson };

/**
 * Where a source stands, as JSON the adapter alone understands: for a file its identity and byte
 * offset, for SSE the last event id, for a dataset the file and offset. Logged with every chunk;
 * handed back to the adapter (`SourceContext.cursor`) to resume after a restart.
 */
export type SourceCursor = { readonly [key: string]: SourceJson };

/**
 * The kinds of source Spool has adapters for. `browser` is the page events of the agent's browser
 * relic (its target names the relic); its adapter comes from the browser module.
 */
export const SOURCE_KINDS = [
  "file",
  "command",
  "http",
  "sse",
  "websocket",
  "dataset",
  "browser",
] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];

/** How a source's lines are cut into chunks: whichever limit is reached first ends a chunk. */
export interface SourceBatching {
  /** Lines per chunk at most (default 500). */
  maxLines: number;
  /** Bytes (UTF-8, newlines excluded) per chunk at most (default 64 KiB). */
  maxBytes: number;
  /** A chunk is emitted at most this long after its first line arrived (default 1,000 ms). */
  maxWaitMs: number;
  /**
   * A line longer than this many bytes is cut to it, with the number of bytes dropped recorded
   * (default 64 KiB): a 50 MB line is one bounded line, never 50 MB in memory.
   */
  maxLineBytes: number;
}

/** The batching a source gets when its definition names none. */
export const DEFAULT_BATCHING: SourceBatching = {
  maxLines: 500,
  maxBytes: 64 * 1024,
  maxWaitMs: 1_000,
  maxLineBytes: 64 * 1024,
};

/**
 * Which lines a source keeps: a line is kept when it matches some `include` pattern (or there
 * are none) and no `exclude` pattern. Skipped lines still move the cursor; the chunk counts them.
 */
export interface SourceFilter {
  include: readonly RegExp[];
  exclude: readonly RegExp[];
}

/**
 * What an agent's manifest (or a model's `source.add`) declares, validated. `options` holds the
 * kind's own settings (`interval_ms`, `headers`, `args`, `restart`, …), checked by the adapter.
 */
export interface SourceDefinition {
  id: string;
  kind: SourceKind;
  /** A path (file, dataset), a command line (command), or a URL (http, sse, websocket). */
  target: string;
  batching: SourceBatching;
  /** Pattern sources as written (regular expressions), compiled into `filter`. */
  include: readonly string[];
  exclude: readonly string[];
  /**
   * `cursor`: sequential data processed once in order (summaries carry the position); `state`:
   * live data where the current understanding matters (summaries carry the state).
   */
  mode: "cursor" | "state";
  /**
   * Named patterns (regular expressions as written) whose matching lines every chunk counts
   * (`matches.error`): what digests report and hook conditions test.
   */
  patterns: { readonly [name: string]: string };
  options: { readonly [key: string]: SourceJson };
}

/** Lines a source read, with the cursor after the last of them. */
export interface SourceChunkEmission {
  type: "chunk";
  /** Whole lines, without their newline; invalid UTF-8 is replaced with U+FFFD. */
  lines: string[];
  /** Bytes these lines took in the input (newlines included), skipped lines included. */
  bytes: number;
  /** Where to resume after this chunk. */
  cursor: SourceCursor;
  /** For command sources: which output the lines came from. */
  channel?: "stdout" | "stderr";
  /** Lines read but left out by the filter. */
  skipped?: number;
  /** Lines cut to `maxLineBytes`, and the bytes dropped from them. */
  cut?: { lines: number; bytes: number };
  /** Input bytes that were not valid UTF-8 (each replaced by U+FFFD). */
  invalidBytes?: number;
  /**
   * Kept lines matching each of the definition's named `patterns` (every name present, 0 when
   * none matched); absent when the definition names no patterns.
   */
  matches?: { [name: string]: number };
}

/**
 * The input changed identity under the source: a file renamed and recreated, truncated in place
 * (copytruncate), deleted, or a feed restarted. Reading goes on from `cursor`.
 */
export interface SourceRotatedEmission {
  type: "rotated";
  reason: "renamed" | "truncated" | "recreated" | "deleted" | "restarted";
  cursor: SourceCursor;
  detail?: string;
}

/**
 * Something the runner reports and goes on: a connection lost and retried, a command that
 * exited and restarts after `retryInMs`, a poll that failed. Not an end.
 */
export interface SourceNoticeEmission {
  type: "notice";
  code: string;
  message: string;
  /** A command's exit code, when it exited. */
  exitCode?: number | null;
  /** When the source retries, in how many milliseconds. */
  retryInMs?: number;
}

/** The input has ended for good (a dataset read to its end, `--until-exhausted`). */
export interface SourceExhaustedEmission {
  type: "exhausted";
  cursor: SourceCursor;
}

/**
 * The source cannot go on (a file it may not read, a URL refused by policy, a command not
 * found): its run ends after this. `code` is one of `source.*`, `message` says how to fix it.
 */
export interface SourceFailedEmission {
  type: "failed";
  code: string;
  message: string;
  /** The cursor it stopped at, if it read anything. */
  cursor?: SourceCursor;
}

/** What a source hands its runner. */
export type SourceEmission =
  | SourceChunkEmission
  | SourceRotatedEmission
  | SourceNoticeEmission
  | SourceExhaustedEmission
  | SourceFailedEmission;

/** What a running source is given. */
export interface SourceContext {
  /** Where to resume: the cursor logged last for this source, or `undefined` to begin. */
  cursor: SourceCursor | undefined;
  /** Aborted when the source is paused, removed or its runtime closes: `run` then returns soon. */
  signal: AbortSignal;
  /**
   * Hands one emission to the runner, which logs emissions in the order they were made. It
   * resolves once the runner can take more: the emission is durable, or queued behind a bounded
   * number of others on their way to the log (see `IN_FLIGHT`). A source emits the next only
   * after the previous resolved (backpressure: it reads no further meanwhile), and a rejection
   * means the runner stopped: the source returns without emitting more. Reading ahead of the log
   * loses nothing: after a crash a source resumes from the cursor of its last durable chunk.
   */
  emit(emission: SourceEmission): Promise<void>;
}

/**
 * One continuous input. `run` reads from `context.cursor` until the signal aborts, the input is
 * exhausted, or it failed for good; it never throws (a failure is a `failed` emission) and holds
 * a bounded amount of memory whatever the input.
 */
export interface Source {
  readonly definition: SourceDefinition;
  run(context: SourceContext): Promise<void>;
}
