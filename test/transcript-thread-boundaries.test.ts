import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventStore } from "../src/log/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import {
  createTranscriptSink,
  finishThread,
  handOffThread,
  initKeys,
  loadPublicKeys,
  loadSigner,
  resumeThread,
  runModelStep,
  verifyCheckpoints,
  verifyTranscriptFile,
} from "../src/transcript/index.js";
import { runSpool } from "./support/cli.js";
import { tempStore } from "./support/transcripts.js";

const continuity = "home";
let store: EventStore;
let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ store, dir, cleanup } = await tempStore("spool-boundaries-"));
  await store.append({
    continuity,
    type: "continuity.created",
    actor: "ada",
    origin: "test",
    data: {},
  });
  for (const thread of ["t1", "t2"]) {
    await store.append({
      continuity,
      type: "thread.started",
      stream: { kind: "thread", id: thread },
      data: {
        directive: "assistant",
        chain_root: "t1",
        ...(thread === "t2" ? { continuation_of: "t1" } : {}),
      },
    });
  }
});
afterEach(async () => {
  await cleanup();
});

describe("thread boundaries", () => {
  it("sign the handoff, the resume and the finish, so strict verification accepts the chain of threads", async () => {
    const keys = join(dir, "keys");
    initKeys(keys);
    const signer = loadSigner(keys)!;
    const publicKeys = loadPublicKeys(keys);
    const path = join(dir, "t2.jsonl");
    const transcript = createTranscriptSink({ store, continuity, thread: "t2", path });
    const provider = createScriptedProvider({ script: ["first", "second"] });
    const request = { model: "scripted", messages: [{ role: "user" as const, content: "go" }] };

    await runModelStep({ store, continuity, thread: "t1", index: 0, provider, request, signer });
    const handoff = await handOffThread({
      store,
      continuity,
      thread: "t1",
      signer,
      continuation: "t2",
      reason: "pressure 0.91",
      pressureRatio: 0.91,
    });
    expect(handoff.checkpoint?.data).toMatchObject({ reason: "handoff", seq: handoff.event.seq });
    const resumed = await resumeThread({
      store,
      continuity,
      thread: "t2",
      signer,
      transcript,
      reason: "continuation",
    });
    expect(resumed.checkpoint?.data.reason).toBe("resume");
    await runModelStep({
      store,
      continuity,
      thread: "t2",
      index: 0,
      provider,
      request,
      signer,
      transcript,
    });
    const finished = await finishThread({
      store,
      continuity,
      thread: "t2",
      signer,
      transcript,
      result: "second",
    });
    expect(finished.checkpoint?.data).toMatchObject({ reason: "finish", seq: finished.event.seq });
    expect(finished.checkpoint?.data.transcript_sha256).toMatch(/^[0-9a-f]{64}$/);
    await transcript.close();

    for (const thread of ["t1", "t2"]) {
      const report = await verifyCheckpoints(store, {
        continuity,
        thread,
        publicKeys,
        strict: true,
      });
      expect(report.firstProblem, thread).toBeUndefined();
      expect(report.ok).toBe(true);
    }
    expect((await verifyTranscriptFile(path, { store, publicKeys })).ok).toBe(true);
    expect(readFileSync(path, "utf8")).toContain('"reason":"finish"');
    const cli = await runSpool(
      ["verify", "t2", "--strict", "--keys", keys, "--db", join(dir, "store")],
      { cwd: dir },
    );
    expect(cli.stdout).toContain("OK");
    expect(cli.code).toBe(0);
  });

  it("write the event without a checkpoint when there is no signer", async () => {
    const finished = await finishThread({ store, continuity, thread: "t1" });
    expect(finished.event.type).toBe("thread.completed");
    expect(finished.checkpoint).toBeUndefined();
  });
});
