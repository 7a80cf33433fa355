import type { Resource } from "@opentelemetry/resources";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import type { OtlpSettings } from "./otlp-settings.js";
import type { SpanRecord } from "./span-record.js";
import { TelemetryError } from "./telemetry-error.js";

/** Spans per OTLP request. */
const BATCH = 512;
/** `ExportResultCode.SUCCESS` of `@opentelemetry/core`. */
const SUCCESS = 0;

/**
 * Sends span records to an OTLP/HTTP collector (JSON encoding) with the official exporter.
 *
 * Contract: `send` never throws and never waits: spans are batched and exported in order, one
 * request at a time; a failed request is reported once to `onError` (and counted), never retried
 * forever, and never stops later ones. `flush` resolves when everything sent so far has been
 * answered; `close` flushes, then shuts the exporter down.
 */
export interface OtlpSpanSink {
  send(spans: readonly SpanRecord[]): void;
  flush(): Promise<void>;
  close(): Promise<void>;
  /** Spans the collector accepted, and spans whose request failed. */
  readonly exported: number;
  readonly failed: number;
}

/** Options of `openOtlpSink`. */
export interface OtlpSinkOptions {
  /** Told of each failed request (its message says why; it holds no header values). */
  onError?: (error: TelemetryError) => void;
  /** `service.version` of the resource. */
  serviceVersion?: string;
}

type Modules = Awaited<ReturnType<typeof loadModules>>;

/** The OpenTelemetry packages, loaded only here (and only when something is exported). */
async function loadModules() {
  const [exporter, resources, api] = await Promise.all([
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
    import("@opentelemetry/api"),
  ]);
  return { exporter, resources, api };
}

/** Opens a sink to the collector `settings` name; loads the OpenTelemetry packages. */
export async function openOtlpSink(
  settings: OtlpSettings,
  options: OtlpSinkOptions = {},
): Promise<OtlpSpanSink> {
  const modules = await loadModules();
  const exporter = new modules.exporter.OTLPTraceExporter({
    url: settings.url,
    headers: settings.headers,
    timeoutMillis: settings.timeoutMs,
  });
  const resource = modules.resources.resourceFromAttributes({
    ...settings.resource,
    "service.name": settings.serviceName,
    ...(options.serviceVersion !== undefined ? { "service.version": options.serviceVersion } : {}),
  });
  const scope = {
    name: "spool",
    ...(options.serviceVersion ? { version: options.serviceVersion } : {}),
  };
  let pending: SpanRecord[] = [];
  let chain: Promise<void> = Promise.resolve();
  let scheduled = false;
  let exported = 0;
  let failed = 0;
  const exportBatch = (batch: SpanRecord[]) =>
    new Promise<void>((resolve) => {
      const spans = batch.map((record) => readableSpan(record, modules, resource, scope));
      exporter.export(spans, (result) => {
        if (result.code === SUCCESS) exported += batch.length;
        else {
          failed += batch.length;
          options.onError?.(
            new TelemetryError(
              "telemetry.export-failed",
              `the OTLP collector at ${safeUrl(settings.url)} did not take ${batch.length} span(s): ${result.error?.message ?? "unknown error"}`,
              {
                hint: "Check that the collector runs and accepts OTLP/HTTP JSON at that URL",
                retryable: true,
              },
            ),
          );
        }
        resolve();
      });
    });
  const drain = () => {
    scheduled = false;
    while (pending.length > 0) {
      const batch = pending.slice(0, BATCH);
      pending = pending.slice(BATCH);
      chain = chain.then(() => exportBatch(batch));
    }
  };
  return {
    send(spans) {
      if (spans.length === 0) return;
      pending.push(...spans);
      if (!scheduled) {
        scheduled = true;
        queueMicrotask(drain);
      }
    },
    async flush() {
      drain();
      await chain;
    },
    async close() {
      drain();
      await chain;
      await exporter.shutdown();
    },
    get exported() {
      return exported;
    },
    get failed() {
      return failed;
    },
  };
}

/** The URL without credentials or query (safe to print). */
function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return "(the configured URL)";
  }
}

/** Milliseconds since the epoch as OpenTelemetry's `[seconds, nanoseconds]`. */
function hrTime(iso: string): [number, number] {
  const ms = Date.parse(iso);
  const seconds = Math.floor(ms / 1000);
  return [seconds, (ms - seconds * 1000) * 1_000_000];
}

/** A span record as the SDK's `ReadableSpan`, which the exporter encodes. */
function readableSpan(
  record: SpanRecord,
  modules: Modules,
  resource: Resource,
  scope: { name: string; version?: string },
): ReadableSpan {
  const { SpanKind, SpanStatusCode, TraceFlags } = modules.api;
  const startTime = hrTime(record.startTime);
  const endTime = hrTime(record.endTime);
  const durationMs = Date.parse(record.endTime) - Date.parse(record.startTime);
  const durationSeconds = Math.floor(durationMs / 1000);
  const context = {
    traceId: record.traceId,
    spanId: record.spanId,
    traceFlags: TraceFlags.SAMPLED,
  };
  return {
    name: record.name,
    kind: record.kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL,
    spanContext: () => context,
    ...(record.parentSpanId !== undefined
      ? {
          parentSpanContext: {
            traceId: record.traceId,
            spanId: record.parentSpanId,
            traceFlags: TraceFlags.SAMPLED,
          },
        }
      : {}),
    startTime,
    endTime,
    duration: [durationSeconds, (durationMs - durationSeconds * 1000) * 1_000_000],
    status:
      record.status.code === "error"
        ? { code: SpanStatusCode.ERROR, message: record.status.message ?? "" }
        : { code: SpanStatusCode.UNSET },
    attributes: record.attributes,
    links: record.links.map((link) => ({
      context: { traceId: link.traceId, spanId: link.spanId, traceFlags: TraceFlags.SAMPLED },
      attributes: link.attributes,
    })),
    events: record.events.map((event) => ({
      name: event.name,
      time: hrTime(event.time),
      attributes: event.attributes,
    })),
    ended: true,
    resource,
    instrumentationScope: scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}
