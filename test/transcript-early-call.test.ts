/**
 * With `durability: "fast"`, a step's model call is made while its start is being written, and
 * nothing of its answer is looked at before the start is written. A call whose start is refused
 * is kept for the step compiled again when that sends the same request, and aborted unseen
 * otherwise; a `strict` store calls the model only once the start is written.
 */
import { getEventListeners } from "node:events";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  type EventStore,
  isSeqMoved,
  openEventStore,
  type SeqPrediction,
} from "../src/log/index.js";
import {
  createScriptedProvider,
  type Provider,
  type ProviderRequest,
  type StreamPart,
} from "../src/providers/index.js";
import {
  EarlyCall,
  type ModelStepOptions,
  runModelStep,
  StartCarry,
  type StreamSink,
} from "../src/transcript/index.js";
import { withAppends } from "./support/store-taps.js";
import { readAll, startThread, useTempStore } from "./support/transcripts.js";

const continuity = "home";
const thread = "t1";
const temp = useTempStore("spool-early-call-");
beforeEach(async () => {
  await startThread(temp.store, continuity, thread, { index: 0 });
});

/** Step 1 of the thread (or `options.index`) on the fast temp store (or `options.store`), asking "hello". */
function step(
  provider: Provider,
  options: Partial<ModelStepOptions> & { store?: EventStore } = {},
) {
  return runModelStep({
    store: temp.store,
    continuity,
    thread,
    index: 1,
    provider,
    request: ask("hello"),
    ...options,
  });
}

const ask = (text: string): ProviderRequest => ({
  model: "scripted",
  messages: [{ role: "user", content: text }],
});

/**
 * A prediction of the temp store's next seq made stale: another connection writes after it is made, so
 * a start appended with it is refused and nothing of it written.
 */
async function stalePrediction(): Promise<SeqPrediction> {
  const head = await temp.store.head();
  const ahead = temp.store.readAhead?.(continuity, head);
  if (!ahead) throw new Error("the store cannot read ahead");
  const other = await openEventStore({ db: join(temp.dir, "store"), durability: "fast" });
  try {
    await other.append({
      continuity: "elsewhere",
      type: "continuity.created",
      actor: "bo",
      origin: "test",
      data: { title: "another" },
    });
  } finally {
    await other.close();
  }
  return ahead.prediction;
}

/** `inner`, telling whether its step's start (a batch ending in `step.started`) is written. */
function watchedStart(inner: EventStore) {
  const seen = { written: false };
  const watched = withAppends(inner, {
    append: (event) => inner.append(event),
    appendBatch: (events, options) => {
      const written = inner.appendBatch(events, options);
      if (events.at(-1)?.type === "step.started") {
        written.then(
          () => {
            seen.written = true;
          },
          () => undefined,
        );
      }
      return written;
    },
  });
  return { store: watched, seen };
}

/** `inner`, noting at each call whether the start was written and whether the call was aborted. */
function watchedProvider(inner: Provider, seen: { written: boolean }) {
  const calls: { startWritten: boolean; signal: AbortSignal | undefined }[] = [];
  const provider: Provider = {
    name: inner.name,
    format: inner.format,
    stream(request, options) {
      calls.push({ startWritten: seen.written, signal: options?.signal });
      return inner.stream(request, options);
    },
  };
  return { provider, calls };
}

/** A sink noting whether the start was written when the first part reached it. */
function firstPartSink(seen: { written: boolean }) {
  const first: { startWritten?: boolean } = {};
  const sink: StreamSink = {
    name: "first-part",
    write(_part: StreamPart) {
      first.startWritten ??= seen.written;
    },
    async close() {},
  };
  return { sink, first };
}

describe("a model call made while its step's start is written", () => {
  it("goes out before the start is written on a fast store, and its parts are read only after", async () => {
    const { store: watched, seen } = watchedStart(temp.store);
    const { provider, calls } = watchedProvider(
      createScriptedProvider({ script: ["<response>hi</response>"] }),
      seen,
    );
    const { sink, first } = firstPartSink(seen);
    const result = await step(provider, { store: watched, sinks: [sink] });
    expect(result.message.error).toBeUndefined();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.startWritten).toBe(false);
    expect(first.startWritten).toBe(true);
    const types = (await readAll(temp.store, continuity)).map((event) => event.type);
    expect(types.indexOf("step.started")).toBeLessThan(types.indexOf("message.completed"));
  });

  it("follows the step's signal while it runs, and lets go of it once the call ends", async () => {
    const steps = new AbortController();
    const before = getEventListeners(steps.signal, "abort").length;
    for (let i = 1; i <= 3; i++) {
      const result = await step(createScriptedProvider({ script: ["<response>hi</response>"] }), {
        index: i,
        signal: steps.signal,
      });
      expect(result.message.error).toBeUndefined();
    }
    // One listener a call would pile up over a long run.
    expect(getEventListeners(steps.signal, "abort")).toHaveLength(before);

    const { provider, calls } = watchedProvider(
      createScriptedProvider({
        script: ["<response>a long answer, word by word</response>"],
        timing: { tokenMs: 5 },
      }),
      { written: false },
    );
    const cancelling: StreamSink = {
      name: "cancel-at-first-part",
      write: () => steps.abort(new Error("cancelled by the user")),
      async close() {},
    };
    const cancelled = await step(provider, {
      index: 4,
      signal: steps.signal,
      sinks: [cancelling],
    });
    expect(calls[0]!.signal?.aborted).toBe(true);
    expect(cancelled.message.error).toBeDefined();
  });

  it("waits for the start on a strict store: every request is on the log before it is sent", async () => {
    const strict = await openEventStore({ db: join(temp.dir, "strict"), durability: "strict" });
    try {
      await startThread(strict, continuity, thread, { index: 0 });
      const { store: watched, seen } = watchedStart(strict);
      const { provider, calls } = watchedProvider(
        createScriptedProvider({ script: ["<response>hi</response>"] }),
        seen,
      );
      await step(provider, { store: watched });
      expect(calls.map((call) => call.startWritten)).toEqual([true]);
    } finally {
      await strict.close();
    }
  });

  it("keeps a refused start's call for the same request, and sends nothing twice", async () => {
    const scripted = createScriptedProvider({ script: ["<response>once</response>"] });
    const carry = new StartCarry();
    const request = ask("hello");
    const refused = await step(scripted, {
      request,
      // Another connection wrote since: the start is refused, nothing of it written.
      start: { predicted: await stalePrediction() },
      carry,
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isSeqMoved(refused)).toBe(true);
    expect(scripted.requests).toHaveLength(1);

    const result = await step(scripted, {
      carry,
    });
    expect(result.message.error).toBeUndefined();
    expect(scripted.requests).toHaveLength(1);
    const events = await readAll(temp.store, continuity);
    // The refused start left nothing: step 1 is started once.
    expect(
      events.filter((event) => event.type === "step.started" && event.stream.id === `${thread}:1`),
    ).toHaveLength(1);
    expect(events.filter((event) => event.type === "message.completed")).toHaveLength(1);
    expect(events.find((event) => event.type === "message.completed")?.data).toMatchObject({
      content: [{ type: "text", text: "<response>once</response>" }],
    });
  });

  it("aborts a kept call unseen when the step compiled again sends another request", async () => {
    const { provider, calls } = watchedProvider(
      createScriptedProvider({
        script: ["<response>first</response>", "<response>second</response>"],
      }),
      { written: false },
    );
    const carry = new StartCarry();
    carry.keep(new EarlyCall(provider, ask("hello")));
    expect(carry.take(ask("hello, again"))).toBeUndefined();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.signal?.aborted).toBe(true);

    carry.keep(new EarlyCall(provider, ask("hello")));
    carry.release();
    expect(calls[1]!.signal?.aborted).toBe(true);
  });

  it("aborts the call when its start fails, and fails as the start did", async () => {
    const { provider, calls } = watchedProvider(
      createScriptedProvider({ script: ["<response>never seen</response>"] }),
      { written: false },
    );
    const failed = await step(provider, {
      // Refused, with nowhere to keep the call.
      start: { predicted: await stalePrediction() },
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isSeqMoved(failed)).toBe(true);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.signal?.aborted).toBe(true);
    const types = (await readAll(temp.store, continuity)).map((event) => event.type);
    expect(types).not.toContain("message.completed");
  });
});
