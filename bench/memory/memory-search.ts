/**
 * The memory index at scale: 100,000 summaries (synthetic, written like a summarizer's: completed
 * work, decisions, next steps; their content words drawn from a Zipf distribution over 6,000
 * words, the named systems, people and places among made-up ones, as words are in real text) across
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
/** Queries run raw for the baseline: the first of the same list (each ranks every match, slowly). */
const BASELINE_QUERIES = Number(process.env.BENCH_MEMORY_BASELINE_QUERIES ?? 200);

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
/** Distinct content words of the corpus: the named ones above, then made-up ones. */
const VOCABULARY = 6000;
/** The Zipf exponent of word frequencies (about 1 in natural text). */
const ZIPF = 1.0;

const SYLLABLES =
  "ka lo mi ren tor vas pel dun sha gri fen mor tal bix cro neb sul vak ith orn zam pre lum dra".split(
    " ",
  );

/**
 * The content vocabulary, most frequent first: the named systems, actions, things, people and
 * places, then made-up words of two to four syllables (distinct, deterministic) up to VOCABULARY.
 */
function vocabulary(): string[] {
  const words = [...SYSTEMS, ...ACTIONS, ...THINGS, ...PEOPLE, ...PLACES];
  const seen = new Set(words.map((word) => word.toLowerCase()));
  const next = seededRandom(3);
  while (words.length < VOCABULARY) {
    const length = 2 + Math.floor(next() * 3);
    let word = "";
    for (let s = 0; s < length; s++) word += SYLLABLES[Math.floor(next() * SYLLABLES.length)]!;
    if (!seen.has(word)) {
      seen.add(word);
      words.push(word);
    }
  }
  // Interleave so that every category has words near the head of the distribution.
  const next2 = seededRandom(5);
  for (let i = words.length - 1; i > 0; i--) {
    const j = Math.floor(next2() * (i + 1));
    [words[i], words[j]] = [words[j]!, words[i]!];
  }
  return words;
}

const WORDS = vocabulary();

/** Cumulative Zipf weights over WORDS: word r (from 0) has weight 1 / (r + 1)^ZIPF. */
const CUMULATIVE = (() => {
  const sums: number[] = [];
  let total = 0;
  for (let r = 0; r < WORDS.length; r++) {
    total += 1 / (r + 1) ** ZIPF;
    sums.push(total);
  }
  return sums.map((sum) => sum / total);
})();

/** A word drawn from the Zipf distribution over WORDS. */
function zipfWord(next: () => number): string {
  const x = next();
  let low = 0;
  let high = CUMULATIVE.length - 1;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (CUMULATIVE[mid]! < x) low = mid + 1;
    else high = mid;
  }
  return WORDS[low]!;
}

function summary(next: () => number, n: number): string {
  const w = () => zipfWord(next);
  const number = () => Math.floor(next() * 900) + 10;
  return [
    `## Completed Work\n${w()} and I ${w()} the ${w()} ${w()} for the ${w()} ${w()}; the ${w()} now takes ${number()} ms and the ${w()} ${w()} was ${w()} after ${w()} found the ${w()} ${w()} in ${w()}.`,
    `## Key Decisions\nKeep the ${w()} ${w()} behind the ${w()} ${w()} instead of the ${w()}; ${w()} owns the ${w()} ${w()} until release ${Math.floor(n / 1000)}.${n % 100}, and the ${w()} stays on ${w()}.`,
    `## Next\nAsk ${w()} about the ${w()} ${w()} and ${w()} the ${w()} ${w()} before ${w()}; check the ${w()} ${w()} with ${w()}.`,
  ].join("\n\n");
}

/** Logs the corpus: the actors of CONTINUITIES continuities, then SUMMARIES summaries. */
export async function fill(store: EventStore): Promise<void> {
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

/** The QUERIES queries of the benchmark, drawn from the corpus's distribution. */
export function queries(): string[] {
  const next = seededRandom(99);
  const list: string[] = [];
  for (let q = 0; q < QUERIES; q++) {
    const length = 3 + Math.floor(next() * 5);
    const words: string[] = ["what", "did", "we"];
    for (let w = 0; w < length; w++) words.push(zipfWord(next));
    list.push(`${words.join(" ")}?`);
  }
  return list;
}

/** Milliseconds of CPU time (user and system) the process spent since `since`. */
function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
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
    const spoolCpu: number[] = [];
    for (const [n, text] of texts.entries()) {
      const cpu = process.cpuUsage();
      const start = performance.now();
      await index.search({
        text,
        limit: 5,
        exclude: [`c-${n % CONTINUITIES}`],
        ...(n % 2 === 0 ? { actor: `actor-${n % ACTORS}` } : {}),
      });
      spool.push(performance.now() - start);
      spoolCpu.push(cpuMs(cpu));
    }
    await index.close();
    const raw = new Database(file, { readonly: true });
    const statement = raw.prepare(
      "SELECT rowid, bm25(memory_text) AS score FROM memory_text WHERE memory_text MATCH ? ORDER BY score LIMIT 5",
    );
    const stop = new Set(["what", "did", "we"]);
    const baseline: number[] = [];
    const baselineCpu: number[] = [];
    for (const text of texts.slice(0, BASELINE_QUERIES)) {
      const match = [...new Set(text.toLowerCase().match(/[a-z0-9]+/g) ?? [])]
        .filter((word) => !stop.has(word))
        .map((word) => `"${word}"`)
        .join(" OR ");
      const cpu = process.cpuUsage();
      const start = performance.now();
      statement.all(match);
      baseline.push(performance.now() - start);
      baselineCpu.push(cpuMs(cpu));
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
        {
          measure: "search p50, CPU time",
          unit: "ms",
          spool: percentile(spoolCpu, 50),
          ceiling: percentile(baselineCpu, 50),
        },
        {
          measure: "search p99, CPU time",
          unit: "ms",
          spool: percentile(spoolCpu, 99),
          ceiling: percentile(baselineCpu, 99),
        },
        { measure: "indexing per summary", unit: "µs", spool: (indexMs * 1000) / SUMMARIES },
      ],
      notes: [
        `${QUERIES} queries of 3–7 words (plus "what did we"), each excluding one continuity, half scoped to an actor; limit 5.`,
        `Spool's search includes its catch-up check (log head against the stored position), the document-frequency check of its terms, AND before OR, and the actor and continuity filters; the baseline is the bare MATCH of every word ORed … ORDER BY bm25 LIMIT 5 on the same file (Spool's query before this change), over the first ${BASELINE_QUERIES} queries.`,
        "CPU time: the process's user and system time during each search (process.cpuUsage), which a loaded machine inflates far less than the wall time above.",
        "Indexing: catching up from the log (reading the summary events, deriving entries, writing rows and FTS5 postings) divided by the summaries.",
      ],
    };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
