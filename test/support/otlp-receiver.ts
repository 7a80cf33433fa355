import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";

/** A span as an OTLP/HTTP JSON export request carried it, with its attributes decoded. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP's span kind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, unknown>;
  status: { code: number; message?: string };
  events: { name: string; attributes: Record<string, unknown> }[];
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
  /** The resource's attributes (service.name, …). */
  resource: Record<string, unknown>;
  /** The instrumentation scope's name. */
  scope: string;
}

/** A request the receiver got. */
export interface ReceivedRequest {
  path: string;
  contentType: string;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * A loopback OTLP/HTTP collector: decodes the JSON export requests the official exporter sends
 * to `/v1/traces` and keeps their spans, so a test checks what a backend would receive.
 */
export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: what `OTEL_EXPORTER_OTLP_ENDPOINT` takes. */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  readonly requests: ReceivedRequest[];
  /** Resolves once the spans received satisfy `check` (checked on every request). */
  until(check: (spans: readonly ReceivedSpan[]) => boolean): Promise<void>;
  close(): Promise<void>;
}

const anyValue: z.ZodType<unknown> = z.lazy(() =>
  z
    .object({
      stringValue: z.string().optional(),
      boolValue: z.boolean().optional(),
      intValue: z.union([z.number(), z.string()]).optional(),
      doubleValue: z.number().optional(),
      arrayValue: z.object({ values: z.array(anyValue).optional() }).optional(),
    })
    .transform((value): unknown => {
      if (value.stringValue !== undefined) return value.stringValue;
      if (value.boolValue !== undefined) return value.boolValue;
      if (value.intValue !== undefined) return Number(value.intValue);
      if (value.doubleValue !== undefined) return value.doubleValue;
      if (value.arrayValue !== undefined) return value.arrayValue.values ?? [];
      return null;
    }),
);
const keyValues = z
  .array(z.object({ key: z.string(), value: anyValue }))
  .optional()
  .transform((list) => Object.fromEntries((list ?? []).map(({ key, value }) => [key, value])));
const span = z.object({
  traceId: z.string(),
  spanId: z.string(),
  parentSpanId: z.string().optional(),
  name: z.string(),
  kind: z.number(),
  startTimeUnixNano: z.union([z.string(), z.number()]).transform(String),
  endTimeUnixNano: z.union([z.string(), z.number()]).transform(String),
  attributes: keyValues,
  status: z.object({ code: z.number().optional(), message: z.string().optional() }).optional(),
  events: z.array(z.object({ name: z.string(), attributes: keyValues })).optional(),
  links: z
    .array(z.object({ traceId: z.string(), spanId: z.string(), attributes: keyValues }))
    .optional(),
});
const exportRequest = z.object({
  resourceSpans: z.array(
    z.object({
      resource: z.object({ attributes: keyValues }).optional(),
      scopeSpans: z.array(
        z.object({ scope: z.object({ name: z.string() }), spans: z.array(span) }),
      ),
    }),
  ),
});

/** Starts an `OtlpReceiver` on a free loopback port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: ReceivedRequest[] = [];
  const waiters: { check(spans: readonly ReceivedSpan[]): boolean; resolve(): void }[] = [];
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const path = (req.url ?? "").split("?")[0] ?? "";
    const contentType = String(req.headers["content-type"] ?? "");
    requests.push({ path, contentType, headers: req.headers });
    if (req.method !== "POST" || path !== "/v1/traces" || !contentType.includes("json")) {
      res.writeHead(415, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: "only JSON OTLP traces are taken here" }));
    }
    const parsed = exportRequest.parse(JSON.parse(body));
    for (const resourceSpans of parsed.resourceSpans) {
      const resource = resourceSpans.resource?.attributes ?? {};
      for (const scopeSpans of resourceSpans.scopeSpans) {
        for (const received of scopeSpans.spans) {
          const { parentSpanId, status, ...rest } = received;
          spans.push({
            ...rest,
            ...(parentSpanId ? { parentSpanId } : {}),
            status: {
              code: status?.code ?? 0,
              ...(status?.message ? { message: status.message } : {}),
            },
            events: received.events ?? [],
            links: received.links ?? [],
            resource,
            scope: scopeSpans.scope.name,
          });
        }
      }
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end("{}");
    for (const waiter of [...waiters]) {
      if (!waiter.check(spans)) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    requests,
    until(check) {
      if (check(spans)) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ check, resolve }));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of req) parts.push(chunk as Buffer);
  return Buffer.concat(parts).toString("utf8");
}
