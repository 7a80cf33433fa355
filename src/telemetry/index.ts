export { ATTR, OPERATION } from "./attribute-names.js";
export { type LiveTraces, type LiveTracesOptions, startLiveTraces } from "./live-traces.js";
export { type ReadTracesOptions, readTraces } from "./log-traces.js";
export { type OtlpSinkOptions, type OtlpSpanSink, openOtlpSink } from "./otlp-exporter.js";
export {
  contentWanted,
  OTLP_ENDPOINT_VARIABLES,
  type OtlpSettings,
  resolveOtlpSettings,
  tracesUrl,
  tracesWanted,
} from "./otlp-settings.js";
export { spanIdOf, traceIdOf } from "./span-ids.js";
export type {
  AttributeValue,
  SpanAttributes,
  SpanEventRecord,
  SpanKindName,
  SpanLinkRecord,
  SpanRecord,
  SpanStatusRecord,
} from "./span-record.js";
export { type SpanNode, spanTrees, type TraceTree } from "./span-tree.js";
export { TelemetryError } from "./telemetry-error.js";
export { TraceFold, type TraceFoldOptions, UNFINISHED } from "./trace-fold.js";
