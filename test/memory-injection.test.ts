import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MEMORY_HEADING } from "../src/continuity/index.js";
import { createMemoryRecaller, openMemoryIndex } from "../src/memory/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import type { ProviderRequest } from "../src/providers/provider.js";
import { replayContinuity } from "../src/replay/index.js";
import type { EventData, SpoolEvent } from "../src/spec/index.js";
import {
  filler,
  longRunRuntime,
  routedProvider,
  SMALL_MODEL,
  scriptedSummarizer,
} from "./support/continuity-run.js";
import {
  continuityStart,
  pinEvent,
  summaryEvent,
  unpinEvent,
  write,
} from "./support/memory-log.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const temp = useTempStore("spool-memory-injection-");
const continuity = "home";

const PAST_SUMMARY =
  "## Completed Work\nRotated the deploy key of the billing service: it lives in the vault at secret/billing/deploy and is rotated with `make rotate-billing`, never by hand.";
const PAST_FACT = "The billing service deploys only from the release branch.";
const OTHER_ACTOR = "The billing service of Bo's shop runs on Fridays.";

function text(request: ProviderRequest): string {
  return request.messages
    .map((message) =>
      message.role !== "tool" && typeof message.content === "string"
        ? message.content
        : JSON.stringify(message),
    )
    .join("\n");
}

describe("memory given to a thread at its start and at its handoff", () => {
  it("logs the choice before the context carries it, and replay re-derives that context after the index changed", async () => {
    const store = temp.store;
    await write(store, [
      ...continuityStart("past", "ada"),
      summaryEvent("past", "th-past", "s-past", PAST_SUMMARY),
      pinEvent("past", "p-branch", PAST_FACT),
      ...continuityStart("bo-shop", "bo"),
      summaryEvent("bo-shop", "th-bo", "s-bo", OTHER_ACTOR),
    ]);
    const index = await openMemoryIndex({ store, db: join(temp.dir, "store"), env: {} });
    try {
      const foreground = createScriptedProvider({
        model: SMALL_MODEL,
        loop: true,
        script: ["<response>Noted.</response>"],
      });
      // The summary of this thread names the billing deploy, so the handoff's search finds it too.
      const summarizer = scriptedSummarizer([
        "<response>## Completed Work\nDiscussed the billing service deploy key rotation.\n\n## Next\nRotate the billing deploy key.</response>",
      ]);
      const runtime = longRunRuntime(store, routedProvider(foreground, summarizer), {
        memory: createMemoryRecaller(index, { tokens: 300, scope: "actor" }),
      });
      const first = await runtime.submit(continuity, {
        text: "We need to rotate the billing service deploy key today.",
        actor: "ada",
        origin: "test",
      });
      expect(first.status).toBe("completed");
      let turn = 1;
      while (
        !(await readAll(store, continuity)).some((event) => event.type === "thread.continued")
      ) {
        turn += 1;
        expect(turn).toBeLessThan(40);
        await runtime.submit(continuity, { text: filler(turn, 300), actor: "ada", origin: "test" });
      }
      await runtime.submit(continuity, { text: "What now?", actor: "ada", origin: "test" });
      await runtime.close();
      const events = await readAll(store, continuity);

      const recalled = events.filter((event) => event.type === "memory.recalled");
      expect(recalled.map((event) => (event.data as EventData<"memory.recalled">).trigger)).toEqual(
        ["start", "handoff"],
      );
      const continued = events.find((event) => event.type === "thread.continued")!;
      const continuation = (continued.data as EventData<"thread.continued">).continuation;
      const [atStart, atHandoff] = recalled as (SpoolEvent & {
        data: EventData<"memory.recalled">;
      })[];
      expect(atHandoff!.stream.id).toBe(continuation);
      for (const event of [atStart!, atHandoff!]) {
        // Only Ada's continuities, never this one, and never Bo's.
        expect(new Set(event.data.hits.map((hit) => hit.continuity))).toEqual(new Set(["past"]));
        expect(event.data.tokens).toBeLessThanOrEqual(300);
        expect(event.data.hits.every((hit) => /^[0-9a-f]{64}$/.test(hit.sha256))).toBe(true);
      }
      expect(atHandoff!.data.query).toContain("billing service deploy key");

      // Logged before the continuation's first compile, which carries it.
      const firstCompile = events.find(
        (event) =>
          event.type === "context.compiled" && event.stream.id.startsWith(`${continuation}:`),
      )!;
      expect(atHandoff!.seq).toBeLessThan(firstCompile.seq);
      const compiled = firstCompile.data as EventData<"context.compiled">;
      expect(compiled.memories).toEqual(atHandoff!.data.hits.map((hit) => hit.id));
      expect(compiled.parts?.memory).toBeGreaterThan(0);

      // What the continuation received: the memory, which neither its summary nor its messages hold.
      const seeded = events.find((event) => event.type === "handoff.seeded")!;
      expect(JSON.stringify(seeded.data)).not.toContain("secret/billing/deploy");
      const afterHandoff = foreground.requests.filter((request) =>
        text(request).includes("Thread Handoff Context"),
      );
      expect(afterHandoff.length).toBeGreaterThan(0);
      for (const request of afterHandoff) {
        expect(text(request)).toContain(MEMORY_HEADING);
        expect(text(request)).toContain("secret/billing/deploy");
        expect(text(request)).not.toContain("Bo's shop");
      }
      // The first thread's first call carried the memory of its start.
      expect(text(foreground.requests[0]!)).toContain("secret/billing/deploy");

      // The index changes: the fact is unpinned, the past summary is superseded. A fresh search
      // now gives something else; replay still gives each thread what the log recorded.
      await write(store, [
        unpinEvent("past", "p-branch"),
        summaryEvent(
          "past",
          "th-past",
          "s-past2",
          "Nothing about keys here: the billing service moved teams.",
          "s-past",
        ),
      ]);
      await index.reindex();
      const now = await index.search({
        text: atHandoff!.data.query,
        actor: "ada",
        exclude: [continuity],
      });
      expect(now.hits.map((hit) => hit.id)).not.toEqual(atHandoff!.data.hits.map((hit) => hit.id));
      const report = await replayContinuity({
        source: store,
        continuity,
        makeRuntime: ({ store: target, provider, intercept, world }) =>
          longRunRuntime(target, provider, {
            intercept,
            world,
            memory: createMemoryRecaller(index, { tokens: 300, scope: "actor" }),
          }),
      });
      expect(report.difference).toBeUndefined();
      expect(report.identical).toBe(true);
    } finally {
      await index.close();
    }
  }, 60_000);
});
