/**
 * A separate process appending to a shared store, for the multi-process contract tests.
 * Args: <db> <continuity> <worker> <count>. Appends `count` turns, alternating single awaited
 * appends and small batches, then prints `done <lastSeq>`.
 */
import { openEventStore } from "../../src/log/open-store.js";

const [db, continuity, worker, count] = process.argv.slice(2);
const store = await openEventStore({ db: db!, durability: "fast" });
let last = 0;
for (let i = 0; i < Number(count); ) {
  if (i % 3 === 0) {
    const batch = [0, 1, 2].map((k) => ({
      continuity: continuity!,
      type: "turn.added",
      actor: `w${worker}`,
      origin: "worker",
      data: { text: `${worker}:${i + k}` },
    }));
    const stored = await store.appendBatch(batch.slice(0, Math.min(3, Number(count) - i)));
    last = stored.at(-1)!.seq;
    i += stored.length;
  } else {
    const stored = await store.append({
      continuity: continuity!,
      type: "turn.added",
      actor: `w${worker}`,
      origin: "worker",
      data: { text: `${worker}:${i}` },
    });
    last = stored.seq;
    i += 1;
  }
}
await store.close();
process.stdout.write(`done ${last}\n`);
