/**
 * A thread goes on from a step whose end is still queued: it reads the step's events ahead, with
 * the seqs they are to get, and its next step's start is written only if they got them (one
 * commit for the step's end and the next start). When another connection writes in between, the
 * start is refused (`store.seq-moved`), the thread reads the log again and compiles the step
 * again: the run ends as it would have, each step is started once in the log, every context
 * holds the results before it, and the run replays identically.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../src/actions/index.js";
import { type EventStore, openEventStore } from "../src/log/index.js";
import { createScriptedProvider, type ProviderRequest } from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import { type AgentSpec, createAgentRuntime } from "../src/runtime/index.js";
import type { SpoolEvent } from "../src/spec/index.js";
import { withAppends } from "./support/store-taps.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const continuity = "home";
const temp = useTempStore("spool-step-ahead-");
const STEPS = 4;

/** The keys the tool ran for, in order: a refused start must never run an action again. */
const ran: string[] = [];

const lookup = defineTool({
  name: "lookup",
  description: "Looks a key up.",
  parameters: z.object({ key: z.string() }),
  execute: ({ key }) => {
    ran.push(key);
    return `value of ${key}`;
  },
});

const agent: AgentSpec = {
  directive: "tester",
  instructions: "Look things up.",
  model: "claude-sonnet-4-5",
  limits: {},
  permits: () => true,
  tools: [lookup],
  nativeTools: false,
};

const script = [
  ...Array.from(
    { length: STEPS },
    (_, i) =>
      `<action type="tool" mode="sync" id="a${i}">{"name":"lookup","parameters":{"key":"k${i}"}}</action>`,
  ),
  "<response>done</response>",
];

/**
 * `inner` whose reads ahead are followed, for the steps named in `interfere`, by a commit of
 * another connection (an intent: at the next microtask, before the step's start is written);
 * counts the starts refused.
 */
function interfering(inner: EventStore, other: EventStore, interfere: ReadonlySet<number>) {
  let reads = 0;
  const refused: string[] = [];
  const store: EventStore = {
    ...withAppends(inner, {
      append: (event) => inner.append(event),
      appendBatch: (events, options) => {
        const written = inner.appendBatch(events, options);
        if (options?.predicted) {
          written.catch((error: { code?: string }) => {
            if (error.code === "store.seq-moved") refused.push(events.at(-1)!.type);
          });
        }
        return written;
      },
    }),
    readAhead: (id, after) => {
      const ahead = inner.readAhead?.(id, after);
      if (ahead && interfere.has(reads++)) {
        void other.append({
          continuity: "elsewhere",
          stream: { kind: "step", id: `th-9:${reads}` },
          type: "step.started",
          data: { kind: "model", thread: "th-9", index: reads, provider: "other", model: "other" },
        });
      }
      return ahead;
    },
  };
  return { store, refused };
}

async function run(store: EventStore) {
  const provider = createScriptedProvider({ model: "claude-sonnet-4-5", script });
  const announced: string[] = [];
  const runtime = createAgentRuntime({
    store,
    provider,
    agent,
    observer: (notice) => {
      if (notice.type === "step-started") announced.push(notice.step);
    },
  });
  try {
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "cli" });
    return { result, requests: provider.requests as ProviderRequest[], announced };
  } finally {
    await runtime.close();
  }
}

/** The text of every message of `request`, one string. */
const textOf = (request: ProviderRequest) => JSON.stringify(request.messages);

describe("a step started from its last step's end read ahead", () => {
  for (const interfere of [new Set<number>(), new Set([0, 2]), new Set([0, 1, 2, 3])]) {
    it(`runs and replays the same whether another connection writes after reads ${[...interfere].join(", ") || "none"}`, async () => {
      const other = await openEventStore({ db: join(temp.dir, "store"), durability: "fast" });
      try {
        const { store, refused } = interfering(temp.store, other, interfere);
        ran.length = 0;
        const { result, requests, announced } = await run(store);
        // Side effects at most once: each action ran once, whatever was compiled again.
        expect(ran).toEqual(Array.from({ length: STEPS }, (_, i) => `k${i}`));
        expect(result.status).toBe("completed");
        // Each refused start was compiled again: the property checks below would catch one
        // that used the seqs it predicted.
        expect(refused.length).toBe(interfere.size);
        expect(refused.every((type) => type === "step.started")).toBe(true);

        const events: SpoolEvent[] = await readAll(temp.store, continuity);
        const started = events.filter((event) => event.type === "step.started");
        expect(started.map((event) => event.stream.id)).toEqual(
          Array.from({ length: STEPS + 1 }, (_, i) => `${result.thread}:${i}`),
        );
        // A step compiled again is still one step to whoever watches the run.
        expect(announced).toEqual(started.map((event) => event.stream.id));
        expect(events.filter((event) => event.type === "context.compiled")).toHaveLength(STEPS + 1);
        // Every model call saw the results of every step before it.
        expect(requests).toHaveLength(STEPS + 1);
        requests.forEach((request, index) => {
          for (let i = 0; i < index; i++) expect(textOf(request)).toContain(`value of k${i}`);
        });
        // The seqs a context names are those of the thread's messages: a user turn's run, a
        // model message, the results a step's decision hands on.
        const bySeq = new Map(events.map((event) => [event.seq, event]));
        const named = events
          .filter((event) => event.type === "context.compiled")
          .flatMap((event) =>
            (event.data as { ranges: { from_seq: number; to_seq: number }[] }).ranges.flatMap(
              (range) => [range.from_seq, range.to_seq],
            ),
          );
        expect(named.length).toBeGreaterThan(STEPS);
        for (const seq of named) {
          expect(["run.started", "message.completed", "loop.decided"]).toContain(
            bySeq.get(seq)?.type,
          );
        }

        const report = await replayContinuity({
          source: temp.store,
          continuity,
          makeRuntime: ({ store: target, provider, intercept }) =>
            createAgentRuntime({ store: target, provider, agent, intercept }),
        });
        expect(report.difference).toBeUndefined();
        expect(report.identical).toBe(true);
      } finally {
        await other.close();
      }
    }, 60_000);
  }
});
