import type { z } from "zod";
import type { EventStore } from "../log/index.js";

/** Relic and method names: a lowercase word (`kv`, `http`, `search_index`), never a dot. */
export const RELIC_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,63}$/;

/** One method of a relic: what it does and the zod schema its parameters must pass. */
export interface RelicMethod {
  /** One sentence for the model. */
  description: string;
  /** Validates (and may default) the parameters; the relic receives the parsed value. */
  parameters: z.ZodType;
}

/** What a relic offers, without starting it. */
export interface RelicDescription {
  /** One sentence for the model. */
  description: string;
  /** Method name → method. Names follow `RELIC_NAME_PATTERN`. */
  methods: Readonly<Record<string, RelicMethod>>;
}

/** What a relic is given when it starts: the log it may keep state in, and its own name. */
export interface RelicContext {
  /** The continuity's log; a relic may append events of its own family and read them back. */
  store: EventStore;
  continuity: string;
  /** The relic's name, as registered (events it writes carry it). */
  relic: string;
}

/**
 * A named persistent service with a lifecycle: started lazily by its `RelicHost`, called many
 * times, stopped when the host closes or before a restart.
 *
 * Contract:
 * - `describe` is pure and may be called before `start`; it never changes while the relic lives.
 * - `start` prepares the relic (checks configuration, loads state) and rejects when it cannot
 *   run; the host logs that as `relic.failed` and tries again on a later call, up to its cap.
 * - `call` is only called between a successful `start` and `stop`, with parameters already
 *   parsed by the method's schema. It honours `signal` (settles soon after it aborts). A
 *   `RelicError` with `fatal: true` says the relic's state is broken: the host stops it and
 *   restarts it on the next call. Any other rejection fails that call only.
 * - `stop` releases resources and aborts in-flight calls; it never rejects for work it abandons.
 *   A stopped relic may be started again.
 */
export interface Relic {
  readonly name: string;
  describe(): RelicDescription;
  start(context: RelicContext): Promise<void>;
  /** `progress` (when the caller streams partial results) reports the call's progress. */
  call(
    method: string,
    parameters: unknown,
    signal: AbortSignal,
    progress?: (data: unknown) => void,
  ): Promise<unknown>;
  stop(): Promise<void>;
}
