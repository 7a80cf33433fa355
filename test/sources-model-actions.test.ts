/**
 * The model manages sources with internal actions: `source.add` (within `source_actions`: its
 * kind allowed, its target admitted; a denial is a failed action that says which manifest line
 * would allow it), `source.pause` (its runner stops: nothing more is read), `source.resume` (it
 * reads on from its cursor), `source.remove`, and `source.recall` of delivered chunks. Each
 * change is logged `by: "action"` with its action id; the run replays identically, the actions
 * compared as decisions.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { EventStore } from "../src/log/index.js";
import {
  createScriptedProvider,
  type Provider,
  type ProviderRequest,
} from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import type { AgentRuntimeOptions, RuntimeSources } from "../src/runtime/index.js";
import type { EventData, SpoolEvent } from "../src/spec/index.js";
import { longRunRuntime, SMALL_MODEL } from "./support/continuity-run.js";
import {
  chunkNumbers,
  deliveredRanges,
  MemoryInput,
  memoryAdapters,
  sourceManifest,
  untilLogged,
} from "./support/memory-sources.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const continuity = "manage";
const temp = useTempStore("spool-sources-actions-");
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const act = (id: string, name: string, parameters: unknown) =>
  `<action type="internal" mode="sync" id="${id}">${JSON.stringify({ name, parameters })}</action>`;

function lastUser(request: ProviderRequest): string {
  const content = request.messages.filter((message) => message.role === "user").at(-1)?.content;
  return typeof content === "string" ? content : JSON.stringify(content);
}

/** Deliveries (turns that begin with a digest) go to `deliveries`, everything else to `main`. */
function routed(main: Provider, deliveries: Provider): Provider {
  return {
    name: "scripted",
    format: "scripted",
    stream: (request, options) =>
      (lastUser(request).startsWith("Source ") ? deliveries : main).stream(request, options),
  };
}

const dataOf = <T extends string>(events: SpoolEvent[], type: T) =>
  events.filter((event) => event.type === type);

describe("the model's source actions", () => {
  it("add (with denials), pause, resume, recall and remove sources; replay is identical", async () => {
    const workspace = mkdtempSync(join(tmpdir(), "spool-sources-actions-ws-"));
    dirs.push(workspace);
    const app = new MemoryInput();
    const extra = new MemoryInput();
    app.append("app 1", "app 2");
    extra.append("extra 1", "extra 2", "extra 3");
    extra.end();
    const sources: RuntimeSources = {
      manifest: sourceManifest({
        sources: [{ id: "app-log", kind: "file", target: "app.log", batch: { max_lines: 2 } }],
        source_actions: { enabled: true, kinds: ["file"] },
      }),
      access: { workspace, allowPaths: [], allowHosts: [], shell: false },
      adapters: memoryAdapters({ "app.log": app, "extra.log": extra }),
      manifestFile: ".ai/agents/watcher.yaml",
    };
    const main = createScriptedProvider({
      model: SMALL_MODEL,
      script: [
        act("a1", "source.add", {
          id: "extra",
          kind: "file",
          target: "extra.log",
          batch: { max_lines: 2 },
        }) +
          act("a2", "source.add", { id: "etc", kind: "file", target: "/etc/hostname" }) +
          act("a3", "source.add", { id: "web", kind: "http", target: "http://example.com/x" }) +
          act("a4", "source.pause", { source: "app-log", reason: "too noisy" }) +
          act("a5", "source.pause", { source: "nope" }),
        "<response>Added extra; paused app-log.</response>",
        act("b1", "source.resume", { source: "app-log" }) +
          act("b2", "source.recall", { source: "extra", from_chunk: 1, to_chunk: 2 }) +
          act("b3", "source.recall", { source: "extra", from_chunk: 5, to_chunk: 6 }) +
          act("b4", "source.remove", { source: "extra" }),
        "<response>Resumed app-log; removed extra.</response>",
      ],
    });
    const digests = createScriptedProvider({
      model: SMALL_MODEL,
      loop: true,
      script: ["<response>Noted.</response>"],
    });
    const make = (
      store: EventStore,
      provider: Provider,
      extraOptions: Partial<AgentRuntimeOptions> = {},
    ) => longRunRuntime(store, provider, { sources, ...extraOptions });
    const runtime = make(temp.store, routed(main, digests));
    // Taken up first, so app-log's first chunk is read before the model pauses it.
    await runtime.resume(continuity);
    await untilLogged(temp.store, continuity, 1, (event) => event.type === "source.chunk");
    await runtime.submit(continuity, { text: "Manage the sources.", actor: "ada", origin: "t" });
    // app-log is paused and extra read to its end: everything read is delivered.
    await runtime.sources(continuity).untilExhausted();
    app.append("after pause 1", "after pause 2");
    const paused = await readAll(temp.store, continuity);
    expect(chunkNumbers(paused, "app-log")).toEqual([1]);
    await runtime.submit(continuity, {
      text: "Resume app-log, recall extra, remove it.",
      actor: "ada",
      origin: "t",
    });
    app.end();
    await runtime.sources(continuity).untilExhausted();
    await runtime.close();
    const events = await readAll(temp.store, continuity);

    const changes = events
      .filter(
        (event) =>
          event.stream.kind === "source" && /added|paused|resumed|removed/.test(event.type),
      )
      .map((event) => ({
        type: event.type,
        ...(event.data as { source_id: string; by: string; action_id?: string }),
      }));
    expect(
      changes.map(({ type, source_id, by, action_id }) => [type, source_id, by, action_id]),
    ).toEqual([
      ["source.added", "app-log", "manifest", undefined],
      ["source.added", "extra", "action", "a1"],
      ["source.paused", "app-log", "action", "a4"],
      ["source.resumed", "app-log", "action", "b1"],
      ["source.removed", "extra", "action", "b4"],
    ]);
    expect(changes[2]).toMatchObject({ reason: "too noisy" });

    const failed = (id: string) =>
      dataOf(events, "action.failed")
        .map((event) => event.data as EventData<"action.failed">)
        .find((data) => data.action_id === id);
    expect(failed("a2")?.error.code).toBe("source.denied");
    expect(failed("a2")?.error.message).toContain(
      'To allow it, add source_actions: { allow_paths: ["/etc/hostname"] } in .ai/agents/watcher.yaml',
    );
    expect(failed("a3")?.error).toMatchObject({ code: "source.denied" });
    expect(failed("a3")?.error.message).toContain(
      "add http to source_actions.kinds in .ai/agents/watcher.yaml",
    );
    expect(failed("a5")?.error.code).toBe("source.unknown");
    expect(failed("b3")?.error.code).toBe("source.not-delivered");
    const recalled = dataOf(events, "action.succeeded")
      .map((event) => event.data as EventData<"action.succeeded">)
      .find((data) => data.action_id === "b2")?.output as { text: string; lines: number };
    expect(recalled.lines).toBe(3);
    for (const line of extra.lines) expect(recalled.text).toContain(line);
    // Denied sources were never added; nothing but extra and app-log was read.
    expect(events.some((event) => event.stream.id === "etc" || event.stream.id === "web")).toBe(
      false,
    );

    // Paused, app-log read nothing; resumed, it read on from its cursor, and all of it reached the agent.
    const appLines = events
      .filter((event) => event.type === "source.chunk" && event.stream.id === "app-log")
      .flatMap((event) => (event.data as EventData<"source.chunk">).lines ?? []);
    expect(appLines).toEqual(app.lines);
    const numbers = chunkNumbers(events, "app-log");
    const delivered = (deliveredRanges(events).get("app-log") ?? []).flatMap(({ from, to }) =>
      Array.from({ length: to - from + 1 }, (_, index) => from + index),
    );
    expect(delivered).toEqual(numbers);
    expect(deliveredRanges(events).get("extra")).toEqual([{ from: 1, to: 2 }]);
    expect(app.opened).toBe(2);

    const report = await replayContinuity({
      source: temp.store,
      continuity,
      stallMs: 5_000,
      makeRuntime: ({ store, world }) => make(store, world.provider, { world }),
    });
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
  });
});
