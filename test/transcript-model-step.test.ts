import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventStore } from "../src/log/index.js";
import {
  calibrationProjection,
  createAnthropicProvider,
  createScriptedProvider,
  createTokenEstimator,
  messageText,
} from "../src/providers/index.js";
import {
  createKnowledgeSink,
  createTranscriptSink,
  initKeys,
  loadPublicKeys,
  loadSigner,
  rebuildTranscript,
  runModelStep,
  type StreamSink,
  verifyCheckpoints,
  verifyTranscriptFile,
} from "../src/transcript/index.js";
import { runSpool } from "./support/cli.js";
import { startReplayServer } from "./support/replay-server.js";
import { readAll, tempStore } from "./support/transcripts.js";

const continuity = "home";
const thread = "t1";
let store: EventStore;
let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ store, dir, cleanup } = await tempStore("spool-model-step-"));
  await store.appendBatch([
    {
      continuity,
      type: "continuity.created",
      actor: "ada",
      origin: "test",
      data: { title: "chat" },
    },
    {
      continuity,
      type: "thread.started",
      stream: { kind: "thread", id: thread },
      data: { directive: "assistant", chain_root: thread, model: "scripted" },
    },
  ]);
});
afterEach(async () => {
  await cleanup();
});

const ask = (text: string) => ({
  model: "scripted",
  messages: [{ role: "user" as const, content: text }],
});

describe("runModelStep", () => {
  it("logs, transcribes, signs and re-renders every step, and the files verify against the log", async () => {
    const keys = join(dir, "keys");
    initKeys(keys);
    const signer = loadSigner(keys)!;
    const provider = createScriptedProvider({
      script: [
        { reasoning: "Thinking about ünïcode 😀", text: "Here is the plan.\nStep one." },
        {
          text: "Done: <response>all good</response>",
          toolCalls: [{ name: "search", input: { q: "x" } }],
        },
      ],
      tokens: "char",
    });
    const transcriptPath = join(dir, "threads", thread, "transcript.jsonl");
    const transcript = createTranscriptSink({ store, continuity, thread, path: transcriptPath });
    const knowledge = createKnowledgeSink({
      path: join(dir, "threads", thread, "knowledge.md"),
      thread,
    });
    const common = { store, continuity, thread, provider, transcript, knowledge, signer };

    const first = await runModelStep({ ...common, index: 0, request: ask("plan it") });
    const second = await runModelStep({ ...common, index: 1, request: ask("go on") });
    await transcript.close();
    await knowledge.close();

    expect(messageText(first.message)).toBe("Here is the plan.\nStep one.");
    expect(second.message.stopReason).toBe("tool-use");
    expect(first.reports).toEqual([]);
    const events = await readAll(store, continuity);
    const types = events.filter((event) => event.stream.id === "t1:0").map((event) => event.type);
    expect(types[0]).toBe("step.started");
    expect(types.slice(-2)).toEqual(["message.completed", "step.completed"]);
    expect(types.filter((type) => type === "token.delta").length).toBeGreaterThan(0);
    const completed = events.find((event) => event.type === "step.completed")!;
    expect(completed.data).toMatchObject({ kind: "model", thread, index: 0, stop_reason: "end" });

    // The live transcript is the log's projection, byte for byte, and it verifies with its signatures.
    const live = readFileSync(transcriptPath);
    expect(live.equals(await rebuildTranscript(store, continuity, thread))).toBe(true);
    const publicKeys = loadPublicKeys(keys);
    const fileReport = await verifyTranscriptFile(transcriptPath, { store, publicKeys });
    expect(fileReport).toMatchObject({ ok: true, checkpoints: 2 });
    const chainReport = await verifyCheckpoints(store, { continuity, thread, publicKeys });
    expect(chainReport.ok).toBe(true);
    expect(chainReport.checkpoints).toBe(2);
    expect(second.checkpoint?.data.transcript_sha256).toMatch(/^[0-9a-f]{64}$/);

    // One token_delta line per streamed delta (characters here), in order.
    const deltaLines = live
      .toString("utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line))
      .filter(
        (line) => line.type === "token_delta" && line.step === "t1:0" && line.block === "text:1",
      );
    expect(deltaLines.map((line) => line.text)).toEqual(Array.from("Here is the plan.\nStep one."));

    // The file alone (no store) verifies with its keys once told which continuity it belongs to.
    const alone = ["verify", transcriptPath, "--keys", keys, "--db", join(dir, "no-store")];
    expect((await runSpool(alone, { cwd: dir })).code).toBe(1);
    const told = await runSpool([...alone, "--continuity", continuity], { cwd: dir });
    expect(told.stdout).toContain("OK");
    expect(told.code).toBe(0);

    const markdown = readFileSync(join(dir, "threads", thread, "knowledge.md"), "utf8");
    expect(markdown).toContain("Here is the plan.");
    expect(markdown).toContain("search");
  });

  it("reports a failing sink as an event and still completes the step", async () => {
    const broken: StreamSink = {
      name: "ui",
      write(part) {
        if (part.type === "text") throw new Error("the socket went away");
      },
    };
    const provider = createScriptedProvider({ script: ["hello there"] });
    const result = await runModelStep({
      store,
      continuity,
      thread,
      index: 0,
      provider,
      request: ask("hi"),
      sinks: [broken],
    });
    expect(messageText(result.message)).toBe("hello there");
    expect(result.reports).toEqual([expect.objectContaining({ kind: "failed", sink: "ui" })]);
    const failed = (await readAll(store, continuity)).filter(
      (event) => event.type === "sink.failed",
    );
    expect(failed.map((event) => event.data)).toEqual([
      expect.objectContaining({ sink: "ui", message: expect.stringContaining("socket went away") }),
    ]);
  });

  it("keeps a provider failure in the message and the log, and completes the step with stop_reason error", async () => {
    const provider = createScriptedProvider({
      script: [{ text: "one two three", error: { code: "provider.connection", afterTokens: 2 } }],
      transport: { sleep: async () => {} },
    });
    const result = await runModelStep({
      store,
      continuity,
      thread,
      index: 0,
      provider,
      request: ask("hi"),
    });
    expect(result.message.error?.code).toBe("provider.connection");
    expect(messageText(result.message)).toBe("one two");
    const events = await readAll(store, continuity);
    expect(events.find((event) => event.type === "message.failed")?.data).toMatchObject({
      partial: true,
    });
    expect(events.find((event) => event.type === "message.partial")).toBeDefined();
    expect(events.find((event) => event.type === "step.completed")?.data).toMatchObject({
      stop_reason: "error",
    });
  });

  it("logs the pre-call estimate, learns from reported usage, and rebuilds the same calibration from the log", async () => {
    const estimator = createTokenEstimator();
    const provider = createScriptedProvider({
      script: [1, 2, 3].map((n) => ({ text: `answer ${n}`, usage: { inputTokens: 400 * n } })),
    });
    for (const index of [0, 1, 2]) {
      const request = ask("x".repeat(700 * (index + 1)));
      await runModelStep({ store, continuity, thread, index, provider, request, estimator });
    }
    const started = (await readAll(store, continuity)).filter(
      (event) => event.type === "step.started",
    );
    expect(
      started.every(
        (event) =>
          typeof (event.data as { estimated_input_tokens?: number }).estimated_input_tokens ===
          "number",
      ),
    ).toBe(true);
    expect(estimator.factor("scripted")).not.toBe(1);
    const projection = calibrationProjection();
    const folded = await store.fold({ continuity }, projection);
    expect(folded.state).toEqual(estimator.calibration());
  });

  it("never writes the API key to the log, the transcript or the message, even when the provider echoes it", async () => {
    const key = "sk-ant-api03-secret-never-logged-0123456789abcdef";
    const server = await startReplayServer();
    try {
      const echo = JSON.stringify({
        type: "error",
        error: { type: "authentication_error", message: `invalid x-api-key: ${key}` },
      });
      server.respond({
        status: 401,
        headers: { "content-type": "application/json" },
        chunks: [echo],
      });
      const provider = createAnthropicProvider({ apiKey: key, baseURL: server.url });
      const path = join(dir, "t1.jsonl");
      const transcript = createTranscriptSink({ store, continuity, thread, path });
      const result = await runModelStep({
        store,
        continuity,
        thread,
        index: 0,
        provider,
        request: ask("hi"),
        transcript,
      });
      await transcript.close();
      await store.flush();
      expect(result.message.error?.code).toBe("provider.auth");
      expect(JSON.stringify(result)).not.toContain(key);
      expect(readFileSync(path, "utf8")).not.toContain(key);
      expect(JSON.stringify(await readAll(store, continuity))).not.toContain(key);
      expect(JSON.stringify(await readAll(store, continuity))).toContain("[redacted]");
    } finally {
      await server.close();
    }
  });
});
