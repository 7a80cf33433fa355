/**
 * A step's end: `message.completed` is appended at the stream's end and not waited for, and the
 * step's `step.completed` (with what `beforeCompleted` decides) is appended after it, so both
 * usually share one commit. On a store that may hold an append's answer (replay's, to re-enact a
 * cancel there), the decision waits for that answer instead.
 */
import { describe, expect, it } from "vitest";
import type { EventStore } from "../src/log/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import type { AnyNewEvent, NewEvent, SpoolEvent } from "../src/spec/index.js";
import { runModelStep } from "../src/transcript/index.js";
import { withAppends } from "./support/store-taps.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const continuity = "home";
const thread = "t1";
const temp = useTempStore("spool-step-end-");

/**
 * `store` whose append holding `message.completed` is answered only on `release()`, as replay's
 * verifying store holds the append a cancel is re-enacted on; `holdsAnswers` as given.
 */
function holdingStore(inner: EventStore, holdsAnswers: boolean) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let held = false;
  const hold = <T>(events: readonly (AnyNewEvent | NewEvent)[], written: Promise<T>) => {
    if (!events.some((event) => event.type === "message.completed")) return written;
    held = true;
    return written.then((stored) => released.then(() => stored));
  };
  const wrapped: EventStore = {
    ...withAppends(inner, {
      append: (event) => hold([event], inner.append(event)),
      appendBatch: (events, options) => hold(events, inner.appendBatch(events, options)),
    }),
    ...(holdsAnswers ? { holdsAnswers: true } : {}),
  };
  return { store: wrapped, release, held: () => held };
}

async function step(target: EventStore, onDecide: () => void) {
  return runModelStep({
    store: target,
    continuity,
    thread,
    index: 0,
    provider: createScriptedProvider({ script: ["<response>done</response>"], tokens: 4 }),
    request: { model: "scripted", messages: [{ role: "user", content: "go" }] },
    beforeCompleted: async () => {
      onDecide();
      return [];
    },
  });
}

describe("a step's end", () => {
  it("decides without waiting for message.completed, and writes the step's end after it", async () => {
    const holding = holdingStore(temp.store, false);
    let decidedWhileHeld = false;
    const done = step(holding.store, () => {
      decidedWhileHeld = holding.held();
    });
    // The decision came while message.completed's answer was still held back.
    await expect.poll(() => decidedWhileHeld).toBe(true);
    holding.release();
    await done;
    const types = (await readAll(temp.store, continuity))
      .filter((event: SpoolEvent) => event.stream.kind === "step")
      .map((event) => event.type);
    expect(types.slice(-2)).toEqual(["message.completed", "step.completed"]);
  });

  it("waits for message.completed's answer before deciding on a store that holds answers", async () => {
    const holding = holdingStore(temp.store, true);
    let decided = false;
    const done = step(holding.store, () => {
      decided = true;
    });
    await expect.poll(() => holding.held()).toBe(true);
    // Let everything that does not wait for the held answer run.
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(decided).toBe(false);
    holding.release();
    await done;
    expect(decided).toBe(true);
  });
});
