import type { EventStore } from "../log/index.js";
import { isEvent } from "../spec/index.js";
import { type OtlpSpanSink, openOtlpSink } from "./otlp-exporter.js";
import { contentWanted, resolveOtlpSettings, tracesWanted } from "./otlp-settings.js";
import { TelemetryError } from "./telemetry-error.js";
import { TraceFold } from "./trace-fold.js";

/** Options of `startLiveTraces`. */
export interface LiveTracesOptions {
  store: EventStore;
  continuity: string;
  /** The environment (`OTEL_*`): without an OTLP endpoint in it, nothing starts or loads. */
  env: Record<string, string | undefined>;
  /** Told of a failed export (once per failed request); the run goes on regardless. */
  onError?: (error: TelemetryError) => void;
  /** `service.version` of the exported resource. */
  serviceVersion?: string;
}

/** Live export of one continuity's spans while a session runs it. */
export interface LiveTraces {
  /**
   * Folds every event appended so far, sends what ended, and waits until the collector has
   * answered; the subscription goes on.
   */
  flush(): Promise<void>;
  /** Folds what was appended up to now, sends it, stops following and shuts the exporter down. */
  close(): Promise<void>;
}

/**
 * Starts live export of `continuity`'s spans when `env` sets `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`); returns `undefined`, having imported nothing of
 * OpenTelemetry, when it does not.
 *
 * It follows the store's live events from the head at the call (runs that start after it are
 * exported; the threads already in the log are read first so handoff links resolve) through the
 * same `TraceFold` as `spool trace`, and sends each span as it ends. Spans of a run still going
 * when `close` is called are not sent: `spool trace` exports them later. Export failures go to
 * `onError` and never reach the run. A malformed `OTEL_*` variable throws `TelemetryError`.
 */
export async function startLiveTraces(options: LiveTracesOptions): Promise<LiveTraces | undefined> {
  const { store, continuity, env } = options;
  if (!tracesWanted(env)) return undefined;
  const settings = resolveOtlpSettings(env);
  const after = await store.head();
  const fold = new TraceFold({ continuity, captureContent: contentWanted(env) });
  for await (const event of store.read({ continuity, types: ["thread.started"], until: after })) {
    if (isEvent(event, "thread.started")) fold.learnThread(event);
  }
  const sink = await openOtlpSink(settings, {
    ...(options.onError ? { onError: options.onError } : {}),
    ...(options.serviceVersion !== undefined ? { serviceVersion: options.serviceVersion } : {}),
  });
  return followLive(store, continuity, after, fold, sink, options.onError);
}

function followLive(
  store: EventStore,
  continuity: string,
  after: number,
  fold: TraceFold,
  sink: OtlpSpanSink,
  onError: ((error: TelemetryError) => void) | undefined,
): LiveTraces {
  const controller = new AbortController();
  let seen = after;
  const waiters: { seq: number; resolve(): void }[] = [];
  const release = () => {
    for (const waiter of [...waiters]) {
      if (seen < waiter.seq) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  const following = (async () => {
    try {
      for await (const message of store.subscribe({
        continuity,
        after,
        signal: controller.signal,
      })) {
        if (message.type === "event") {
          sink.send(fold.push(message.event));
          seen = message.event.seq;
        } else seen = Math.max(seen, message.seq);
        release();
      }
    } finally {
      seen = Number.POSITIVE_INFINITY;
      release();
    }
  })().catch((error: unknown) => {
    onError?.(
      new TelemetryError("telemetry.follow-failed", "live trace export stopped following the log", {
        cause: error,
        hint: "The run is not affected; export its spans later with `spool trace`",
      }),
    );
  });
  const caughtUp = async () => {
    await store.flush();
    const head = (await store.continuity(continuity))?.lastSeq ?? 0;
    if (seen < head) await new Promise<void>((resolve) => waiters.push({ seq: head, resolve }));
  };
  return {
    async flush() {
      await caughtUp();
      await sink.flush();
    },
    async close() {
      try {
        await caughtUp();
      } finally {
        controller.abort();
        await following;
        await sink.close();
      }
    },
  };
}
