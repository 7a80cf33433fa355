import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { StreamPart } from "../src/providers/stream-part.js";
import type { NewEvent } from "../src/spec/index.js";
import {
  createLogSink,
  createSinkFanout,
  createTranscriptSink,
  rebuildTranscript,
} from "../src/transcript/index.js";
import {
  dispatched,
  lines,
  onStep,
  startThread,
  stepStarted,
  tempStore,
} from "./support/transcripts.js";

/** What the test does between two parts. */
type Interleave =
  | { kind: "none" }
  | { kind: "flush" }
  | { kind: "event"; which: number; await: boolean };

const interleave: fc.Arbitrary<Interleave> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Interleave>({ kind: "none" }) },
  { weight: 1, arbitrary: fc.constant<Interleave>({ kind: "flush" }) },
  {
    weight: 2,
    arbitrary: fc
      .record({ which: fc.nat(5), await: fc.boolean() })
      .map((value): Interleave => ({ kind: "event", ...value })),
  },
);

const piece = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.string({ unit: "grapheme", maxLength: 4 }),
  fc.constantFrom("\n", "👋🏽", '"', "\\", "é", "\u2028"),
);

/** A lifecycle event of the thread (or of something else), by number. */
function lifecycle(step: string, n: number, which: number): NewEvent {
  switch (which) {
    case 0:
      return onStep("home", step, "action.dispatched", dispatched(`a${n}`));
    case 1:
      return onStep("home", step, "action.progress", { action_id: `a${n}`, attempt: 1, data: n });
    case 2:
      return onStep("home", "t2:0", "token.delta", { block: "text:0", text: `other ${n}` });
    case 3:
      return {
        continuity: "home",
        type: "thread.suspended",
        stream: { kind: "thread", id: "t1" },
        data: { reason: `r${n}` },
      };
    case 4:
      return {
        continuity: "home",
        type: "turn.added",
        actor: "ada",
        origin: "test",
        data: { text: `turn ${n}` },
      };
    default:
      return onStep(
        "home",
        `${step}:a${n}`,
        "action.started",
        { action_id: `a${n}`, attempt: 1 },
        "task",
      );
  }
}

describe("live transcript equals the rebuild (property)", () => {
  it("for any split of the deltas and any interleaving of other events", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom(0, 1, 2), piece, interleave), {
          minLength: 1,
          maxLength: 40,
        }),
        async (script) => {
          const env = await tempStore("spool-transcript-prop-");
          try {
            const { store } = env;
            const step = await startThread(store, "home", "t1");
            await store.append(stepStarted("home", "t2", 0));
            const path = join(env.dir, "t1", "transcript.jsonl");
            const log = createLogSink({
              store,
              continuity: "home",
              step,
              provider: "p",
              format: "scripted",
            });
            const fanout = createSinkFanout({
              sinks: [log, createTranscriptSink({ store, continuity: "home", thread: "t1", path })],
              onReport: (report) => {
                throw new Error(`unexpected report ${JSON.stringify(report)}`);
              },
            });
            fanout.push({ type: "start", responseId: null, model: "m" });
            const pending: Promise<unknown>[] = [];
            const expected: string[] = [];
            for (const [n, [block, text, between]] of script.entries()) {
              const part: StreamPart =
                block === 0
                  ? { type: "text", block, text }
                  : block === 1
                    ? { type: "reasoning", block, text }
                    : { type: "refusal", block, text };
              fanout.push(part);
              if (text !== "")
                expected.push(`${["text", "reasoning", "refusal"][block]}:${block}|${text}`);
              if (between.kind === "flush") await store.flush();
              if (between.kind === "event") {
                log.flush();
                const appended = store.append(lifecycle(step, n, between.which));
                if (between.await) await appended;
                else pending.push(appended);
              }
            }
            fanout.push({ type: "stop", reason: "end", providerReason: null });
            await Promise.all(pending);
            expect(await fanout.close()).toEqual([]);
            const live = readFileSync(path);
            expect(live.toString()).toBe((await rebuildTranscript(store, "home", "t1")).toString());
            const deltas = lines(live)
              .filter((line) => line.type === "token_delta")
              .map((line) => `${line.block}|${line.text}`);
            expect(deltas).toEqual(expected);
          } finally {
            await env.cleanup();
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});
