import type { EventStore } from "../log/index.js";
import {
  openSourceDefinition,
  type Source,
  type SourceRunner,
  startSourceRunner,
} from "../sources/index.js";
import { describeError, errorCodeOf, SpoolError } from "../spec/index.js";
import type { RuntimeSources } from "./source-config.js";
import type { SourceFold } from "./source-fold.js";

/** What `SourceRunners` needs of the session's sources. */
export interface SourceRunnersOptions {
  store: EventStore;
  continuity: string;
  config: Pick<RuntimeSources, "access" | "adapters" | "artifactBytes" | "env">;
  /** The fold as it stands: where each source resumes, and what was delivered (pacing). */
  fold(): SourceFold;
  /** Resolves at the next change of the sources; rejects once `signal` aborts. */
  next(signal: AbortSignal): Promise<void>;
  /** Something changed: a runner appended an event, ended, or could not start. */
  changed(): void;
}

/**
 * The runners of one continuity's sources, at most one per source. `start` expands the
 * definition's `${NAME}`s from `config.env` (for the adapter only), checks the source's access
 * and finds its adapter first: a refusal (or no adapter for its kind, or an adapter that
 * throws: `source.adapter-failed`) is a final `source.failed` with the error, never a crash; so is
 * a source that returns without saying why (`source.returned`). A dataset's runner is paced:
 * it logs chunk n only once chunk n-1 was delivered.
 */
export class SourceRunners {
  readonly #options: SourceRunnersOptions;
  readonly #runners = new Map<string, SourceRunner>();
  #closed = false;

  constructor(options: SourceRunnersOptions) {
    this.#options = options;
  }

  /** Starts `id`'s runner from where the fold says it stands, unless one runs (or all closed). */
  async start(id: string): Promise<void> {
    if (this.#closed || this.#runners.has(id)) return;
    const { store, continuity, config } = this.#options;
    const state = this.#options.fold().source(id);
    const definition = state?.definition;
    if (!state || !definition) return;
    let source: Source;
    try {
      // `${NAME}`s are expanded for the adapter alone (the log keeps the definition as written),
      // and only in a source the manifest added.
      const byManifest = this.#options.fold().addedBy(id) === "manifest";
      const { definition: opened, access } = openSourceDefinition(
        definition,
        config.access,
        byManifest ? (config.env ?? {}) : undefined,
      );
      const adapter = config.adapters[definition.kind];
      if (!adapter) {
        throw new SpoolError(
          "source.no-adapter",
          `this runtime has no adapter for ${definition.kind} sources, so "${id}" cannot read`,
          {
            hint: "Wire the kind's adapter into the runtime (AgentRuntimeOptions.sources.adapters)",
          },
        );
      }
      const made = adapter(opened, access);
      source = { definition, run: (context) => made.run(context) };
    } catch (error) {
      await this.#failed(
        id,
        errorCodeOf(error, "source.adapter-failed"),
        describeError(error).slice(0, 20_000),
      );
      this.#options.changed();
      return;
    }
    const runner = startSourceRunner({
      store,
      continuity,
      source,
      position: { chunks: state.chunks, cursor: state.cursor },
      ...(definition.kind === "dataset"
        ? { pace: (n: number, signal: AbortSignal) => this.#pace(id, n, signal) }
        : {}),
      appended: () => this.#options.changed(),
      ...(config.artifactBytes !== undefined ? { artifactBytes: config.artifactBytes } : {}),
    });
    this.#runners.set(id, runner);
    void runner.done.then(async () => {
      if (this.#runners.get(id) === runner) this.#runners.delete(id);
      // A source that stopped on its own without saying why would stay "active" for ever.
      if (runner.outcome?.reason === "returned") {
        await this.#failed(
          id,
          "source.returned",
          `source "${id}" stopped reading without saying why (its ${definition.kind} adapter returned); resume it to read again`,
        ).catch(() => undefined);
      }
      this.#options.changed();
    });
  }

  /** Stops `id`'s runner and waits for it (nothing when none runs). */
  async stop(id: string): Promise<void> {
    const runner = this.#runners.get(id);
    if (!runner) return;
    this.#runners.delete(id);
    await runner.stop();
  }

  /** Stops every runner and starts none after. */
  async close(): Promise<void> {
    this.#closed = true;
    const runners = [...this.#runners.values()];
    this.#runners.clear();
    await Promise.all(runners.map((runner) => runner.stop()));
  }

  /** Logs that `id` failed for good. */
  async #failed(id: string, code: string, message: string): Promise<void> {
    const { store, continuity } = this.#options;
    await store.append({
      continuity,
      stream: { kind: "source", id },
      type: "source.failed",
      data: { source_id: id, error: { code, message }, final: true },
    });
  }

  /** Resolves once chunk `n - 1` of `id` was delivered (a dataset reads batch by batch). */
  async #pace(id: string, n: number, signal: AbortSignal): Promise<void> {
    while ((this.#options.fold().source(id)?.delivered ?? 0) < n - 1) {
      signal.throwIfAborted();
      await this.#options.next(signal);
    }
  }
}
