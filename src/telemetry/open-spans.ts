import type { SpanAttributes, SpanKindName, SpanRecord, SpanStatusRecord } from "./span-record.js";

/** Where a span sits: its trace and its own id (what a child or a link points at). */
export interface SpanRef {
  traceId: string;
  spanId: string;
}

/** A span still open in the fold, and the time of the newest event that touched it. */
export interface OpenSpan {
  record: SpanRecord;
  lastTime: string;
}

/** Options of `openSpan`. */
export interface OpenSpanOptions {
  name: string;
  kind: SpanKindName;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  startTime: string;
  attributes: SpanAttributes;
}

/** A new open span, its end not yet known (`endTime` is the start until it is closed). */
export function openSpan(options: OpenSpanOptions): OpenSpan {
  const record: SpanRecord = {
    traceId: options.traceId,
    spanId: options.spanId,
    name: options.name,
    kind: options.kind,
    startTime: options.startTime,
    endTime: options.startTime,
    status: { code: "unset" },
    attributes: options.attributes,
    events: [],
    links: [],
  };
  if (options.parentSpanId !== undefined) record.parentSpanId = options.parentSpanId;
  return { record, lastTime: options.startTime };
}

/** Closes `span` at `time` (never before its start) with `status`: the finished record. */
export function closeSpan(span: OpenSpan, time: string, status?: SpanStatusRecord): SpanRecord {
  const { record } = span;
  record.endTime = time < record.startTime ? record.startTime : time;
  if (status) record.status = status;
  return record;
}

/** Marks `span` failed with `message` and `errorType` (`error.type`), without closing it. */
export function failSpan(span: OpenSpan, errorType: string, message: string): void {
  span.record.status = { code: "error", message };
  span.record.attributes["error.type"] = errorType;
}

/** The ref of a span record. */
export function refOf(record: SpanRecord): SpanRef {
  return { traceId: record.traceId, spanId: record.spanId };
}
