import type { SpanNode, SpanRecord, TraceTree } from "../../src/telemetry/index.js";
import type { ReceivedSpan } from "./otlp-receiver.js";

/** A span in one comparable form, whether a collector received it or `spool trace --json` printed it. */
export interface ComparableSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: "internal" | "client";
  startNanos: string;
  endNanos: string;
  status: { code: "unset" | "error"; message: string | undefined };
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
}

const nanos = (iso: string) => (BigInt(Date.parse(iso)) * 1_000_000n).toString();

/** A collector's span in comparable form (OTLP kinds 1 internal, 3 client; status 2 error). */
export function fromReceived(span: ReceivedSpan): ComparableSpan {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId,
    name: span.name,
    kind: span.kind === 3 ? "client" : "internal",
    startNanos: BigInt(span.startTimeUnixNano).toString(),
    endNanos: BigInt(span.endTimeUnixNano).toString(),
    status: { code: span.status.code === 2 ? "error" : "unset", message: span.status.message },
    attributes: span.attributes,
    events: span.events,
    links: span.links,
  };
}

/** A span record in comparable form. */
export function fromRecord(span: SpanRecord): ComparableSpan {
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId,
    name: span.name,
    kind: span.kind,
    startNanos: nanos(span.startTime),
    endNanos: nanos(span.endTime),
    status: { code: span.status.code, message: span.status.message },
    attributes: span.attributes,
    events: span.events.map(({ name, attributes }) => ({ name, attributes })),
    links: span.links,
  };
}

/** Every span of `spool trace --json`'s trees, flattened (parents before children). */
export function flattenTrees(trees: readonly TraceTree[]): SpanRecord[] {
  const spans: SpanRecord[] = [];
  const walk = (node: SpanNode) => {
    const { children, ...span } = node;
    spans.push(span);
    for (const child of children) walk(child);
  };
  for (const tree of trees) for (const root of tree.roots) walk(root);
  return spans;
}

/** Spans sorted by span id, for comparing two sets regardless of order. */
export function bySpanId<T extends { spanId: string }>(spans: readonly T[]): T[] {
  return [...spans].sort((a, b) => (a.spanId < b.spanId ? -1 : a.spanId > b.spanId ? 1 : 0));
}

/**
 * An outline of trees: `name` per span (` !` when it failed), children indented and sorted by
 * name (spans that start in the same millisecond have no order of their own).
 */
export function outline(trees: readonly TraceTree[]): string[] {
  const lines: string[] = [];
  const walk = (node: SpanNode, depth: number) => {
    const error = node.status.code === "error" ? " !" : "";
    lines.push(`${"  ".repeat(depth)}${node.name}${error}`);
    const children = [...node.children].sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    for (const child of children) walk(child, depth + 1);
  };
  for (const tree of trees) {
    lines.push("trace");
    for (const root of tree.roots) walk(root, 1);
  }
  return lines;
}
