import { createHash, generateKeyPairSync, type KeyObject } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventStore } from "../src/log/index.js";
import {
  type CheckpointSigner,
  checkpointText,
  createTranscriptSink,
  rebuildTranscript,
  signerFromPem,
  type TranscriptSink,
  verifyTranscriptFile,
} from "../src/transcript/index.js";
import { dispatched, onStep, startThread, tempStore } from "./support/transcripts.js";

let env: Awaited<ReturnType<typeof tempStore>>;
let store: EventStore;
let signer: CheckpointSigner;
let keys: Map<string, KeyObject>;
let path: string;
let original: Buffer;

/** Signs the head of `home` for thread t1 with the live sink's digest, as the checkpoint writer does. */
async function checkpoint(sink: TranscriptSink, between?: () => Promise<unknown>): Promise<void> {
  await store.flush();
  const head = (await store.continuity("home"))!;
  await sink.caughtUp(head.lastSeq);
  // Whatever lands after the head was read comes before the checkpoint's line, past its seq:
  // the digest at the head's seq leaves it out.
  if (between) {
    await between();
    await sink.caughtUp(await store.head());
  }
  const digest = sink.digestUpTo(head.lastSeq)!;
  const payload = {
    continuity: "home",
    reason: "step",
    seq: head.lastSeq,
    head_hash: head.headHash,
    thread: "t1",
    transcript_sha256: digest,
  };
  await store.append({
    continuity: "home",
    type: "checkpoint.signed",
    stream: { kind: "thread", id: "t1" },
    data: {
      reason: "step",
      seq: payload.seq,
      head_hash: payload.head_hash,
      key_id: signer.keyId,
      thread: "t1",
      transcript_sha256: digest,
      signature: signer.sign(checkpointText(payload)),
    },
  });
}

const delta = (step: string, text: string) =>
  onStep("home", step, "token.delta", { block: "text:0", text });

beforeEach(async () => {
  env = await tempStore("spool-transcript-verify-");
  store = env.store;
  const { privateKey } = generateKeyPairSync("ed25519");
  signer = signerFromPem(privateKey.export({ type: "pkcs8", format: "pem" }).toString());
  keys = new Map([[signer.keyId, signer.publicKey]]);
  path = join(env.dir, "t1", "transcript.jsonl");
  const sink = createTranscriptSink({ store, continuity: "home", thread: "t1", path });
  const step = await startThread(store, "home", "t1"); // lines 1-2
  for (const text of ["alpha", "beta", "gamma"]) await store.append(delta(step, text)); // 3-5
  await checkpoint(sink); // line 6
  await store.append(onStep("home", step, "action.dispatched", dispatched("a1"))); // 7
  await store.append(delta("t2:0", "elsewhere")); // another thread's: not in this file
  await store.append(delta(step, "delta")); // 8
  await checkpoint(sink, () => store.append(delta(step, "late"))); // 9 (late), 10
  await store.append(delta(step, "epsilon")); // 11
  await sink.close();
  original = readFileSync(path);
});
afterEach(() => env.cleanup());

const lineStarts = (bytes: Buffer) => {
  const starts = [0];
  for (let i = 0; i < bytes.length - 1; i++) if (bytes[i] === 10) starts.push(i + 1);
  return starts;
};

function rewrite(edit: (lines: string[]) => string[]): void {
  const lines = original.toString().split("\n").slice(0, -1);
  writeFileSync(path, `${edit(lines).join("\n")}\n`);
}

describe("verifyTranscriptFile", () => {
  it("a live transcript with signed checkpoints verifies, with and without the store", async () => {
    expect(original.equals(await rebuildTranscript(store, "home", "t1"))).toBe(true);
    expect(original.toString().split("\n")).toHaveLength(12);
    const alone = await verifyTranscriptFile(path, { continuity: "home", publicKeys: keys });
    expect(alone).toEqual({
      ok: true,
      lines: 11,
      checkpoints: 2,
      thread: "t1",
      continuity: "home",
    });
    const withStore = await verifyTranscriptFile(path, { store, publicKeys: keys });
    expect(withStore).toEqual({
      ok: true,
      lines: 11,
      checkpoints: 2,
      thread: "t1",
      continuity: "home",
    });
  });

  it("the checkpoint digest is the sha256 of the lines before it up to its seq", () => {
    const lines = original.toString().split("\n");
    const first = JSON.parse(lines[5]!) as { data: { transcript_sha256: string } };
    const prefix = `${lines.slice(0, 5).join("\n")}\n`;
    expect(first.data.transcript_sha256).toBe(createHash("sha256").update(prefix).digest("hex"));
    const second = JSON.parse(lines[9]!) as { data: { transcript_sha256: string } };
    expect(lines[8]).toContain('"text":"late"');
    const before = `${lines.slice(0, 8).join("\n")}\n`;
    expect(second.data.transcript_sha256).toBe(createHash("sha256").update(before).digest("hex"));
  });

  it("one flipped byte: the next checkpoint's digest fails; with the store, the exact byte", async () => {
    const flipped = Buffer.from(original);
    const at = original.indexOf("beta") + 1;
    flipped[at] = "x".charCodeAt(0);
    writeFileSync(path, flipped);
    const alone = await verifyTranscriptFile(path, { continuity: "home", publicKeys: keys });
    expect(alone.ok).toBe(false);
    expect(alone.firstProblem).toMatchObject({
      kind: "digest",
      line: 6,
      byteOffset: lineStarts(original)[5],
    });
    expect(alone).toMatchObject({ lines: 5, checkpoints: 0 });
    const withStore = await verifyTranscriptFile(path, { store, publicKeys: keys });
    expect(withStore.firstProblem).toMatchObject({ kind: "mismatch", line: 4, byteOffset: at });
    expect(withStore.firstProblem!.message).toContain('"text":"beta"');
  });

  it("a deleted line: a digest failure alone, a missing line against the store", async () => {
    rewrite((lines) => lines.filter((_, index) => index !== 6));
    const alone = await verifyTranscriptFile(path, { continuity: "home", publicKeys: keys });
    expect(alone.firstProblem).toMatchObject({ kind: "digest", line: 9 });
    const withStore = await verifyTranscriptFile(path, { store, publicKeys: keys });
    expect(withStore.firstProblem).toMatchObject({ kind: "missing", line: 7 });
    expect(withStore.firstProblem!.message).toContain("action.dispatched");
  });

  it("reordered lines: an order problem alone, a swap against the store", async () => {
    rewrite((lines) => [...lines.slice(0, 6), lines[7]!, lines[6]!, ...lines.slice(8)]);
    const alone = await verifyTranscriptFile(path, { continuity: "home", publicKeys: keys });
    expect(alone.firstProblem).toMatchObject({ kind: "order", line: 8 });
    const withStore = await verifyTranscriptFile(path, { store, publicKeys: keys });
    expect(withStore.firstProblem).toMatchObject({ kind: "mismatch", line: 7 });
    expect(withStore.firstProblem!.message).toContain("swapped");
  });

  it("a signature that does not verify, and a key nobody trusts", async () => {
    rewrite((lines) =>
      lines.map((line, index) =>
        index === 9
          ? line.replace(/"signature":"(.)/, (_, c) => `"signature":"${c === "A" ? "B" : "A"}`)
          : line,
      ),
    );
    const bad = await verifyTranscriptFile(path, { continuity: "home", publicKeys: keys });
    expect(bad.firstProblem).toMatchObject({ kind: "signature", line: 10 });
    expect(bad).toMatchObject({ lines: 9, checkpoints: 1 });
    writeFileSync(path, original);
    const stranger = generateKeyPairSync("ed25519").publicKey;
    const unknown = await verifyTranscriptFile(path, {
      continuity: "home",
      publicKeys: new Map([["0123456789abcdef", stranger]]),
    });
    expect(unknown.firstProblem).toMatchObject({ kind: "unknown-key", line: 6 });
    expect(unknown.firstProblem!.message).toContain(signer.keyId);
    // Without keys, signatures are not checked; without a continuity, they cannot be.
    expect((await verifyTranscriptFile(path)).ok).toBe(true);
    expect((await verifyTranscriptFile(path, { publicKeys: keys })).firstProblem).toMatchObject({
      kind: "signature",
      line: 6,
    });
  });

  it("a line that is not JSON, a cut last line, extra and missing lines", async () => {
    rewrite((lines) => [...lines.slice(0, 2), "{not json", ...lines.slice(2)]);
    expect((await verifyTranscriptFile(path)).firstProblem).toMatchObject({
      kind: "parse",
      line: 3,
      byteOffset: lineStarts(original)[2],
    });
    writeFileSync(path, original.subarray(0, original.length - 5));
    expect((await verifyTranscriptFile(path)).firstProblem).toMatchObject({
      kind: "parse",
      line: 11,
    });
    rewrite((lines) => [...lines, lines.at(-1)!.replace("epsilon", "zeta")]);
    expect((await verifyTranscriptFile(path, { store })).firstProblem).toMatchObject({
      kind: "extra",
      line: 12,
      byteOffset: original.length,
    });
    rewrite((lines) => lines.slice(0, 8));
    expect((await verifyTranscriptFile(path, { store })).firstProblem).toMatchObject({
      kind: "missing",
      line: 9,
    });
  });
});
