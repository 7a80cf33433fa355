/**
 * A summary a crash cut off (`summary.started` logged, its end never) is ended by the recovery
 * of the runtime that takes the continuity up: `summary.failed` with reason `interrupted`, once,
 * listed in `recovery.started`. Every started summary then has exactly one end, the handoff
 * machinery makes the summary it needs afresh, and the log replays identically.
 */
import { describe, expect, it } from "vitest";
import { createScriptedProvider } from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import type { AgentRuntime } from "../src/runtime/index.js";
import type { EventData, SpoolEvent } from "../src/spec/index.js";
import {
  filler,
  longRunRuntime,
  routedProvider,
  SMALL_MODEL,
  scriptedSummarizer,
} from "./support/continuity-run.js";
import { dyingAt } from "./support/dying-store.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const continuity = "home";
const temp = useTempStore("spool-summary-recovery-");

const provider = () =>
  routedProvider(
    createScriptedProvider({
      model: SMALL_MODEL,
      loop: true,
      script: ["<response>Noted.</response>"],
    }),
    scriptedSummarizer(),
  );

/** Submits turns `from`… of about a tenth of the window each, until `until` (or 40 turns). */
async function talk(runtime: AgentRuntime, from: number, count: number, until?: Promise<void>) {
  const died = (until ?? new Promise<void>(() => {})).then(() => "died" as const);
  let turn = from;
  while (turn < from + count) {
    const submitted = runtime.submit(continuity, {
      text: filler(turn, 300),
      actor: "ada",
      origin: "test",
    });
    const outcome = await Promise.race([submitted, died]);
    turn += 1;
    if (outcome === "died") break;
    expect(outcome.status).toBe("completed");
  }
  return turn;
}

/** The worker streams of summaries, each with its start and its ends. */
function summaries(events: SpoolEvent[]) {
  const jobs = new Map<string, { started: number; ends: SpoolEvent[] }>();
  for (const event of events) {
    if (event.stream.kind !== "worker" || !event.type.startsWith("summary.")) continue;
    const job = jobs.get(event.stream.id) ?? { started: 0, ends: [] };
    if (event.type === "summary.started") job.started += 1;
    else job.ends.push(event);
    jobs.set(event.stream.id, job);
  }
  return jobs;
}

const KILLS = [
  { at: "summary.completed", when: () => true },
  // The summarizer's own thread starting: the job started, its summarizer never ran.
  {
    at: "thread.started",
    when: (data: unknown) => (data as { parent?: unknown }).parent !== undefined,
  },
] as const;

describe("a summary a crash cut off", () => {
  for (const kill of KILLS) {
    it(`is ended once by recovery after dying at ${kill.at}, and replays identically`, async () => {
      const dying = dyingAt(temp.store, kill.at, kill.when);
      const first = longRunRuntime(dying.store, provider());
      const reached = await talk(first, 1, 40, dying.died);
      expect(reached).toBeLessThan(41);
      await temp.store.flush();
      const crashed = await readAll(temp.store, continuity);
      const dangling = [...summaries(crashed)].filter(([, job]) => job.ends.length === 0);
      expect(dangling).toHaveLength(1);
      const [job] = dangling[0]!;

      // The restart takes the continuity up and talks on past another handoff.
      const second = longRunRuntime(temp.store, provider());
      await second.resume(continuity);
      await talk(second, reached, 12);
      await second.close();
      // A second restart finds nothing left to end.
      const third = longRunRuntime(temp.store, provider());
      await third.resume(continuity);
      await third.close();

      const events = await readAll(temp.store, continuity);
      const recovery = events.find((event) => event.type === "recovery.started")!;
      expect(recovery.data).toMatchObject({ open_summaries: [job] });
      const ended = events.filter(
        (event) =>
          event.stream.kind === "worker" &&
          event.stream.id === job &&
          event.type !== "summary.started",
      );
      expect(ended.map((event) => [event.type, event.data])).toEqual([
        [
          "summary.failed",
          expect.objectContaining({
            reason: "interrupted",
            error: expect.objectContaining({ code: "summary.interrupted" }),
          }),
        ],
      ]);
      expect(ended[0]!.seq).toBeGreaterThan(recovery.seq);
      for (const [id, each] of summaries(events)) {
        expect({ id, started: each.started, ends: each.ends.length }).toEqual({
          id,
          started: 1,
          ends: 1,
        });
      }
      // The handoff machinery went on: a summary was made after the recovery, and a handoff.
      const after = events.filter((event) => event.seq > recovery.seq);
      expect(after.some((event) => event.type === "summary.completed")).toBe(true);
      expect(after.some((event) => event.type === "thread.continued")).toBe(true);
      const interruptedData = ended[0]!.data as EventData<"summary.failed">;
      expect(interruptedData.thread).toBe(job.slice(0, job.lastIndexOf("@")));

      const report = await replayContinuity({
        source: temp.store,
        continuity,
        stallMs: 5000,
        makeRuntime: ({ store: target, provider: recorded, intercept }) =>
          longRunRuntime(target, recorded, { intercept }),
      });
      expect(report.difference).toBeUndefined();
      expect(report).toMatchObject({ identical: true, recoveries: 2, reached: [] });
    }, 60_000);
  }
});
