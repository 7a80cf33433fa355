/**
 * The HTTP server's live events under load (`npm run bench -- server`), on SQLite and on
 * PostgreSQL (embedded): 200 SSE subscribers (the `eventsource` package) on one continuity while
 * `turn.added` events are appended at 20 per second for `BENCH_SERVER_SECONDS` (default 60):
 * p50/p99 delivery latency (from just before the append to the subscriber's handler) beside the
 * store's own subscribe latency on the same store (`subscribeLatencies`, the baseline), lost and
 * duplicated deliveries, and heap and RSS over the run. Then fan-out: a burst of events appended
 * at once, the events per second delivered to every one of 1, 100 and 1,000 subscribers.
 * Subscribers, server and store share this one process (and its event loop), so the figures are
 * the whole loopback path's, clients included.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EventStore, openEventStore } from "../../src/log/index.js";
import { AccessTokens, type RunningServer, serve } from "../../src/server/index.js";
import {
  burstTurns,
  openSubscribers,
  paceTurns,
  type SubscriberRecord,
} from "../../test/support/sse-load.js";
import { startEmbeddedPostgres } from "../embedded-postgres-server.js";
import { type EngineSection, type ResultRow, renderSection } from "../report.js";
import { percentile } from "../stats.js";
import { subscribeLatencies } from "../subscribe-latency.js";

const SECONDS = Number(process.env.BENCH_SERVER_SECONDS ?? 60);
const SUBSCRIBERS = 200;
const PER_SECOND = 20;
const FAN_OUT = [1, 100, 1_000] as const;
const BURST = 200;
const MiB = 2 ** 20;

/** A server on a store, with a reader token. */
interface Rig {
  store: EventStore;
  server: RunningServer;
  token: string;
}

async function startRig(db: string, dir: string): Promise<Rig> {
  const store = await openEventStore({ db, cwd: dir, env: {} });
  const { secret } = await new AccessTokens(store).create({
    actor: "bench",
    role: "reader",
    by: "bench",
  });
  const server = await serve({
    store,
    workspace: dir,
    env: {},
    lease: { ttlMs: 5_000 },
    port: 0,
    dashboard: false,
    rateLimit: { burst: 100_000, perSecond: 100_000 },
  });
  return { store, server, token: secret };
}

/** Lost and duplicated deliveries: each subscriber's seqs against the expected list. */
function audit(records: readonly SubscriberRecord[], expected: readonly number[]) {
  let lost = 0;
  let duplicated = 0;
  const want = new Set(expected);
  for (const record of records) {
    const got = new Set(record.seqs);
    duplicated += record.seqs.length - got.size;
    for (const seq of want) if (!got.has(seq)) lost += 1;
  }
  return { lost, duplicated };
}

/** The sustained run: rows for latency and memory, notes for the audit. */
async function sustained(rig: Rig, progress: (line: string) => void) {
  const subscribers = await openSubscribers({
    url: rig.server.url,
    token: rig.token,
    continuity: "load",
    count: SUBSCRIBERS,
    after: 0,
  });
  const heap: number[] = [];
  const rss: number[] = [];
  try {
    const started = performance.now();
    const seqs = await paceTurns(rig.store, "load", PER_SECOND, SECONDS, (second) => {
      const usage = process.memoryUsage();
      heap.push(usage.heapUsed / MiB);
      rss.push(usage.rss / MiB);
      if (second % 10 === 0) progress(`server: ${second} s of ${SECONDS}`);
    });
    const appendSeconds = (performance.now() - started) / 1000;
    await subscribers.reached(seqs.at(-1)!);
    const latencies = subscribers.records.flatMap((record) => record.latencies);
    const rate = seqs.length / appendSeconds;
    return { latencies, ...audit(subscribers.records, seqs), heap, rss, events: seqs.length, rate };
  } finally {
    subscribers.close();
  }
}

/** Events per second delivered to every one of `count` subscribers, for a burst. */
async function fanOut(rig: Rig, count: number): Promise<{ rate: number; lost: number }> {
  const continuity = `fan-${count}`;
  const subscribers = await openSubscribers({
    url: rig.server.url,
    token: rig.token,
    continuity,
    count,
    after: 0,
  });
  try {
    const start = performance.now();
    const seqs = await burstTurns(rig.store, continuity, BURST);
    await subscribers.reached(seqs.at(-1)!);
    const seconds = (performance.now() - start) / 1000;
    const { lost, duplicated } = audit(subscribers.records, seqs);
    return { rate: BURST / seconds, lost: lost + duplicated };
  } finally {
    subscribers.close();
  }
}

/** One backend's table. */
async function measureOn(
  title: string,
  open: (dir: string) => Promise<string>,
  progress: (line: string) => void,
): Promise<EngineSection> {
  const dir = mkdtempSync(join(tmpdir(), "spool-bench-server-"));
  const rig = await startRig(await open(dir), dir);
  try {
    progress(`server: ${title}: store subscribe latency (baseline)`);
    const baseline = await subscribeLatencies(rig.store, rig.store, 200);
    progress(`server: ${title}: ${SUBSCRIBERS} subscribers, ${PER_SECOND} turns/s, ${SECONDS} s`);
    const run = await sustained(rig, progress);
    const rows: ResultRow[] = [
      {
        measure: `p50 delivery, ${SUBSCRIBERS} SSE subscribers at ${PER_SECOND} turns/s`,
        unit: "ms",
        spool: percentile(run.latencies, 50),
        ceiling: percentile(baseline, 50),
      },
      {
        measure: `p99 delivery, ${SUBSCRIBERS} SSE subscribers at ${PER_SECOND} turns/s`,
        unit: "ms",
        spool: percentile(run.latencies, 99),
        ceiling: percentile(baseline, 99),
      },
    ];
    const tenth = Math.max(0, Math.floor(run.heap.length / 6) - 1);
    rows.push(
      {
        measure: `heap used after ${tenth + 1} s of turns`,
        unit: "MiB",
        spool: run.heap[tenth] ?? NaN,
      },
      {
        measure: `heap used after ${SECONDS} s of turns`,
        unit: "MiB",
        spool: run.heap.at(-1) ?? NaN,
      },
      { measure: `RSS after ${tenth + 1} s of turns`, unit: "MiB", spool: run.rss[tenth] ?? NaN },
      { measure: `RSS after ${SECONDS} s of turns`, unit: "MiB", spool: run.rss.at(-1) ?? NaN },
    );
    const fanLost: string[] = [];
    for (const count of FAN_OUT) {
      progress(`server: ${title}: fan-out to ${count}`);
      const fan = await fanOut(rig, count);
      rows.push({
        measure: `fan-out: events/s to each of ${count.toLocaleString("en-US")} subscriber${count === 1 ? "" : "s"}`,
        unit: "events/s",
        spool: fan.rate,
      });
      fanLost.push(`${count}: ${fan.lost}`);
    }
    return {
      title: `Server: live events over SSE on ${title}`,
      baseline: "store subscribe",
      rows,
      notes: [
        `appends achieved ${run.rate.toFixed(1)} turns/s of the ${PER_SECOND} asked (the writer shares the process with the server and every subscriber; when it falls behind it appends back to back)`,
        `${run.events} events × ${SUBSCRIBERS} subscribers = ${run.latencies.length.toLocaleString("en-US")} deliveries timed; lost ${run.lost}, duplicated ${run.duplicated}`,
        `fan-out bursts of ${BURST.toLocaleString("en-US")} events (appended in batches of 100); lost or duplicated by subscriber count: ${fanLost.join(", ")}`,
        "baseline: `EventStore.subscribe` latency on the same store, one subscriber, appends one at a time",
        "subscribers, server and store share one process: latency includes the clients' own parsing",
      ],
    };
  } finally {
    await rig.server.close();
    await rig.store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The server group's tables: SQLite, then PostgreSQL on an embedded server. */
export async function measureServerLoad(
  progress: (line: string) => void,
): Promise<EngineSection[]> {
  const guard = async (title: string, measure: () => Promise<EngineSection>) => {
    try {
      const section = await measure();
      // Each table as soon as it is measured, so a later failure or a stopped run keeps it.
      progress(`\n${renderSection(section)}`);
      return section;
    } catch (error) {
      console.error(error);
      process.exitCode = 1;
      const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
      return {
        title: `Server: live events over SSE on ${title}`,
        rows: [],
        notes: [],
        skipped: `failed: ${reason}`,
      };
    }
  };
  const sections = [
    await guard("SQLite", () =>
      measureOn("SQLite", async (dir) => join(dir, "spool.db"), progress),
    ),
  ];
  progress("server: starting embedded-postgres");
  const pg = await startEmbeddedPostgres();
  try {
    sections.push(
      await guard("PostgreSQL", () =>
        measureOn("PostgreSQL", async () => pg.url("postgres"), progress),
      ),
    );
  } finally {
    await pg.stop();
  }
  return sections;
}
