/**
 * Appends to a store at full speed until killed, printing `ack <seq> <id> <hash>` for every event
 * whose append has resolved. Four writers run at once: single critical appends, atomic batches
 * (every fourth of 300 events, which goes to the SQLite writer thread), droppable deltas followed
 * by a critical event, and artifacts referenced by events.
 * Args: <db> <run>.
 */
import { openEventStore } from "../../src/log/open-store.js";
import type { SpoolEvent } from "../../src/spec/index.js";

const [db, run] = process.argv.slice(2);
const store = await openEventStore({ db: db! });
const out: string[] = [];
const ack = (events: SpoolEvent[]) => {
  for (const event of events) out.push(`ack ${event.seq} ${event.id} ${event.hash}\n`);
  if (out.length > 0) process.stdout.write(out.splice(0).join(""));
};
process.stdout.write("ready\n");

const continuity = `crash-${run}`;
const turn = (text: string) => ({
  continuity,
  type: "turn.added",
  actor: "crash",
  origin: "test",
  data: { text },
});

async function singles() {
  for (let i = 0; ; i++) ack([await store.append(turn(`single ${i} ${"·".repeat(i % 50)}`))]);
}
async function batches() {
  for (let i = 0; ; i++) {
    const size = i % 4 === 3 ? 300 : 5;
    ack(await store.appendBatch(Array.from({ length: size }, (_, k) => turn(`batch ${i}.${k}`))));
  }
}
async function deltas() {
  for (let i = 0; ; i++) {
    const stream = { kind: "step" as const, id: `step-${i}` };
    const parts = ["one ", "two ", "three"].map((text) =>
      store.append({
        continuity: "main",
        type: "token.delta",
        stream,
        data: { block: "text", text },
      }),
    );
    ack([
      await store.append({
        continuity: "main",
        type: "turn.added",
        actor: "crash",
        origin: "test",
        data: { text: `after deltas ${i}` },
      }),
    ]);
    ack(await Promise.all(parts));
  }
}
async function artifacts() {
  for (let i = 0; ; i++) {
    const info = await store.artifacts.put(
      Buffer.from(`artifact ${run}.${i} `.repeat(1 + (i % 500))),
      { mediaType: "text/plain" },
    );
    ack([
      await store.append({
        continuity,
        type: "artifact.stored",
        data: { hash: info.hash, size: info.size, media_type: info.mediaType },
      }),
    ]);
  }
}
await Promise.all([singles(), batches(), deltas(), artifacts()]);
