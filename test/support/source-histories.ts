/**
 * Histories where sources deliver too: the turns of `handoff-histories.ts`, some of them
 * delivery turns of a source (`turn.added` with actor `source:<id>`, origin `source` and the
 * `sources` field, as the runtime appends them), with chunk numbers consecutive per source and
 * lines from the realistic log generator. The sources' own events (`source.chunk`) are left out:
 * the turns are what reaches a thread, and replay copies turns as inputs. A delivery turn gets the same scripted
 * answers (steps, tool calls, pressure) as a user turn, so handoffs fall at random points among
 * them.
 */
import fc from "fast-check";
import type { EventStore } from "../../src/log/index.js";
import type { AgentRuntime } from "../../src/runtime/index.js";
import { filler } from "./continuity-run.js";
import { historyArbitrary, type TurnCase } from "./handoff-histories.js";
import { generateLogLines } from "./log-lines.js";

/** The sources of the generated histories. */
export type SourceName = "app-log" | "metrics";

/** A delivery: which source, how many chunks, and lines per chunk. */
export interface DeliveryCase {
  source: SourceName;
  chunks: number;
  lines: number;
}

/** A history: its turns, and for each turn the delivery it is (or null: a user's turn). */
export interface SourceHistory {
  turns: TurnCase[];
  deliveries: (DeliveryCase | null)[];
}

const delivery: fc.Arbitrary<DeliveryCase> = fc.record({
  source: fc.constantFrom<SourceName>("app-log", "app-log", "metrics"),
  chunks: fc.integer({ min: 1, max: 4 }),
  lines: fc.integer({ min: 1, max: 6 }),
});

/** Histories of `minTurns`..`maxTurns` turns, about two in three of them deliveries. */
export function sourceHistoryArbitrary(minTurns = 4, maxTurns = 12): fc.Arbitrary<SourceHistory> {
  return historyArbitrary(minTurns, maxTurns).chain((turns) =>
    fc
      .array(fc.option(delivery, { freq: 3 }), {
        minLength: turns.length,
        maxLength: turns.length,
      })
      .map((deliveries) => ({ turns, deliveries })),
  );
}

/** The cursor a source logs after chunk `n` (a file's identity and byte offset). */
export function cursorAfter(source: string, n: number): Record<string, unknown> {
  return { path: `logs/${source}.log`, inode: 4242, offset: n * 1000 };
}

/**
 * Submits the history's turns (a pin first where the case has one): a user's turn through
 * `submit`, a delivery as its delivery turn appended, then `accept`ed. Chunks are
 * numbered from 1 per source, in order, with no gap.
 */
export async function submitSourceHistory(
  runtime: AgentRuntime,
  store: EventStore,
  continuity: string,
  history: SourceHistory,
): Promise<void> {
  const next = new Map<string, number>();
  for (const [index, turn] of history.turns.entries()) {
    if (turn.pin) {
      await store.append({
        continuity,
        type: "context.pinned",
        data: { id: `pin-${index}`, kind: "fact", text: `PIN-${index}`, by: "user" },
      });
    }
    const given = history.deliveries[index];
    if (!given) {
      await runtime.submit(continuity, {
        text: `TURN-${index + 1} ${filler(index + 1, turn.words)}`,
        actor: "ada",
        origin: "test",
      });
      continue;
    }
    const from = next.get(given.source) ?? 1;
    const to = from + given.chunks - 1;
    next.set(given.source, to + 1);
    const digest: string[] = [];
    for (let n = from; n <= to; n++) {
      digest.push(`chunk ${n}:`, ...generateLogLines({ seed: n * 31 + index, count: given.lines }));
    }
    const added = await store.append({
      continuity,
      type: "turn.added",
      actor: `source:${given.source}`,
      origin: "source",
      data: {
        text: `DELIVERY-${index + 1} [${given.source}: chunks ${from}–${to}]\n${digest.join("\n")}`,
        sources: [
          {
            source_id: given.source,
            from_chunk: from,
            to_chunk: to,
            cursor: cursorAfter(given.source, to),
          },
        ],
      },
    });
    await runtime.accept(continuity, added.id);
  }
}
