import type {
  SourceAccessPolicy,
  SourceAdapters,
  SourceManifest,
  SourceState,
} from "../sources/index.js";
import type { SourceChanges } from "./source-changes.js";

/** The continuous inputs of the runtime's foreground agent (an agent manifest's `sources`). */
export interface RuntimeSources {
  /** `sources` and `source_actions`, as `parseSourceManifest` read them. */
  manifest: SourceManifest;
  /** Where sources may read: the workspace, the allow lists, whether commands may run. */
  access: SourceAccessPolicy;
  /** The adapter of each kind; a source of a kind without one fails (`source.no-adapter`). */
  adapters: SourceAdapters;
  /**
   * Where `${NAME}` in a source's target and options is read from when it opens (credentials
   * stay out of the log: it keeps the definition as written); default none.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Tokens the digests of one delivery turn may take, shared evenly by its sources (default a
   * tenth of the model's window, at most 4,000).
   */
  digestTokens?: number;
  /** The time delivery turns are stamped with, ms since the epoch (default the store's clock). */
  clock?: () => number;
  /** Chunks larger than this many bytes go to an artifact (the runner's default otherwise). */
  artifactBytes?: number;
  /** The manifest file as messages name it (`.ai/agents/watcher.yaml`). */
  manifestFile?: string;
}

/** What the CLI sees of a continuity's sources (`AgentRuntime.sources`). */
export interface SourcesView {
  /** Every source the log knows, as of the latest catch-up (each chunk, delivery or change). */
  states(): SourceState[];
  /**
   * Resolves once every source is done (exhausted, failed for good, paused or removed), all its
   * chunks and its end are delivered, and the continuity is idle (no run going or queued).
   * Rejects with `signal`'s reason when it aborts, and with `sources.not-taken-up` when this
   * runtime has not taken the continuity up (call `submit`, `accept` or `resume` first).
   */
  untilExhausted(signal?: AbortSignal): Promise<void>;
  /**
   * Changes a person makes to the sources (the HTTP API's, the CLI's), through the path the
   * model's source actions take; absent when the runtime runs no sources.
   */
  changes?: SourceChanges;
}
