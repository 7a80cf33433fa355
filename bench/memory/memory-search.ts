/**
 * The memory index at scale: 100,000 summaries (synthetic, written like a summarizer's: completed
 * work, decisions, next steps, over a vocabulary of systems, people, places and numbers) across
 * 1,000 continuities of 10 actors, indexed on SQLite (FTS5, porter stemmer) from the log. Measured:
 * the indexing cost per summary (catching up from the log: read, derive, write, FTS), and the
 * search latency (p50, p99 over 1,000 queries of 3 to 7 words, each excluding one continuity and
 * half of them scoped to an actor) through `MemoryIndex.search`, beside the same FTS5 MATCH run
 * raw through better-sqlite3 with no Spool code on the same file. Target: p99 ≤ 20 ms.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { type EventStore, openEventStore } from "../../src/log/index.js";
import { createMemoryIndex, openSqliteMemory } from "../../src/memory/index.js";
import type { AnyNewEvent } from "../../src/spec/index.js";
import { seededRandom } from "../../src/spec/index.js";
import type { EngineSection } from "../report.js";
import { percentile } from "../stats.js";

const SUMMARIES = Number(process.env.BENCH_MEMORY_SUMMARIES ?? 100_000);
const CONTINUITIES = 1000;
const ACTORS = 10;
const QUERIES = 1000;

const SYSTEMS =
  "billing checkout payments search gateway scheduler invoices ledger inventory shipping auth cache queue analytics reporting notifications onboarding mobile dashboard importer exporter crawler indexer pipeline warehouse catalog pricing refunds subscriptions webhooks".split(
    " ",
  );
const ACTIONS =
  "migrated refactored debugged deployed rolled reviewed benchmarked profiled documented rewrote patched upgraded configured monitored tested released archived audited split merged".split(
    " ",
  );
const THINGS =
  "schema timeout retry index replica certificate token budget quota latency backlog cron dashboard alert runbook contract endpoint migration dependency cluster bucket secret lease cursor snapshot".split(
    " ",
  );
const PEOPLE =
  "Ana Bo Carmen Dmitri Elena Farid Greta Hiro Ines Jonas Kofi Lena Mateo Nadia Omar Priya Quinn Rosa Sven Tariq".split(
    " ",
  );
const PLACES = "Lisbon Berlin Frankfurt Dublin Toronto Osaka Nairobi Austin Oslo Madrid".split(" ");
const WORDS = [...SYSTEMS, ...ACTIONS, ...THINGS, ...PEOPLE, ...PLACES];

function summary(next: () => number, n: number): string {
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const system = pick(SYSTEMS);
  return [
    `## Completed Work\n${pick(PEOPLE)} and I ${pick(ACTIONS)} the ${system} ${pick(THINGS)} in ${pick(PLACES)}; the ${pick(THINGS)} now takes ${Math.floor(next() * 900) + 10} ms and the ${pick(THINGS)} was ${pick(ACTIONS)}.`,
    `## Key Decisions\nKeep the ${system} ${pick(THINGS)} behind the ${pick(SYSTEMS)} ${pick(THINGS)}; ${pick(PEOPLE)} owns the ${pick(THINGS)} until release ${Math.floor(n / 1000)}.${n % 100}.`,
    `## Next\nAsk ${pick(PEOPLE)} about the ${pick(SYSTEMS)} ${pick(THINGS)} and ${pick(ACTIONS)} the ${pick(THINGS)} before Friday.`,
  ].join("\n\n");
}

async function fill(store: EventStore): Promise<void> {
  const next = seededRandom(7);
  const events: AnyNewEvent[] = [];
  const flush = async () => {
    await store.appendBatch(events.splice(0));
  };
  for (let c = 0; c < CONTINUITIES; c++) {
    events.push({
      continuity: `c-${c}`,
      type: "actor.added",
      actor: `actor-${c % ACTORS}`,
      origin: "bench",
      data: { actor_id: `actor-${c % ACTORS}`, kind: "person", access: "owner" },
    });
  }
  await flush();
  for (let n = 0; n < SUMMARIES; n++) {
    const continuity = `c-${n % CONTINUITIES}`;
    const thread = `th-${n}`;
    const text = summary(next, n);
    events.push({
      continuity,
      stream: { kind: "worker", id: `${thread}@summary1` },
      type: "summary.completed",
      data: {
        id: `s-${n}`,
        thread,
        summarizer: "thread_summary",
        mode: "handoff",
        covers: { thread, from_seq: 1, to_seq: 2 },
        text,
        tokens: Math.ceil(text.length / 4),
        artifact: { hash: "0".repeat(64), size: text.length, media_type: "text/markdown" },
      },
    });
    if (events.length === 2000) await flush();
  }
  await flush();
}

function queries(): string[] {
  const next = seededRandom(99);
  const list: string[] = [];
  for (let q = 0; q < QUERIES; q++) {
    const length = 3 + Math.floor(next() * 5);
    const words: string[] = ["what", "did", "we"];
    for (let w = 0; w < length; w++) words.push(WORDS[Math.floor(next() * WORDS.length)]!);
    list.push(`${words.join(" ")}?`);
  }
  return list;
}

/** The memory section: indexing cost, and search p50/p99 beside raw FTS5. */
export async function measureMemorySearch(
  _runs: number,
  progress: (line: string) => void,
): Promise<EngineSection> {
  const dir = mkdtempSync(join(tmpdir(), "spool-bench-memory-"));
  const store = await openEventStore({ db: join(dir, "store"), env: {}, durability: "fast" });
  const file = join(dir, "memory.db");
  try {
    const writing = performance.now();
    await fill(store);
    progress(
      `memory: ${SUMMARIES.toLocaleString("en-US")} summaries logged in ${((performance.now() - writing) / 1000).toFixed(1)} s`,
    );
    const index = createMemoryIndex({ store, backend: openSqliteMemory(file) });
    const indexing = performance.now();
    await index.catchUp();
    const indexMs = performance.now() - indexing;
    progress(`memory: indexed in ${(indexMs / 1000).toFixed(1)} s`);
    const texts = queries();
    const spool: number[] = [];
    for (const [n, text] of texts.entries()) {
      const start = performance.now();
      await index.search({
        text,
        limit: 5,
        exclude: [`c-${n % CONTINUITIES}`],
        ...(n % 2 === 0 ? { actor: `actor-${n % ACTORS}` } : {}),
      });
      spool.push(performance.now() - start);
    }
    await index.close();
    const raw = new Database(file, { readonly: true });
    const statement = raw.prepare(
      "SELECT rowid, bm25(memory_text) AS score FROM memory_text WHERE memory_text MATCH ? ORDER BY score LIMIT 5",
    );
    const stop = new Set(["what", "did", "we"]);
    const baseline: number[] = [];
    for (const text of texts) {
      const match = [...new Set(text.toLowerCase().match(/[a-z0-9]+/g) ?? [])]
        .filter((word) => !stop.has(word))
        .map((word) => `"${word}"`)
        .join(" OR ");
      const start = performance.now();
      statement.all(match);
      baseline.push(performance.now() - start);
    }
    raw.close();
    return {
      title: `Memory search at ${SUMMARIES.toLocaleString("en-US")} summaries (SQLite FTS5)`,
      baseline: "raw FTS5",
      rows: [
        {
          measure: "search p50",
          unit: "ms",
          spool: percentile(spool, 50),
          ceiling: percentile(baseline, 50),
        },
        {
          measure: "search p99",
          unit: "ms",
          spool: percentile(spool, 99),
          ceiling: percentile(baseline, 99),
          target: { maxValue: 20 },
        },
        { measure: "indexing per summary", unit: "µs", spool: (indexMs * 1000) / SUMMARIES },
      ],
      notes: [
        `${QUERIES} queries of 3–7 words (plus "what did we"), each excluding one continuity, half scoped to an actor; limit 5.`,
        "Spool's search includes its catch-up check (log head against the stored position) and the actor and continuity filters; the baseline is the bare MATCH … ORDER BY bm25 LIMIT 5 on the same file.",
        "Indexing: catching up from the log (reading the summary events, deriving entries, writing rows and FTS5 postings) divided by the summaries.",
      ],
    };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
