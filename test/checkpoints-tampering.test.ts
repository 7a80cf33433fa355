import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type EventStore, openEventStore, verifyChain } from "../src/log/index.js";
import {
  canonicalEvent,
  chainHash,
  GENESIS_HASH,
  type NewEvent,
  type SpoolEvent,
} from "../src/spec/index.js";
import { verifyCheckpoints } from "../src/transcript/checkpoint-verify.js";
import { writeCheckpoint } from "../src/transcript/checkpoint-writer.js";
import { type CheckpointSigner, checkpointText, signerFromPem } from "../src/transcript/signing.js";
import { collect, created, turn } from "./support/events.js";

let dir: string;
let store: EventStore;
let signer: CheckpointSigner;
let publicKeys: Map<string, CheckpointSigner["publicKey"]>;

function newSigner(): CheckpointSigner {
  const { privateKey } = generateKeyPairSync("ed25519");
  return signerFromPem(privateKey.export({ type: "pkcs8", format: "pem" }).toString());
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "spool-checkpoints-"));
  store = await openEventStore({ db: dir, env: {} });
  signer = newSigner();
  publicKeys = new Map([[signer.keyId, signer.publicKey]]);
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `home`: created, two turns (seq 1–3), a checkpoint of seq 3 (seq 4), a third turn (seq 5). */
async function seed(): Promise<SpoolEvent> {
  await store.appendBatch([created("home"), turn("home", "hello"), turn("home", "second")]);
  const checkpoint = await writeCheckpoint({ store, signer, continuity: "home", reason: "manual" });
  await store.append(turn("home", "third"));
  return checkpoint;
}

/**
 * Edits the stored data of the event at `seq` with the store closed, then (with `rechain`)
 * recomputes every hash of the continuity after it, as an attacker with write access would, so
 * the hash chain checks out again. Reopens the store.
 */
async function tamper(
  seq: number,
  edit: (data: Record<string, unknown>) => void,
  rechain: boolean,
): Promise<void> {
  const events = await collect(store.read({ continuity: "home" }));
  await store.close();
  const raw = new Database(join(dir, "spool.db"));
  try {
    let previous = GENESIS_HASH;
    for (const event of events) {
      if (event.seq === seq) {
        const data = structuredClone(event.data) as Record<string, unknown>;
        edit(data);
        event.data = data;
        raw.prepare("UPDATE events SET data = ? WHERE seq = ?").run(JSON.stringify(data), seq);
      }
      if (!rechain) continue;
      previous = chainHash(previous, canonicalEvent(event));
      raw.prepare("UPDATE events SET hash = ? WHERE seq = ?").run(previous, event.seq);
    }
    if (rechain) {
      raw
        .prepare("UPDATE continuities SET head_hash = ? WHERE continuity = ?")
        .run(previous, "home");
    }
  } finally {
    raw.close();
  }
  store = await openEventStore({ db: dir, env: {} });
}

/** Appends a checkpoint.signed with exactly `data` (signed by `by` unless a signature is given). */
async function forge(
  data: { seq: number; head_hash: string; signature?: string },
  by: CheckpointSigner = signer,
): Promise<SpoolEvent> {
  const text = checkpointText({ continuity: "home", reason: "manual", ...data });
  const event: NewEvent = {
    continuity: "home",
    type: "checkpoint.signed",
    data: {
      reason: "manual",
      seq: data.seq,
      head_hash: data.head_hash,
      key_id: by.keyId,
      signature: data.signature ?? by.sign(text),
    },
  };
  return store.append(event);
}

describe("verifyCheckpoints finds tampering", () => {
  it("an edited row breaks the chain: chain-broken at that event", async () => {
    await seed();
    const [, second] = await collect(store.read({ continuity: "home" }));
    await tamper(2, (data) => Object.assign(data, { text: "evil" }), false);
    const report = await verifyCheckpoints(store, { continuity: "home", publicKeys });
    expect(report.ok).toBe(false);
    expect(report.firstProblem).toMatchObject({ kind: "chain-broken", seq: 2, id: second?.id });
    expect(report.firstProblem?.message).toMatch(/altered.*Restore the log/);
    // The checkpoint at seq 4 comes after the break and is not trusted.
    expect(report.checkpoints).toBe(0);
  });

  it("a rewritten history with a recomputed chain no longer matches the signed head", async () => {
    const checkpoint = await seed();
    await tamper(2, (data) => Object.assign(data, { text: "evil" }), true);
    expect((await verifyChain(store, { continuity: "home" })).ok).toBe(true);
    const report = await verifyCheckpoints(store, { continuity: "home", publicKeys });
    expect(report.firstProblem).toMatchObject({
      kind: "head-mismatch",
      seq: checkpoint.seq,
      id: checkpoint.id,
    });
    expect(report.firstProblem?.message).toContain("the event at seq 3");
  });

  it("a replaced signature (chain recomputed to match) is a bad-signature", async () => {
    const checkpoint = await seed();
    const other = newSigner().sign("something else");
    await tamper(checkpoint.seq, (data) => Object.assign(data, { signature: other }), true);
    expect((await verifyChain(store, { continuity: "home" })).ok).toBe(true);
    const report = await verifyCheckpoints(store, { continuity: "home", publicKeys });
    expect(report.firstProblem).toMatchObject({ kind: "bad-signature", seq: checkpoint.seq });
  });

  it("a head_hash moved to cover the rewrite (chain recomputed) is a bad-signature", async () => {
    const checkpoint = await seed();
    await tamper(2, (data) => Object.assign(data, { text: "evil" }), true);
    const rewritten = (await collect(store.read({ continuity: "home" })))[2]!;
    await tamper(
      checkpoint.seq,
      (data) => Object.assign(data, { head_hash: rewritten.hash }),
      true,
    );
    const report = await verifyCheckpoints(store, { continuity: "home", publicKeys });
    expect(report.firstProblem).toMatchObject({ kind: "bad-signature", seq: checkpoint.seq });
  });

  it("a checkpoint signed by another key is an unknown-key, and verifies once that key is known", async () => {
    await seed();
    const stranger = newSigner();
    const forged = await writeCheckpoint({
      store,
      signer: stranger,
      continuity: "home",
      reason: "manual",
    });
    const report = await verifyCheckpoints(store, { continuity: "home", publicKeys });
    expect(report).toMatchObject({
      ok: false,
      checkpoints: 1,
      firstProblem: { kind: "unknown-key", seq: forged.seq, id: forged.id },
    });
    expect(report.firstProblem?.message).toContain(stranger.keyId);
    const both = new Map([...publicKeys, [stranger.keyId, stranger.publicKey]]);
    expect(await verifyCheckpoints(store, { continuity: "home", publicKeys: both })).toMatchObject({
      ok: true,
      checkpoints: 2,
      keyIds: [signer.keyId, stranger.keyId].sort(),
    });
  });

  it("a validly signed checkpoint whose head_hash is not the hash at its seq is a head-mismatch", async () => {
    await seed();
    const events = await collect(store.read({ continuity: "home" }));
    const forged = await forge({ seq: 2, head_hash: events[2]!.hash });
    const report = await verifyCheckpoints(store, { continuity: "home", publicKeys });
    expect(report).toMatchObject({
      checkpoints: 1,
      firstProblem: { kind: "head-mismatch", seq: forged.seq, id: forged.id },
    });
  });

  it("a checkpoint of a seq in another continuity is a missing-head", async () => {
    await seed();
    const elsewhere = await store.append(created("work"));
    const forged = await forge({ seq: elsewhere.seq, head_hash: elsewhere.hash });
    expect(
      (await verifyCheckpoints(store, { continuity: "home", publicKeys })).firstProblem,
    ).toMatchObject({
      kind: "missing-head",
      seq: forged.seq,
    });
  });

  it("reports the first bad checkpoint in seq order", async () => {
    await seed();
    const events = await collect(store.read({ continuity: "home" }));
    const first = await forge({ seq: 2, head_hash: events[2]!.hash, signature: "AAAA" });
    await forge({ seq: 1, head_hash: events[2]!.hash });
    const report = await verifyCheckpoints(store, { continuity: "home", publicKeys });
    expect(report.firstProblem).toMatchObject({ kind: "bad-signature", seq: first.seq });
  });
});

describe("strict verification", () => {
  const stream = { kind: "thread", id: "t1" } as const;

  async function finishThread(): Promise<SpoolEvent> {
    await store.appendBatch([
      created("home"),
      {
        continuity: "home",
        type: "thread.started",
        stream,
        data: { directive: "chat", chain_root: "t1" },
      },
    ]);
    await writeCheckpoint({ store, signer, continuity: "home", reason: "step", thread: "t1" });
    return store.append({
      continuity: "home",
      type: "thread.completed",
      stream,
      data: { result: "done" },
    });
  }

  it("a thread.completed with no checkpoint after it fails only with strict", async () => {
    const completed = await finishThread();
    for (const thread of [undefined, "t1"]) {
      const scope = { continuity: "home", publicKeys, ...(thread ? { thread } : {}) };
      expect(await verifyCheckpoints(store, scope)).toMatchObject({
        ok: true,
        unsignedTail: { events: 1 },
      });
      const strict = await verifyCheckpoints(store, { ...scope, strict: true });
      expect(strict.ok).toBe(false);
      expect(strict.firstProblem).toMatchObject({
        kind: "unsigned-finish",
        seq: completed.seq,
        id: completed.id,
      });
      expect(strict.firstProblem?.message).toContain('thread "t1" finished');
    }
    await writeCheckpoint({ store, signer, continuity: "home", reason: "finish", thread: "t1" });
    const signed = { continuity: "home", thread: "t1", publicKeys, strict: true };
    expect(await verifyCheckpoints(store, signed)).toMatchObject({ ok: true, checkpoints: 2 });
  });

  it("a thread.continued counts as a handoff that must be signed", async () => {
    await finishThread();
    await writeCheckpoint({ store, signer, continuity: "home", reason: "finish", thread: "t1" });
    const continued = await store.append({
      continuity: "home",
      type: "thread.continued",
      stream,
      data: { continuation: "t2", reason: "context full" },
    });
    const report = await verifyCheckpoints(store, { continuity: "home", publicKeys, strict: true });
    expect(report.firstProblem).toMatchObject({ kind: "unsigned-finish", seq: continued.seq });
    expect(report.firstProblem?.message).toContain("handed off");
  });
});
