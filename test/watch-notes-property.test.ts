/**
 * No note is ever lost: over any interleaving of notes arriving, compactions starting and
 * finishing (notes arriving while one runs), and the window's size changing at runtime, every
 * note is in the rolling window, waiting for compaction, or inside the seq range of a compaction
 * whose summarizer was given it. The fold is by absolute seq, so the same events fold to the same
 * state however often they are folded (a restart).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type CompactionPlan,
  DEFAULT_WATCH_SETTINGS,
  emptyWatchState,
  foldWatchEvent,
  foldWatchEvents,
  planCompaction,
  type WatchState,
} from "../src/frames/index.js";
import type { SpoolEvent } from "../src/spec/index.js";

type Op =
  | { kind: "note" }
  | { kind: "start" }
  | { kind: "finish" }
  | { kind: "window"; size: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: "note" as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: "start" as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: "finish" as const }) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 24 }).map((size) => ({ kind: "window" as const, size })),
  },
);

const HASH = "a".repeat(64);

function event(seq: number, type: string, data: unknown): SpoolEvent {
  return {
    seq,
    id: `e${seq}`,
    continuity: "c",
    stream: { kind: "continuity", id: "c" },
    type,
    ts: new Date(seq).toISOString(),
    actor: null,
    origin: null,
    criticality: "critical",
    data,
    hash: "",
  };
}

describe("rolling notes across compactions", () => {
  it("never lose a note, whatever arrives while a compaction runs", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), fc.integer({ min: 1, max: 6 }), (ops, min) => {
        let state: WatchState = emptyWatchState({ ...DEFAULT_WATCH_SETTINGS, maxNoteEntries: 4 });
        const events: SpoolEvent[] = [];
        const given = new Map<number, CompactionPlan>();
        let running: CompactionPlan | undefined;
        let seq = 0;
        const push = (type: string, data: unknown) => {
          const next = event(++seq, type, data);
          events.push(next);
          state = foldWatchEvent(state, next);
          return next;
        };
        for (const step of ops) {
          if (step.kind === "note") {
            push("note.added", {
              text: `n${seq + 1}`,
              frame: { hash: HASH, width: 1, height: 1, at: seq, source: "s" },
              score: 0.5,
              by: "note-taker",
            });
          } else if (step.kind === "start" && running === undefined) {
            running = planCompaction(state, min);
          } else if (step.kind === "finish" && running !== undefined) {
            const done = push("notes.compacted", {
              summary: running.notes.map((note) => note.text).join(","),
              from_seq: running.fromSeq,
              to_seq: running.toSeq,
              notes: running.notes.length,
            });
            given.set(done.seq, running);
            running = undefined;
          } else if (step.kind === "window") {
            push("watch.settings-changed", {
              settings: { ...state.settings, maxNoteEntries: step.size },
              changed: ["maxNoteEntries"],
              by: "runtime",
            });
          }
        }
        const notes = events.filter((e) => e.type === "note.added");
        const held = new Set([...state.notes, ...state.pending].map((note) => note.seq));
        const summarized = new Set(
          [...given.values()].flatMap((plan) => plan.notes.map((note) => note.seq)),
        );
        for (const note of notes) {
          expect(held.has(note.seq) || summarized.has(note.seq)).toBe(true);
          // Never both waiting and already folded in.
          expect(state.pending.some((p) => p.seq === note.seq) && note.seq <= state.summaryTo).toBe(
            false,
          );
        }
        // A plan gives its summarizer exactly the evicted notes of its range.
        for (const plan of given.values()) {
          const seqs = plan.notes.map((note) => note.seq);
          expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
          expect(seqs[0]).toBe(plan.fromSeq);
          expect(seqs.at(-1)).toBe(plan.toSeq);
        }
        expect(state.notes.length).toBeLessThanOrEqual(state.settings.maxNoteEntries);
        // Folding the log again (a restart) gives the same state.
        expect(
          foldWatchEvents(
            events,
            emptyWatchState({ ...DEFAULT_WATCH_SETTINGS, maxNoteEntries: 4 }),
          ),
        ).toEqual(state);
      }),
      { numRuns: 300 },
    );
  });
});
