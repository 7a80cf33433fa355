import type { SpanRecord } from "./span-record.js";

/** A span with its children (ordered by start time, then span id). */
export interface SpanNode extends SpanRecord {
  children: SpanNode[];
}

/** One trace: its id and its root spans (spans whose parent is not among the spans given). */
export interface TraceTree {
  traceId: string;
  roots: SpanNode[];
}

const byStart = (a: SpanRecord, b: SpanRecord) =>
  a.startTime < b.startTime
    ? -1
    : a.startTime > b.startTime
      ? 1
      : a.spanId < b.spanId
        ? -1
        : a.spanId > b.spanId
          ? 1
          : 0;

/**
 * `spans` as trees: one per trace, ordered by the start of its first root; children ordered by
 * start time. The shape `spool trace --json` prints (docs/telemetry.md). Pure.
 */
export function spanTrees(spans: readonly SpanRecord[]): TraceTree[] {
  const nodes = new Map<string, SpanNode>();
  for (const span of spans) nodes.set(`${span.traceId}/${span.spanId}`, { ...span, children: [] });
  const traces = new Map<string, SpanNode[]>();
  for (const node of nodes.values()) {
    const parent =
      node.parentSpanId !== undefined
        ? nodes.get(`${node.traceId}/${node.parentSpanId}`)
        : undefined;
    if (parent) parent.children.push(node);
    else traces.set(node.traceId, [...(traces.get(node.traceId) ?? []), node]);
  }
  for (const node of nodes.values()) node.children.sort(byStart);
  return [...traces.entries()]
    .map(([traceId, roots]) => ({ traceId, roots: roots.sort(byStart) }))
    .sort((a, b) => byStart(a.roots[0]!, b.roots[0]!));
}
