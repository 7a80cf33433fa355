import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { type EventStore, openEventStore, verifyChain } from "../src/log/index.js";
import { prepareEvent, type SpoolEvent } from "../src/spec/index.js";
import {
  type BundledScript,
  bundleScript,
  runToExit,
  spawnBundled,
} from "./support/child-process.js";
import { collect, killCount, seededRandom } from "./support/events.js";
import { createTestDatabase } from "./support/postgres-server.js";

/** Kills per adapter (`SPOOL_LOG_KILLS`, default 50); `SPOOL_CRASH_SEED` repeats their points. */
const KILLS = killCount(process.env.SPOOL_LOG_KILLS, 50);

interface Ack {
  seq: number;
  id: string;
  hash: string;
}

let bundled: Promise<BundledScript> | undefined;
/** The crash writer compiled once: 100 starts through tsx would take minutes on 2 cores. */
const writer = () => {
  bundled ??= bundleScript("test/support/crash-writer.ts");
  return bundled;
};
afterAll(async () => (await bundled)?.remove());

/** Spawns the writer, kills it with SIGKILL once it has acknowledged `after` events. */
async function writeUntilKilled(db: string, run: number, after: number): Promise<Ack[]> {
  const acks: Ack[] = [];
  const child = spawnBundled(await writer(), [db, String(run)]);
  const exit = await runToExit(child, (line) => {
    if (line === "ready" && after === 0) child.kill("SIGKILL");
    const [word, seq, id, hash] = line.split(" ");
    if (word !== "ack") return;
    acks.push({ seq: Number(seq), id: id!, hash: hash! });
    if (acks.length >= after) child.kill("SIGKILL");
  });
  expect(exit.signal, exit.stderr).toBe("SIGKILL");
  return acks;
}

/** Everything the log promises after a crash. */
async function checkRecovered(store: EventStore, acked: Map<string, Ack>): Promise<number> {
  const events = await collect(store.read());
  expect(events.map((event) => event.seq)).toEqual(
    Array.from({ length: events.length }, (_, i) => i + 1),
  );
  const byId = new Map(events.map((event) => [event.id, event]));
  for (const ack of acked.values()) {
    const event = byId.get(ack.id);
    expect(event, `acknowledged event ${ack.id} (seq ${ack.seq}) is missing`).toBeDefined();
    expect({ seq: event!.seq, hash: event!.hash }).toEqual({ seq: ack.seq, hash: ack.hash });
  }
  for (const event of events) expect(() => revalidate(event)).not.toThrow();
  for (const event of events.filter((e) => e.type === "artifact.stored")) {
    const { hash, size } = event.data as { hash: string; size: number };
    expect((await store.artifacts.get(hash)).length).toBe(size);
  }
  expect(await verifyChain(store)).toMatchObject({ ok: true, events: events.length });
  return events.length;
}

/** A stored event must still pass its catalog schema: nothing partial or garbled. */
function revalidate(event: SpoolEvent): void {
  const { seq: _seq, hash: _hash, criticality: _criticality, ...input } = event;
  prepareEvent(input, { now: () => event.ts, newId: () => event.id });
}

function crashSuite(
  name: string,
  location: () => Promise<{ db: string; cleanup: () => Promise<void> }>,
  seed: number,
) {
  describe(`${name}: SIGKILL while appending at full speed`, () => {
    it(`loses nothing acknowledged over ${KILLS} kills (seed ${seed})`, {
      timeout: Math.max(600_000, KILLS * 12_000),
    }, async () => {
      const { db, cleanup } = await location();
      const random = seededRandom(seed);
      const acked = new Map<string, Ack>();
      let total = 0;
      try {
        for (let run = 0; run < KILLS; run++) {
          const after = run % 10 === 0 ? 0 : 1 + Math.floor(random() * 300);
          for (const ack of await writeUntilKilled(db, run, after)) acked.set(ack.id, ack);
          if (process.env.SPOOL_CRASH_TRACE)
            console.log(
              `run ${run}: ${acked.size} acked, ${total} events, ${performance.now().toFixed(0)} ms`,
            );
          const store = await openEventStore({ db });
          try {
            total = await checkRecovered(store, acked);
          } finally {
            await store.close();
          }
        }
        expect(acked.size).toBeGreaterThan(KILLS * 50);
        expect(total).toBeGreaterThanOrEqual(acked.size);
      } finally {
        await cleanup();
      }
    });
  });
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

crashSuite(
  "SQLite",
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "spool-crash-"));
    dirs.push(dir);
    return { db: dir, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  },
  Number(process.env.SPOOL_CRASH_SEED ?? Date.now() % 100_000),
);

crashSuite(
  "PostgreSQL",
  async () => ({ db: await createTestDatabase(inject("postgresUrl")), cleanup: async () => {} }),
  Number(process.env.SPOOL_CRASH_SEED ?? (Date.now() + 1) % 100_000),
);
