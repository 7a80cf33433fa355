/**
 * Ctrl-C at any point replays exactly: a run with a thought, an in-flight async tool, a sync
 * action and a long response is cancelled after a random number of its output notices (before
 * the first token, mid-tag, mid-action, while the tool runs, after the model ended, or never),
 * a second turn follows, and the continuity replays `identical` in the closed world, re-enacting
 * the cancel where its first consequence was logged and reaching nothing outside. The number of
 * runs is `SPOOL_CANCEL_RUNS` (default 20).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../src/actions/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import { createAgentRuntime } from "../src/runtime/index.js";
import { agentSpec } from "./support/runtime-e2e.js";
import { readAll, tempStore } from "./support/transcripts.js";

const continuity = "home";

const FIRST = [
  "<thought>Start the long job, then report.</thought>",
  '<action type="tool" mode="async" id="j1">{"name":"job","parameters":{"n":1},"output_key":"job"}</action>',
  '<action type="tool" mode="sync" id="j2">{"name":"job","parameters":{"n":2}}</action>',
  `<response>${Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ")}</response>`,
].join("");

describe("replay after Ctrl-C at any point", () => {
  it("is identical, with the cancel re-enacted and nothing outside reached", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 70 }), async (cancelAfter) => {
        const { store: log, cleanup: drop } = await tempStore("spool-replay-cancel-run-");
        try {
          // Job 1 ends once the model has closed its response, or when it is cancelled: it is in
          // flight for most of the model call, so a cancel may find it running. Job 2 (sync,
          // holding the output back) ends at once.
          let modelEnded!: () => void;
          const ended = new Promise<void>((resolve) => {
            modelEnded = resolve;
          });
          let calls = 0;
          const job = defineTool({
            name: "job",
            description: "A job that runs until the model has closed its response.",
            parameters: z.object({ n: z.number() }),
            execute: ({ n }, { signal }) => {
              calls += 1;
              if (n === 2) return { n };
              return new Promise((resolve, reject) => {
                void ended.then(() => resolve({ n }));
                signal.addEventListener("abort", () => reject(signal.reason), { once: true });
              });
            },
          });
          const agent = agentSpec("claude-sonnet-4-5", [job]);
          let notices = 0;
          const runtime = createAgentRuntime({
            store: log,
            agent,
            provider: createScriptedProvider({
              model: "claude-sonnet-4-5",
              script: [FIRST, "<response>again</response>"],
              tokens: "word",
              timing: { tokenMs: 1 },
            }),
            observer: (notice) => {
              if (
                notice.type === "output" &&
                notice.event.type === "block-end" &&
                notice.event.kind === "response"
              ) {
                modelEnded();
              }
              if (notice.type === "output" && ++notices === cancelAfter) {
                runtime.cancel(continuity);
              }
            },
          });
          await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
          modelEnded();
          await runtime.submit(continuity, { text: "again", actor: "ada", origin: "test" });
          await runtime.close();
          const before = calls;

          const report = await replayContinuity({
            source: log,
            continuity,
            stallMs: 5000,
            makeRuntime: ({ store: target, world }) =>
              createAgentRuntime({ store: target, provider: world.provider, agent, world }),
          });
          const events = await readAll(log, continuity);
          const cancelled = events.some(
            (event) =>
              event.type === "run.completed" &&
              (event.data as { status: string }).status === "cancelled",
          );
          expect(report.difference, JSON.stringify(report.difference)).toBeUndefined();
          expect(report).toMatchObject({
            identical: true,
            reached: [],
            cancels: cancelled ? 1 : 0,
          });
          expect(calls, "replay ran the tool").toBe(before);
        } finally {
          await drop();
        }
      }),
      {
        numRuns: Number(process.env.SPOOL_CANCEL_RUNS ?? 20),
        // SPOOL_CANCEL_SEED replays a failing run's cancel points (fast-check prints the seed).
        ...(process.env.SPOOL_CANCEL_SEED ? { seed: Number(process.env.SPOOL_CANCEL_SEED) } : {}),
      },
    );
  }, 180_000);
});
