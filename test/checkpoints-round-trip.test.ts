import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type EventStore, openEventStore } from "../src/log/index.js";
import type { NewEvent } from "../src/spec/index.js";
import { CheckpointError } from "../src/transcript/checkpoint-error.js";
import { resolveKeysDir } from "../src/transcript/checkpoint-keys.js";
import { verifyCheckpoints } from "../src/transcript/checkpoint-verify.js";
import { writeCheckpoint } from "../src/transcript/checkpoint-writer.js";
import {
  type CheckpointSigner,
  checkpointText,
  signerFromPem,
  verifySignature,
} from "../src/transcript/signing.js";
import { collect, created, delta, turn } from "./support/events.js";

let dir: string;
let store: EventStore;
let signer: CheckpointSigner;
let publicKeys: Map<string, CheckpointSigner["publicKey"]>;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "spool-checkpoints-"));
  store = await openEventStore({ db: dir, env: {} });
  const { privateKey } = generateKeyPairSync("ed25519");
  signer = signerFromPem(privateKey.export({ type: "pkcs8", format: "pem" }).toString());
  publicKeys = new Map([[signer.keyId, signer.publicKey]]);
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function threadStarted(continuity: string, thread: string): NewEvent {
  return {
    continuity,
    type: "thread.started",
    stream: { kind: "thread", id: thread },
    data: { directive: "chat", chain_root: thread },
  };
}

function stepStarted(continuity: string, thread: string, index: number): NewEvent {
  return {
    continuity,
    type: "step.started",
    stream: { kind: "step", id: `${thread}:${index}` },
    data: { kind: "model", thread, index, provider: "test", model: "m" },
  };
}

describe("writeCheckpoint", () => {
  it("signs the continuity's head and verifies round trip", async () => {
    await store.appendBatch([created("home"), turn("home", "hello"), turn("home", "again")]);
    const head = await store.continuity("home");
    const event = await writeCheckpoint({ store, signer, continuity: "home", reason: "manual" });
    expect(event).toMatchObject({
      type: "checkpoint.signed",
      continuity: "home",
      stream: { kind: "continuity", id: "home" },
      data: {
        reason: "manual",
        seq: head?.lastSeq,
        head_hash: head?.headHash,
        key_id: signer.keyId,
      },
    });
    const text = checkpointText({
      continuity: "home",
      reason: "manual",
      seq: event.data.seq,
      head_hash: event.data.head_hash,
    });
    expect(verifySignature(signer.publicKey, text, event.data.signature)).toBe(true);

    expect(await verifyCheckpoints(store, { continuity: "home", publicKeys })).toEqual({
      ok: true,
      continuity: "home",
      events: 4,
      checkpoints: 1,
      keyIds: [signer.keyId],
      unsignedTail: { events: 0, afterSeq: 3 },
    });

    await store.append(turn("home", "after the checkpoint"));
    await store.append(turn("home", "and another"));
    const later = await verifyCheckpoints(store, { continuity: "home", publicKeys });
    expect(later).toMatchObject({ ok: true, events: 6, unsignedTail: { events: 2, afterSeq: 3 } });
  });

  it("a continuity with no checkpoints verifies, with every event in the unsigned tail", async () => {
    await store.appendBatch([created("home"), turn("home", "hello")]);
    expect(await verifyCheckpoints(store, { continuity: "home", publicKeys })).toMatchObject({
      ok: true,
      checkpoints: 0,
      keyIds: [],
      unsignedTail: { events: 2, afterSeq: 0 },
    });
  });

  it("flushes pending droppable events first, so the signed head includes them", async () => {
    await store.appendBatch([created("home"), stepStarted("home", "t1", 0)]);
    const pending = store.append(delta("home", "t1:0", "partial text"));
    const event = await writeCheckpoint({ store, signer, continuity: "home", reason: "step" });
    const stored = await pending;
    expect(event.data.seq).toBeGreaterThanOrEqual(stored.seq);
    expect(await verifyCheckpoints(store, { continuity: "home", publicKeys })).toMatchObject({
      ok: true,
      unsignedTail: { events: 0 },
    });
  });

  it("puts a thread's checkpoint on its thread stream and signs the transcript digest", async () => {
    await store.appendBatch([
      created("home"),
      threadStarted("home", "t1"),
      stepStarted("home", "t1", 0),
      threadStarted("home", "t2"),
    ]);
    const asked: number[] = [];
    const digest = "ab".repeat(32);
    const event = await writeCheckpoint({
      store,
      signer,
      continuity: "home",
      reason: "step",
      thread: "t1",
      transcriptDigest: async (seq) => {
        asked.push(seq);
        return digest;
      },
    });
    expect(asked).toEqual([4]);
    expect(event.stream).toEqual({ kind: "thread", id: "t1" });
    expect(event.data).toMatchObject({ thread: "t1", transcript_sha256: digest, seq: 4 });
    const text = checkpointText({
      continuity: "home",
      reason: "step",
      seq: 4,
      head_hash: event.data.head_hash,
      thread: "t1",
      transcript_sha256: digest,
    });
    expect(verifySignature(signer.publicKey, text, event.data.signature)).toBe(true);

    await writeCheckpoint({ store, signer, continuity: "home", reason: "manual" });
    await store.append(turn("home", "not a thread event"));
    await store.append({ ...stepStarted("home", "t1", 1) });
    const t1 = await verifyCheckpoints(store, { continuity: "home", thread: "t1", publicKeys });
    expect(t1).toMatchObject({
      ok: true,
      thread: "t1",
      checkpoints: 1,
      unsignedTail: { events: 1, afterSeq: 4 },
    });
    const t2 = await verifyCheckpoints(store, { continuity: "home", thread: "t2", publicKeys });
    expect(t2).toMatchObject({
      ok: true,
      checkpoints: 0,
      unsignedTail: { events: 1, afterSeq: 0 },
    });
    const all = await verifyCheckpoints(store, { continuity: "home", publicKeys });
    expect(all).toMatchObject({
      ok: true,
      checkpoints: 2,
      unsignedTail: { events: 2, afterSeq: 5 },
    });
  });

  it("throws CheckpointError for a continuity that does not exist, appending nothing", async () => {
    await store.append(created("home"));
    const error = await writeCheckpoint({
      store,
      signer,
      continuity: "nope",
      reason: "manual",
    }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(CheckpointError);
    expect(error).toMatchObject({ code: "checkpoint.no-continuity" });
    expect((error as Error).message).toContain('"nope"');
    expect(await collect(store.read())).toHaveLength(1);
  });
});

describe("resolveKeysDir", () => {
  const cwd = "/work/space";

  it("defaults to .spool/keys in the workspace", () => {
    expect(resolveKeysDir({ cwd, env: {} })).toBe("/work/space/.spool/keys");
  });

  it("puts keys beside a --db store, and in the workspace for PostgreSQL", () => {
    expect(resolveKeysDir({ cwd, env: {}, db: "store" })).toBe("/work/space/store/keys");
    expect(resolveKeysDir({ cwd, env: {}, db: "/data/log.db" })).toBe("/data/keys");
    expect(resolveKeysDir({ cwd, env: { SPOOL_DB: "/data/x.db" } })).toBe("/data/keys");
    expect(resolveKeysDir({ cwd, env: {}, db: "postgres://u@h/db" })).toBe(
      "/work/space/.spool/keys",
    );
  });

  it("takes --keys, then SPOOL_KEYS, over the store's directory", () => {
    const env = { SPOOL_KEYS: "env-keys" };
    expect(resolveKeysDir({ cwd, env, db: "store" })).toBe("/work/space/env-keys");
    expect(resolveKeysDir({ cwd, env, db: "store", keys: "/k" })).toBe("/k");
    expect(() => resolveKeysDir({ cwd, env: { SPOOL_KEYS: " " } })).toThrow(
      /keys directory is empty/,
    );
  });
});
