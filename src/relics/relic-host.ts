import { describeParameterIssues } from "../actions/index.js";
import type { EventStore } from "../log/index.js";
import { ConfigError, describeError, type SpoolError } from "../spec/index.js";
import {
  RELIC_NAME_PATTERN,
  type Relic,
  type RelicContext,
  type RelicDescription,
  type RelicMethod,
} from "./relic.js";
import { isFatalRelicError, RelicError } from "./relic-error.js";

/** Where a relic is in its lifecycle. */
export type RelicState =
  /** Never started. */
  | "idle"
  | "starting"
  | "running"
  /** Being stopped after a fatal failure. */
  | "stopping"
  /** Failed; starts again on the next call. */
  | "failed"
  /** Failed more often than the host allows; every call is refused. */
  | "broken"
  | "closed";

/** Options of one `RelicHost.call`. */
export interface RelicCallOptions {
  /** Aborts the call (the action's timeout or cancellation). */
  signal?: AbortSignal;
  /** The action that made the call, recorded in `relic.called`. */
  actionId?: string;
  /** Receives the relic's progress reports (the action's `progress`: `action.progress`). */
  progress?: (data: unknown) => void;
}

/**
 * The relics of one continuity: starts each lazily on its first call, logs every lifecycle change
 * and call, restarts a relic after a fatal failure, and stops them all on `close()`.
 *
 * Contract:
 * - `call` validates the parameters with the method's schema before the relic sees them; an
 *   unknown relic or method, or bad parameters, rejects with a `RelicError` that lists what exists
 *   or what was wrong, and nothing is logged or started.
 * - Concurrent first calls share one start. `relic.started` is durable before the first call
 *   reaches the relic; `relic.called` is durable before `call` resolves or rejects.
 * - A failed start, or a call that rejects with a fatal `RelicError`, counts as a failure
 *   (`relic.failed`); after a fatal call the relic is stopped (`relic.stopped`). The next call
 *   starts it again (`relic.started` with `restart` > 0) until `maxRestarts` failures within
 *   `restartWindowMs` have been restarted; after that the relic is `broken` and calls reject with
 *   `relic.unavailable` until its newest failure is `restartWindowMs` old, when the next call
 *   starts it again. A relic that crashes once a day is restarted every day.
 * - `close()` waits for starts under way, stops every running relic (`relic.stopped`), and
 *   refuses later calls with `relic.closed`. Idempotent. Close the host before its store.
 */
export interface RelicHost {
  /** Relic names, in registration order. */
  names(): string[];
  /** Every callable `<relic>.<method>`. */
  methods(): string[];
  describe(relic: string): RelicDescription | undefined;
  state(relic: string): RelicState | undefined;
  call(
    relic: string,
    method: string,
    parameters: unknown,
    options?: RelicCallOptions,
  ): Promise<unknown>;
  close(): Promise<void>;
}

/** Options of `createRelicHost`. */
export interface RelicHostOptions {
  store: EventStore;
  continuity: string;
  relics: readonly Relic[];
  /** Failures (failed starts and fatal calls) followed by a restart; the next one breaks the relic (default 3). */
  maxRestarts?: number;
  /**
   * How far back failures count toward `maxRestarts`, and how long a broken relic stays down
   * after its last failure (default 10 minutes).
   */
  restartWindowMs?: number;
  /** Monotonic milliseconds for `duration_ms` (default `performance.now`). */
  now?: () => number;
}

interface Slot {
  relic: Relic;
  description: RelicDescription;
  state: RelicState;
  /** The start under way (rejects when it fails), or the stop after a fatal failure. */
  pending: Promise<void> | undefined;
  starts: number;
  /** When each failure within the restart window happened (`now()` milliseconds). */
  failures: number[];
}

const NEVER_ABORTED = new AbortController().signal;

/** Creates the host of `options.relics`; throws `ConfigError` on a bad or duplicate name. */
export function createRelicHost(options: RelicHostOptions): RelicHost {
  const { store, continuity } = options;
  const maxRestarts = options.maxRestarts ?? 3;
  const windowMs = options.restartWindowMs ?? 600_000;
  const now = options.now ?? (() => performance.now());
  const slots = new Map<string, Slot>();
  for (const relic of options.relics) {
    const description = relic.describe();
    checkNames(relic.name, description, slots);
    slots.set(relic.name, {
      relic,
      description,
      state: "idle",
      pending: undefined,
      starts: 0,
      failures: [],
    });
  }
  let closing: Promise<void> | undefined;
  let closed = false;
  const append = (type: string, data: Record<string, unknown>) =>
    store.append({ continuity, type, data });

  const fail = async (slot: Slot, phase: "start" | "call", error: unknown, method?: string) => {
    const at = now();
    slot.failures = [...slot.failures.filter((time) => at - time < windowMs), at];
    const willRestart = slot.failures.length <= maxRestarts;
    await append("relic.failed", {
      relic: slot.relic.name,
      phase,
      ...(method !== undefined ? { method } : {}),
      error: errorData(error),
      failures: slot.failures.length,
      will_restart: willRestart,
    });
    return willRestart;
  };

  const start = async (slot: Slot): Promise<void> => {
    const context: RelicContext = { store, continuity, relic: slot.relic.name };
    try {
      await slot.relic.start(context);
    } catch (error) {
      const willRestart = await fail(slot, "start", error);
      slot.state = willRestart ? "failed" : "broken";
      throw new RelicError(
        "relic.start-failed",
        `relic "${slot.relic.name}" could not start: ${describeError(error)}`,
        {
          cause: error,
          retryable: willRestart,
          hint: willRestart
            ? "The next call tries to start it again"
            : `It failed too often and stays down for ${minutes(windowMs)}`,
        },
      );
    }
    await append("relic.started", { relic: slot.relic.name, restart: slot.starts });
    slot.starts += 1;
    slot.state = "running";
  };

  const ensureRunning = async (slot: Slot): Promise<void> => {
    for (;;) {
      if (closed) throw closedError();
      switch (slot.state) {
        case "running":
          return;
        case "starting":
          await slot.pending;
          return;
        case "stopping":
          await slot.pending;
          continue;
        case "broken": {
          const waited = now() - (slot.failures.at(-1) ?? 0);
          if (waited >= windowMs) {
            // Its failures are old now: give it another start.
            slot.failures = [];
            slot.state = "failed";
            continue;
          }
          throw new RelicError(
            "relic.unavailable",
            `relic "${slot.relic.name}" failed ${slot.failures.length} times within ${minutes(windowMs)} and is down for ${Math.ceil((windowMs - waited) / 1000)} s more`,
            {
              retryable: true,
              hint: "Do without it for now; it is started again once that time has passed",
            },
          );
        }
        case "closed":
          throw closedError();
        default:
          slot.state = "starting";
          slot.pending = start(slot);
          await slot.pending;
          return;
      }
    }
  };

  const afterFatal = async (slot: Slot, method: string, error: unknown): Promise<void> => {
    if (slot.state !== "running") return;
    slot.state = "stopping";
    const stopping = (async () => {
      const willRestart = await fail(slot, "call", error, method);
      await stopQuietly(slot.relic);
      await append("relic.stopped", {
        relic: slot.relic.name,
        reason: willRestart
          ? `fatal failure in ${method}; restarting on the next call`
          : `fatal failure in ${method}; failed too often, down for ${minutes(windowMs)}`,
      });
      slot.state = willRestart ? "failed" : "broken";
    })();
    slot.pending = stopping;
    await stopping;
  };

  const lookup = (relic: string, method: string): { slot: Slot; spec: RelicMethod } => {
    const slot = slots.get(relic);
    if (!slot) {
      throw new RelicError("relic.unknown", `there is no relic named "${relic}"`, {
        hint: `Use one of: ${[...slots.keys()].join(", ") || "(no relics)"}`,
      });
    }
    const spec = Object.hasOwn(slot.description.methods, method)
      ? slot.description.methods[method]
      : undefined;
    if (!spec) {
      throw new RelicError("relic.unknown-method", `relic "${relic}" has no method "${method}"`, {
        hint: `Use one of: ${Object.keys(slot.description.methods)
          .map((name) => `${relic}.${name}`)
          .join(", ")}`,
      });
    }
    return { slot, spec };
  };

  return {
    names: () => [...slots.keys()],
    methods: () =>
      [...slots.values()].flatMap((slot) =>
        Object.keys(slot.description.methods).map((method) => `${slot.relic.name}.${method}`),
      ),
    describe: (relic) => slots.get(relic)?.description,
    state: (relic) => slots.get(relic)?.state,
    async call(relic, method, parameters, callOptions = {}) {
      if (closed) throw closedError();
      const { slot, spec } = lookup(relic, method);
      const parsed = spec.parameters.safeParse(parameters);
      if (!parsed.success) {
        throw new RelicError(
          "relic.bad-parameters",
          `bad parameters for relic method "${relic}.${method}": ${describeParameterIssues(parsed.error)}`,
          { hint: "Call it again with parameters that match its schema" },
        );
      }
      await ensureRunning(slot);
      const startedAt = now();
      const base = {
        relic,
        method,
        ...(callOptions.actionId !== undefined ? { action_id: callOptions.actionId } : {}),
      };
      let result: unknown;
      try {
        result = await slot.relic.call(
          method,
          parsed.data,
          callOptions.signal ?? NEVER_ABORTED,
          callOptions.progress,
        );
      } catch (error) {
        await append("relic.called", {
          ...base,
          status: "failed",
          duration_ms: Math.max(0, now() - startedAt),
          error: errorData(error),
        });
        if (isFatalRelicError(error)) await afterFatal(slot, method, error);
        throw error;
      }
      await append("relic.called", {
        ...base,
        status: "succeeded",
        duration_ms: Math.max(0, now() - startedAt),
      });
      return result;
    },
    close() {
      closed = true;
      closing ??= (async () => {
        for (const slot of slots.values()) {
          await slot.pending?.catch(() => undefined);
          const wasRunning = slot.state === "running";
          slot.state = "closed";
          if (!wasRunning) continue;
          await stopQuietly(slot.relic);
          await append("relic.stopped", { relic: slot.relic.name, reason: "the host closed" });
        }
      })();
      return closing;
    },
  };
}

function closedError(): RelicError {
  return new RelicError("relic.closed", "the relic host is closed", {
    hint: "Relics cannot be called after the runtime shut them down",
  });
}

async function stopQuietly(relic: Relic): Promise<void> {
  try {
    await relic.stop();
  } catch {
    // A stop that fails has still stopped serving; the host never calls it again before a start.
  }
}

function errorData(error: unknown): { code: string; message: string } {
  const message = describeError(error).slice(0, 20_000) || "(no message)";
  const code = (error as SpoolError | undefined)?.code;
  return { code: typeof code === "string" && code ? code.slice(0, 200) : "relic.error", message };
}

function checkNames(name: string, description: RelicDescription, slots: Map<string, Slot>): void {
  if (!RELIC_NAME_PATTERN.test(name)) {
    throw new ConfigError("config.relics", `relic name "${name}" is not a lowercase word`, {
      hint: "Name relics with lowercase letters, digits, _ and - (no dots)",
    });
  }
  if (slots.has(name)) {
    throw new ConfigError("config.relics", `two relics are named "${name}"`, {
      hint: "Give every relic its own name",
    });
  }
  for (const method of Object.keys(description.methods)) {
    if (!RELIC_NAME_PATTERN.test(method)) {
      throw new ConfigError(
        "config.relics",
        `relic "${name}" has a method named "${method}", which is not a lowercase word`,
        { hint: "Name methods with lowercase letters, digits, _ and - (no dots)" },
      );
    }
  }
}

/** `ms` in words: "10 minutes", "90 s". */
function minutes(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} minute${ms === 60_000 ? "" : "s"}`;
  return `${Math.round(ms / 1000)} s`;
}
