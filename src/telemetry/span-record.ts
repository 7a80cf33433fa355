/** A span attribute's value: what OTLP carries (no nested objects; JSON text for structures). */
export type AttributeValue = string | number | boolean | string[];

/** A span's attributes by name. */
export type SpanAttributes = Record<string, AttributeValue>;

/** `internal` (a run, a tool, a handoff) or `client` (a model call to a provider). */
export type SpanKindName = "internal" | "client";

/** A span's status: `unset` on success (as the GenAI conventions ask), `error` with its message. */
export interface SpanStatusRecord {
  code: "unset" | "error";
  message?: string;
}

/** A point in a span's life (a provider retry, an action retry, a handoff). */
export interface SpanEventRecord {
  name: string;
  /** ISO-8601 time, from the log event it came from. */
  time: string;
  attributes: SpanAttributes;
}

/** A span of another trace (or of this one) a span points at: a handoff, a resumed run. */
export interface SpanLinkRecord {
  traceId: string;
  spanId: string;
  attributes: SpanAttributes;
}

/**
 * One finished span, as folded from the log: the same record for live export and for
 * `spool trace`, and the shape `spool trace --json` prints (docs/telemetry.md).
 *
 * Contract: ids are lowercase hex (`traceId` 32 digits, `spanId` 16), derived from the continuity
 * and the ids of the events the span came from, so folding the same events gives the same ids;
 * times are the ISO-8601 `ts` of those events (`endTime` ≥ `startTime`).
 */
export interface SpanRecord {
  traceId: string;
  spanId: string;
  /** Absent for a trace's root span. */
  parentSpanId?: string;
  name: string;
  kind: SpanKindName;
  startTime: string;
  endTime: string;
  status: SpanStatusRecord;
  attributes: SpanAttributes;
  events: SpanEventRecord[];
  links: SpanLinkRecord[];
}
