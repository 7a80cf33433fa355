import type { StreamPart } from "../providers/index.js";
import type { NewEventOf, StreamRef } from "../spec/index.js";

/**
 * Something that consumes a model's stream parts as they arrive: the log, the transcript file, the
 * knowledge file, the caller's return value, a UI.
 *
 * Contract: `write` is called once per part, in order, never concurrently (the next call waits for
 * the promise the previous one returned). A sink that throws or rejects is considered failed: it
 * gets no more parts, and the stream and the other sinks go on. `close` is called once, after the
 * last `write` has settled; it flushes whatever the sink holds.
 */
export interface StreamSink {
  /** Names the sink in reports and `sink.failed` events (`log`, `transcript`, `knowledge`). */
  readonly name: string;
  write(part: StreamPart): void | Promise<void>;
  close?(): Promise<void>;
}

/**
 * What the fan-out says about a sink: it failed (reported once; `droppedParts` counts the parts it
 * did not get), or its queue passed the lag limit (`lagMs`: how long it has had a backlog).
 */
export type SinkReport =
  | { kind: "failed"; sink: string; code: string; message: string; droppedParts: number }
  | { kind: "lagging"; sink: string; queuedParts: number; lagMs: number };

/**
 * The event that records `report` (`sink.failed`, critical; `sink.lagging`, droppable) on
 * `stream` (a step, a thread, or the continuity), ready for `store.append`.
 */
export function sinkReportEvent(
  report: SinkReport,
  continuity: string,
  stream: StreamRef,
): NewEventOf<"sink.failed"> | NewEventOf<"sink.lagging"> {
  if (report.kind === "failed") {
    return {
      continuity,
      stream,
      type: "sink.failed",
      data: {
        sink: report.sink,
        code: report.code,
        message: report.message.slice(0, 20_000),
        dropped_parts: report.droppedParts,
      },
    };
  }
  return {
    continuity,
    stream,
    type: "sink.lagging",
    data: { sink: report.sink, queued_parts: report.queuedParts, lag_ms: report.lagMs },
  };
}

/** A stable code and a message for a sink's failure, whatever it threw. */
export function describeSinkError(
  error: unknown,
  fallbackCode: string,
): {
  code: string;
  message: string;
} {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return {
    code: typeof code === "string" && code.length > 0 && code.length <= 200 ? code : fallbackCode,
    message: message === "" ? fallbackCode : message,
  };
}
