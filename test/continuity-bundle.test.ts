import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  bundleManifest,
  type ContextPolicy,
  compileContext,
  compiledData,
  type DirectiveContext,
  recordBundle,
} from "../src/continuity/index.js";
import { type ArtifactStore, type EventStore, openEventStore } from "../src/log/index.js";
import { createModelCatalogue } from "../src/providers/models/index.js";
import { createTokenEstimator } from "../src/providers/tokens/index.js";
import { catchUp, ThreadHistory } from "../src/runtime/index.js";
import { type AnyNewEvent, canonicalJson, EVENT_CATALOG } from "../src/spec/index.js";
import { collect, created } from "./support/events.js";

const CONTINUITY = "home";
const THREAD = "t1";
const MODEL = "claude-sonnet-4-5";
const estimator = createTokenEstimator({ catalogue: createModelCatalogue() });
const DIRECTIVE: DirectiveContext = {
  name: "chat",
  system: "You help with the user's files.",
  tools: [{ name: "fs_read", description: "Reads a file.", inputSchema: { type: "object" } }],
};
const POLICY: ContextPolicy = { model: MODEL, budget: 20_000, maxOutputTokens: 1000 };
const TURN_ID = "01JAAAAAAAAAAAAAAAAAAAAAAA";

let dir: string;
let store: EventStore;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "spool-continuity-bundle-"));
  store = await openEventStore({ db: dir, env: {} });
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** A model step's events: a message with a native call, its action, and the loop's decision. */
function step(index: number, text: string): AnyNewEvent[] {
  const stream = { kind: "step" as const, id: `${THREAD}:${index}` };
  const call = `call_${index}`;
  return [
    {
      continuity: CONTINUITY,
      stream,
      type: "message.completed",
      data: {
        format: "anthropic",
        provider: "test",
        model: MODEL,
        response_id: null,
        content: [
          { type: "text", text },
          {
            type: "tool-call",
            id: call,
            name: "fs_read",
            input: { path: "a" },
            input_text: '{"path":"a"}',
          },
        ],
        usage: { input_tokens: 10, output_tokens: 5, cache_read_tokens: 0, cache_write_tokens: 0 },
        stop_reason: "tool-use",
        provider_stop_reason: null,
      },
    },
    {
      continuity: CONTINUITY,
      stream,
      type: "action.dispatched",
      data: {
        action_id: call,
        type: "tool",
        mode: "sync",
        name: "fs_read",
        parameters: { path: "a" },
        depends_on: [],
        retry: 0,
        on_error: "fail",
        in_thought: false,
      },
    },
    {
      continuity: CONTINUITY,
      stream,
      type: "action.succeeded",
      data: { action_id: call, attempt: 1, output: "contents of a", duration_ms: 1 },
    },
    {
      continuity: CONTINUITY,
      stream: { kind: "thread", id: THREAD },
      type: "loop.decided",
      data: { step: `${THREAD}:${index}`, decision: "continue", reason: "actions ran", results: 1 },
    },
  ];
}

/** A thread with a turn and one step, read into a live history as the agent loop does. */
async function threadHistory(): Promise<ThreadHistory> {
  await store.appendBatch([
    created(CONTINUITY),
    {
      continuity: CONTINUITY,
      stream: { kind: "thread", id: THREAD },
      type: "thread.started",
      data: { directive: "chat", chain_root: THREAD, model: MODEL },
    },
    {
      continuity: CONTINUITY,
      type: "turn.added",
      id: TURN_ID,
      actor: "ada",
      origin: "test",
      data: { text: "Read file a, please." },
    },
    {
      continuity: CONTINUITY,
      stream: { kind: "thread", id: THREAD },
      type: "run.started",
      data: { turn: TURN_ID, resumed: false, directive: "chat", model: MODEL, next_step: 0 },
    },
    ...step(0, "Reading it."),
  ]);
  const history = new ThreadHistory(THREAD);
  await catchUp(store, CONTINUITY, history);
  return history;
}

/** `artifacts` with the hashes of every `put` recorded. */
function recording(artifacts: ArtifactStore): { artifacts: ArtifactStore; puts: string[] } {
  const puts: string[] = [];
  return {
    puts,
    artifacts: {
      ...artifacts,
      has: (hash) => artifacts.has(hash),
      get: (hash, range) => artifacts.get(hash, range),
      stat: (hash) => artifacts.stat(hash),
      stream: (hash, range) => artifacts.stream(hash, range),
      put: (content, options) => {
        puts.push(
          createHash("sha256")
            .update(content as Uint8Array)
            .digest("hex"),
        );
        return artifacts.put(content, options);
      },
    },
  };
}

describe("recordBundle", () => {
  it("records what decided the request in the event, and the manifest reads back from it", async () => {
    const history = await threadHistory();
    const bundle = compileContext(history.view(), DIRECTIVE, POLICY, estimator);
    expect(bundle.request.messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
    ]);
    const data = await recordBundle(store.artifacts, bundle);

    expect(data.bundle).toBeUndefined();
    expect(data).toMatchObject({
      model: MODEL,
      system: sha256(bundle.request.system!),
      tools: sha256(canonicalJson(DIRECTIVE.tools)),
    });
    const manifest = (await bundleManifest(store.artifacts, data))!;
    expect(manifest).toEqual({
      version: 1,
      model: MODEL,
      system: sha256(bundle.request.system!),
      tools: sha256(canonicalJson(DIRECTIVE.tools)),
      summaries: [],
      pinned: [],
      ranges: bundle.ranges,
      parts: bundle.parts,
      tokens: bundle.tokens,
      budget: POLICY.budget,
      digest: bundle.digest,
    });
    expect((await store.artifacts.get(manifest.system)).toString("utf8")).toBe(
      bundle.request.system,
    );

    // The ranges name the thread's real events: from the run's start to the step's decision.
    const events = await collect(store.read({ continuity: CONTINUITY }));
    const seqOf = (type: string) => events.find((event) => event.type === type)!.seq;
    expect(manifest.ranges).toEqual([
      { thread: THREAD, from_seq: seqOf("run.started"), to_seq: seqOf("loop.decided") },
    ]);
  });

  it("stores a system prompt once across steps that share the `known` set", async () => {
    const history = await threadHistory();
    const { artifacts, puts } = recording(store.artifacts);
    const known = new Set<string>();

    const first = compileContext(history.view(), DIRECTIVE, POLICY, estimator);
    const firstData = await recordBundle(artifacts, first, known);
    await store.appendBatch(step(1, "Reading it again."));
    await catchUp(store, CONTINUITY, history);
    const second = compileContext(history.view(), DIRECTIVE, POLICY, estimator);
    const secondData = await recordBundle(artifacts, second, known);

    const system = sha256(first.request.system!);
    expect(second.request.system).toBe(first.request.system);
    expect(secondData.system).toBe(firstData.system);
    expect(secondData.ranges).not.toEqual(firstData.ranges);
    expect(puts).toEqual([system]);
    expect(known).toEqual(new Set(puts));

    // The same bundle again stores nothing; a pinned rule changes the prompt: one new artifact.
    await recordBundle(artifacts, second, known);
    expect(puts).toHaveLength(1);
    await store.append({
      continuity: CONTINUITY,
      type: "context.pinned",
      data: { id: "p1", kind: "rule", text: "Never delete files.", by: "user" },
    });
    await catchUp(store, CONTINUITY, history);
    const pinned = compileContext(history.view(), DIRECTIVE, POLICY, estimator);
    await recordBundle(artifacts, pinned, known);
    expect(puts).toEqual([system, sha256(pinned.request.system!)]);
    expect(pinned.request.system).toContain("Never delete files.");

    // Without a `known` set every call puts again; the store keeps one copy of each.
    await recordBundle(artifacts, pinned);
    expect(puts.slice(2)).toEqual(puts.slice(1, 2));
  });

  it("gives `context.compiled` data that the event catalog accepts, and that is logged as is", async () => {
    const history = await threadHistory();
    const view = history.view();
    const withParts = compileContext(
      {
        ...view,
        pinned: [{ id: "p1", kind: "fact", text: "The repository is at /srv/app." }],
        summaries: [
          {
            id: "t0@summary1",
            summarizer: "thread_summary",
            text: "Earlier work.",
            tokens: 4,
            covers: { thread: "t0", from_seq: 1, to_seq: 1 },
          },
        ],
      },
      DIRECTIVE,
      { ...POLICY, feeds: "branch: main" },
      estimator,
    );
    const over = compileContext(view, DIRECTIVE, { ...POLICY, budget: 10 }, estimator);
    expect(over.overBudget).toBe(true);

    const schema = EVENT_CATALOG["context.compiled"].schema;
    const recorded = [
      await recordBundle(store.artifacts, withParts),
      await recordBundle(store.artifacts, over),
      compiledData(withParts),
    ];
    expect(recorded[0]).toMatchObject({
      strategy: "continuity",
      summaries: ["t0@summary1"],
      pinned: ["p1"],
      digest: withParts.digest,
    });
    expect(recorded[1]!.over_budget).toBe(true);
    expect(recorded[0]!.over_budget).toBeUndefined();
    expect(recorded[2]!.system).toBeUndefined();
    expect(await bundleManifest(store.artifacts, recorded[2]!)).toBeUndefined();
    const manifest = (await bundleManifest(store.artifacts, recorded[0]!))!;
    expect(manifest.feeds).toBe(sha256("branch: main"));
    expect(manifest.summaries).toEqual(["t0@summary1"]);

    for (const [index, data] of recorded.entries()) {
      expect(schema.safeParse(data).error).toBeUndefined();
      const event = await store.append({
        continuity: CONTINUITY,
        stream: { kind: "step", id: `${THREAD}:${index + 1}` },
        type: "context.compiled",
        data,
      });
      const [read] = await collect(store.read({ continuity: CONTINUITY, after: event.seq - 1 }));
      expect(read!.data).toEqual(data);
    }
  });
});
