/**
 * What tracing costs: `spool trace`'s fold (`readTraces`) over a 100,000-event continuity on
 * SQLite (threads of runs with tool steps: run, step, message, action events), beside a bare
 * `read` of the same events, the baseline every after-the-fact export pays; and the export of
 * those spans to a loopback OTLP/HTTP collector through the official exporter (JSON), in spans/s.
 * The fold itself (pure, in memory) is also timed over the events already read.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EventStore, openEventStore } from "../../src/log/index.js";
import type { SpoolEvent } from "../../src/spec/index.js";
import {
  openOtlpSink,
  readTraces,
  resolveOtlpSettings,
  type SpanRecord,
  TraceFold,
} from "../../src/telemetry/index.js";
import { fillOlderThreads } from "../continuity/continuity-log.js";
import type { EngineSection } from "../report.js";
import { median, perSecond, timed } from "../stats.js";

const EVENTS = 100_000;
const CONTINUITY = "bench";

/** A collector that takes every request and counts nothing but the bytes. */
async function sinkServer() {
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bytes: () => bytes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function readAll(store: EventStore): Promise<SpoolEvent[]> {
  const events: SpoolEvent[] = [];
  for await (const event of store.read({ continuity: CONTINUITY })) events.push(event);
  return events;
}

async function traceAll(store: EventStore): Promise<SpanRecord[]> {
  const spans: SpanRecord[] = [];
  for await (const span of readTraces(store, CONTINUITY)) spans.push(span);
  return spans;
}

/** The fold over the log beside a bare read, the pure fold alone, and OTLP export. */
export async function measureTraceExport(
  runs: number,
  progress: (line: string) => void,
): Promise<EngineSection> {
  const dir = mkdtempSync(join(tmpdir(), "spool-bench-trace-"));
  const store = await openEventStore({ db: join(dir, "trace"), env: {} });
  const collector = await sinkServer();
  try {
    const events = await fillOlderThreads(store, CONTINUITY, EVENTS);
    progress(`trace export: ${events.toLocaleString("en-US")} events written`);
    const read: number[] = [];
    const traced: number[] = [];
    const folded: number[] = [];
    const exported: number[] = [];
    let spans: SpanRecord[] = [];
    for (let run = 0; run < runs; run++) {
      read.push((await timed(() => readAll(store))).ms);
      const trace = await timed(() => traceAll(store));
      traced.push(trace.ms);
      spans = trace.result;
      const all = await readAll(store);
      folded.push(
        (
          await timed(() => {
            const fold = new TraceFold({ continuity: CONTINUITY });
            for (const event of all) fold.push(event);
            fold.finish();
          })
        ).ms,
      );
      const sink = await openOtlpSink(
        resolveOtlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint }),
      );
      exported.push(
        (
          await timed(async () => {
            sink.send(spans);
            await sink.close();
          })
        ).ms,
      );
      progress(`trace export: run ${run + 1}/${runs}`);
    }
    return {
      title: "Telemetry: spans from the log",
      baseline: "bare read",
      rows: [
        {
          measure: `spool trace fold over ${EVENTS.toLocaleString("en-US")} events (read + fold)`,
          unit: "events/s",
          spool: perSecond(events, median(traced)),
          ceiling: perSecond(events, median(read)),
          target: { minRatio: 0.5 },
        },
        {
          measure: "the fold alone, events already in memory",
          unit: "events/s",
          spool: perSecond(events, median(folded)),
        },
        {
          measure: `OTLP/HTTP JSON export of ${spans.length.toLocaleString("en-US")} spans to a loopback collector`,
          unit: "events/s",
          spool: perSecond(spans.length, median(exported)),
        },
      ],
      notes: [
        `${spans.length.toLocaleString("en-US")} spans from ${EVENTS.toLocaleString("en-US")} events; the export row counts spans per second (batches of 512, one request at a time), ${Math.round(collector.bytes() / runs / 1024).toLocaleString("en-US")} KiB per export.`,
      ],
    };
  } finally {
    await collector.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
