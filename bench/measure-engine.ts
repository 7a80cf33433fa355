import type { EventStore } from "../src/log/event-store.js";
import type { Durability } from "../src/log/index.js";
import { openEventStore } from "../src/log/open-store.js";
import { batchAppends, droppableAppends } from "./batched-appends.js";
import type { BenchConfig } from "./config.js";
import { criticalAppends } from "./critical-appends.js";
import type { Engine } from "./engine.js";
import { fillReplayLog, foldReplayLog } from "./replay-fold.js";
import type { EngineSection, ResultRow } from "./report.js";
import { median, settleDisk, summarizeLatencies } from "./stats.js";
import { subscribeLatencies } from "./subscribe-latency.js";
import { STEPS } from "./workload.js";

/** Targets from the issue: batched appends and replay against the ceiling, latency absolute. */
const TARGETS = {
  batched: { minRatio: 0.6 },
  replay: { minRatio: 0.7 },
  p99: { sqlite: { maxValue: 5 }, postgres: { maxValue: 20 } },
} as const;

type Sample = { spool: number[]; ceiling: number[] };

/** Longest a one-at-a-time Spool loop runs per run before it stops and reports its rate. */
const CRITICAL_CAP_MS = 15_000;
/** Longest the droppable row keeps firing per run (then it flushes and reports its rate). */
const DROPPABLE_CAP_MS = 20_000;

/**
 * Measures every row for `engine`: each measure `config.runs` times, Spool and the raw ceiling
 * taking turns inside each run (their order alternating between runs), and reports the medians.
 */
export async function measureEngine(
  engine: Engine,
  title: string,
  config: BenchConfig,
  progress: (line: string) => void,
): Promise<EngineSection> {
  const rows: ResultRow[] = [];
  const notes: string[] = [
    "every append measure, Spool's and the ceiling's, starts after `sync`: none pays for the write-back of the one before",
  ];
  const open = (db: string, durability: Durability) => openEventStore({ db, durability });
  const withStore = async <T>(
    label: string,
    durability: Durability,
    work: (s: EventStore) => Promise<T>,
  ) => {
    const store = await open(await engine.freshLocation(label), durability);
    try {
      settleDisk();
      return await work(store);
    } finally {
      await store.close();
    }
  };
  /** Runs `spool` and `ceiling` once per run, alternating which goes first. */
  const repeat = async (
    name: string,
    spool: () => Promise<number>,
    ceiling: () => Promise<number>,
  ): Promise<Sample> => {
    const sample: Sample = { spool: [], ceiling: [] };
    for (let run = 0; run < config.runs; run++) {
      progress(`${engine.kind}: ${name}, run ${run + 1}/${config.runs}`);
      const raw = () => {
        settleDisk();
        return ceiling();
      };
      if (run % 2 === 0) {
        sample.spool.push(await spool());
        sample.ceiling.push(await raw());
      } else {
        sample.ceiling.push(await raw());
        sample.spool.push(await spool());
      }
    }
    return sample;
  };

  // Row 1: critical appends awaited one by one, against single-row autocommit INSERTs.
  const critical = config.criticalEvents;
  for (const durability of ["strict", "fast"] as const) {
    const timed: number[] = [];
    const sample = await repeat(
      `critical appends (${durability})`,
      () =>
        withStore(`critical-${durability}`, durability, async (s) => {
          const rate = await criticalAppends(s, critical, CRITICAL_CAP_MS);
          timed.push(rate.events);
          return rate.perSecond;
        }),
      () => engine.singleInserts(critical, durability),
    );
    if (timed.some((events) => events < critical)) {
      notes.push(
        `critical appends (${durability}) hit the ${CRITICAL_CAP_MS / 1000} s cap: ${timed.map(fmt).join(", ")} of ${fmt(critical)} events timed per run`,
      );
    }
    rows.push({
      measure: `critical append, awaited one by one, ${durability} (${fmt(critical)} events)`,
      unit: "events/s",
      spool: median(sample.spool),
      ceiling: median(sample.ceiling),
    });
  }

  // Row 2: batched appends (droppable fire-and-flush, critical appendBatch) against multi-row INSERTs.
  const batched = config.batchedEvents;
  const droppable: number[] = [];
  const interleaved: number[] = [];
  const droppableTimed: number[] = [];
  const batchedSample = await repeat(
    "batched appends",
    async () => {
      for (const [steps, rates] of [
        [1, droppable],
        [STEPS, interleaved],
      ] as const) {
        const rate = await withStore("droppable", "strict", (s) =>
          droppableAppends(s, batched, DROPPABLE_CAP_MS, steps),
        );
        rates.push(rate.perSecond);
        droppableTimed.push(rate.events);
      }
      return withStore("batch", "strict", (s) => batchAppends(s, batched));
    },
    () => engine.batchInserts(batched, "strict"),
  );
  if (droppableTimed.some((events) => events < batched)) {
    notes.push(
      `droppable appends hit the ${DROPPABLE_CAP_MS / 1000} s cap: ${droppableTimed.map(fmt).join(", ")} of ${fmt(batched)} events fired per run`,
    );
  }
  const batchCeiling = median(batchedSample.ceiling);
  rows.push(
    {
      measure: `token.delta (droppable) of one step fired in bursts of 1,000, then flush, strict (${fmt(batched)} events)`,
      unit: "events/s",
      spool: median(droppable),
      ceiling: batchCeiling,
      target: TARGETS.batched,
    },
    {
      measure: `turn.added appendBatch ×1,000, strict (${fmt(batched)} events)`,
      unit: "events/s",
      spool: median(batchedSample.spool),
      ceiling: batchCeiling,
      target: TARGETS.batched,
    },
    {
      measure: `token.delta as above, each event in another of ${STEPS} steps, strict (${fmt(batched)} events)`,
      unit: "events/s",
      spool: median(interleaved),
      ceiling: batchCeiling,
    },
  );
  notes.push(
    `token.delta rows: one step streaming two interleaved blocks (none coalesce); the ${STEPS}-step row is the worst case for Spool's second index, on (stream, seq), which the ceiling's table lacks: each insert lands in the middle of it, where a step streaming alone appends at its end`,
  );

  // Row 3: one log filled once, folded and raw-scanned `runs` times.
  const replay = config.replayEvents;
  const replayLocation = await engine.freshLocation("replay");
  const replayStore = await open(replayLocation, "strict");
  try {
    progress(`${engine.kind}: filling the replay log with ${fmt(replay)} events`);
    const fill = await fillReplayLog(replayStore, replay);
    notes.push(
      `replay log filled once with ${fmt(replay)} events (appendBatch ×5,000, ~300-byte data) at ${fmt(fill)} events/s; folded ${config.runs}× on it`,
    );
    const sample = await repeat(
      "fold",
      () => foldReplayLog(replayStore, replay),
      () => engine.scan(replayLocation, replay),
    );
    rows.push({
      measure: `fold over ${fmt(replay)} events`,
      unit: "events/s",
      spool: median(sample.spool),
      ceiling: median(sample.ceiling),
      target: TARGETS.replay,
    });
  } finally {
    await replayStore.close();
  }

  // Row 4: subscription latency, across two stores on one log and inside one store.
  const appends = config.latencyAppends;
  const other: { p50: number[]; p99: number[] } = { p50: [], p99: [] };
  const same: { p50: number[]; p99: number[] } = { p50: [], p99: [] };
  const raw: { p50: number[]; p99: number[] } = { p50: [], p99: [] };
  /** Keeps one run's p50 and p99; returns the p99 only to satisfy `repeat`. */
  const add = (into: typeof other, samples: number[]) => {
    const summary = summarizeLatencies(samples);
    into.p50.push(summary.p50);
    into.p99.push(summary.p99);
    return summary.p99;
  };
  await repeat(
    "subscribe latency",
    async () => {
      const location = await engine.freshLocation("latency");
      const writer = await open(location, "strict");
      const reader = await open(location, "strict");
      try {
        add(other, await subscribeLatencies(writer, reader, appends));
      } finally {
        await reader.close();
        await writer.close();
      }
      return withStore("latency-same", "strict", async (store) =>
        add(same, await subscribeLatencies(store, store, appends)),
      );
    },
    async () => add(raw, await engine.roundTrips(appends, "strict")),
  );
  const p99Target = TARGETS.p99[engine.kind];
  const otherLabel = `${engine.kind === "sqlite" ? "second connection" : "second store (LISTEN/NOTIFY)"}, ${fmt(appends)} appends`;
  const sameLabel = `same store, ${fmt(appends)} appends`;
  rows.push(
    latencyRow(`subscribe latency p50, ${otherLabel}`, other.p50, raw.p50),
    latencyRow(`subscribe latency p99, ${otherLabel}`, other.p99, raw.p99, p99Target),
    latencyRow(`subscribe latency p50, ${sameLabel}`, same.p50, raw.p50),
    latencyRow(`subscribe latency p99, ${sameLabel}`, same.p99, raw.p99, p99Target),
  );

  return { title, engine: await engine.describe(), rows, notes: [...notes, ...engine.notes] };
}

function latencyRow(
  measure: string,
  spool: number[],
  ceiling: number[],
  target?: { maxValue: number },
): ResultRow {
  const row: ResultRow = { measure, unit: "ms", spool: median(spool), ceiling: median(ceiling) };
  if (target) row.target = target;
  return row;
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}
