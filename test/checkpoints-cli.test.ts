import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { keysInit } from "../src/cli/commands/keys-init.js";
import { verifyCommand } from "../src/cli/commands/verify.js";
import { type CliIo, createContext, NotFoundError, UsageError } from "../src/cli/context.js";
import { type EventStore, openEventStore } from "../src/log/index.js";
import { ConfigError } from "../src/spec/index.js";
import { writeCheckpoint } from "../src/transcript/checkpoint-writer.js";
import { loadSigner, PRIVATE_KEY_FILE, PUBLIC_KEY_FILE } from "../src/transcript/signing.js";
import { rebuildTranscript, streamTranscript } from "../src/transcript/transcript-rebuild.js";
import { collect, created, turn } from "./support/events.js";

let dir: string;
let db: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "spool-checkpoints-cli-"));
  db = join(dir, "store");
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A CliIo double that collects what is written. */
function makeIo(env: Record<string, string | undefined> = {}) {
  const written = { stdout: "", stderr: "" };
  const io: CliIo = {
    stdout: { write: (chunk: string) => (written.stdout += chunk) },
    stderr: { write: (chunk: string) => (written.stderr += chunk) },
    env,
    cwd: dir,
  };
  return { io, written };
}

async function run(
  command: typeof keysInit,
  args: string[],
  env: Record<string, string | undefined> = {},
) {
  const { io, written } = makeIo(env);
  const code = await command(createContext(io), args);
  return { code, ...written };
}

/** Rejection of `command` with `args`, as the error thrown. */
async function failure(command: typeof keysInit, args: string[]): Promise<unknown> {
  const { io } = makeIo();
  return command(createContext(io), args).then(
    () => undefined,
    (error: unknown) => error,
  );
}

/** `home` (created, two turns) and thread `t1` in it, signed with the key in `<db>/keys`. */
async function seed(options: { checkpoint?: boolean; transcriptDigest?: boolean } = {}) {
  expect((await run(keysInit, ["--db", db])).code).toBe(0);
  const signer = loadSigner(join(db, "keys"))!;
  const store = await openEventStore({ db, env: {} });
  try {
    await store.appendBatch([
      created("home"),
      turn("home", "hello"),
      {
        continuity: "home",
        type: "thread.started",
        stream: { kind: "thread", id: "t1" },
        data: { directive: "chat", chain_root: "t1" },
      },
    ]);
    if (options.checkpoint !== false) {
      await writeCheckpoint({
        store,
        signer,
        continuity: "home",
        reason: "step",
        thread: "t1",
        ...(options.transcriptDigest ? { transcriptDigest: (seq) => digest(store, seq) } : {}),
      });
    }
    await store.append(turn("home", "after"));
    return { signer, events: await collect(store.read()) };
  } finally {
    await store.close();
  }
}

/** sha256 of thread t1's transcript up to `seq`, as the transcript sink would compute it. */
async function digest(store: EventStore, seq: number): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of streamTranscript(store, "home", "t1", { until: seq }))
    hash.update(chunk);
  return hash.digest("hex");
}

describe("spool keys init", () => {
  it("creates the key pair in .spool/keys, private key 0600, printing only id and paths", async () => {
    const result = await run(keysInit, []);
    expect(result.code).toBe(0);
    const keys = join(dir, ".spool", "keys");
    const signer = loadSigner(keys)!;
    expect(result.stdout).toBe(
      [
        `Created checkpoint key ${signer.keyId}`,
        `  private key: ${join(keys, PRIVATE_KEY_FILE)} (mode 0600; keep it secret)`,
        `  public key:  ${join(keys, PUBLIC_KEY_FILE)} (give it to whoever verifies)`,
        "",
      ].join("\n"),
    );
    expect(result.stdout).not.toContain("PRIVATE KEY");
    expect(result.stderr).toBe("");
    expect(statSync(join(keys, PRIVATE_KEY_FILE)).mode & 0o777).toBe(0o600);
  });

  it("honours --keys, SPOOL_KEYS and --db", async () => {
    expect((await run(keysInit, ["--keys", "mine"])).code).toBe(0);
    expect(existsSync(join(dir, "mine", PRIVATE_KEY_FILE))).toBe(true);
    expect((await run(keysInit, [], { SPOOL_KEYS: join(dir, "env") })).code).toBe(0);
    expect(existsSync(join(dir, "env", PRIVATE_KEY_FILE))).toBe(true);
    expect((await run(keysInit, ["--db", db])).code).toBe(0);
    expect(existsSync(join(db, "keys", PRIVATE_KEY_FILE))).toBe(true);
  });

  it("refuses to overwrite a key without --force; --force replaces it and keeps the old public key", async () => {
    await run(keysInit, []);
    const keys = join(dir, ".spool", "keys");
    const before = readFileSync(join(keys, PRIVATE_KEY_FILE), "utf8");
    const oldId = loadSigner(keys)!.keyId;
    const error = await failure(keysInit, []);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ code: "keys.exist" });
    expect((error as Error).message).toContain("--force");
    expect(readFileSync(join(keys, PRIVATE_KEY_FILE), "utf8")).toBe(before);

    const forced = await run(keysInit, ["--force"]);
    expect(forced.code).toBe(0);
    const newId = loadSigner(keys)!.keyId;
    expect(newId).not.toBe(oldId);
    expect(forced.stdout).toContain(`replaced key ${oldId}`);
    expect(existsSync(join(keys, "retired", `${oldId}.pub.pem`))).toBe(true);
  });

  it("rejects stray arguments as usage errors", async () => {
    expect(await failure(keysInit, ["now"])).toBeInstanceOf(UsageError);
    expect(await failure(keysInit, ["--bogus"])).toBeInstanceOf(UsageError);
  });
});

describe("spool verify", () => {
  it("verifies a continuity: OK with counts and key ids, exit 0", async () => {
    const { signer } = await seed();
    const result = await run(verifyCommand, ["home", "--db", db]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toBe(
      [
        `OK: continuity "home": 5 events, 1 checkpoint verified (1 key: ${signer.keyId})`,
        "  unsigned tail: 1 event not covered by a checkpoint (they come after seq 3, the newest signed)",
        "",
      ].join("\n"),
    );
  });

  it("prints one JSON object with --json", async () => {
    const { signer } = await seed();
    const result = await run(verifyCommand, ["home", "--db", db, "--json"]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      mode: "continuity",
      target: "home",
      keys: join(db, "keys"),
      location: join(db, "spool.db"),
      ok: true,
      continuity: "home",
      events: 5,
      checkpoints: 1,
      keyIds: [signer.keyId],
      unsignedTail: { events: 1, afterSeq: 3 },
    });
  });

  it("verifies a thread id through its thread.started", async () => {
    await seed();
    const result = await run(verifyCommand, ["t1", "--db", db, "--json"]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      mode: "thread",
      continuity: "home",
      thread: "t1",
      checkpoints: 1,
      unsignedTail: { events: 0 },
    });
    expect((await run(verifyCommand, ["t1", "--db", db])).stdout).toMatch(
      /^OK: thread "t1" in continuity "home": 5 events, 1 checkpoint verified/,
    );
  });

  it("names the first altered event and exits 1, in text and JSON", async () => {
    const { events } = await seed();
    const raw = new Database(join(db, "spool.db"));
    raw.prepare(`UPDATE events SET data = '{"text":"evil"}' WHERE seq = 2`).run();
    raw.close();
    const result = await run(verifyCommand, ["home", "--db", db]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      `FAILED: chain-broken at seq 2 (id ${events[1]!.id}) in continuity "home"`,
    );
    expect(result.stdout).toMatch(/\n {2}reason: .*Restore the log/);
    const json = await run(verifyCommand, ["home", "--db", db, "--json"]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      firstProblem: { kind: "chain-broken", seq: 2, id: events[1]!.id },
    });
  });

  it("fails with unknown-key when the signer's public key is not trusted", async () => {
    const { signer, events } = await seed();
    mkdirSync(join(dir, "other"));
    const result = await run(verifyCommand, ["home", "--db", db, "--keys", "other"]);
    expect(result.code).toBe(1);
    const checkpoint = events.find((event) => event.type === "checkpoint.signed")!;
    expect(result.stdout).toContain(
      `FAILED: unknown-key at seq ${checkpoint.seq} (id ${checkpoint.id}) in continuity "home"`,
    );
    expect(result.stdout).toContain(signer.keyId);
    expect(result.stdout).toContain(`trusted keys: 0 public keys from ${join(dir, "other")}`);
  });

  it("keeps verifying checkpoints of a replaced key", async () => {
    await seed();
    expect((await run(keysInit, ["--db", db, "--force"])).code).toBe(0);
    expect((await run(verifyCommand, ["home", "--db", db])).code).toBe(0);
  });

  it("--strict fails on a finished thread that no checkpoint signs", async () => {
    const { signer } = await seed();
    const store = await openEventStore({ db, env: {} });
    const completed = await store.append({
      continuity: "home",
      type: "thread.completed",
      stream: { kind: "thread", id: "t1" },
      data: {},
    });
    await store.close();
    expect((await run(verifyCommand, ["t1", "--db", db])).code).toBe(0);
    const strict = await run(verifyCommand, ["t1", "--db", db, "--strict"]);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toContain(
      `FAILED: unsigned-finish at seq ${completed.seq} (id ${completed.id}) in thread "t1"`,
    );
    const reopened = await openEventStore({ db, env: {} });
    await writeCheckpoint({
      store: reopened,
      signer,
      continuity: "home",
      reason: "finish",
      thread: "t1",
    });
    await reopened.close();
    expect((await run(verifyCommand, ["t1", "--db", db, "--strict"])).code).toBe(0);
  });

  it("an unknown target is not found, with a hint", async () => {
    await seed();
    const error = await failure(verifyCommand, ["nobody", "--db", db]);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as Error).message).toContain('no continuity or thread "nobody"');
    expect((error as Error).message).toContain(`spool continuities --db ${db}`);
    const file = await failure(verifyCommand, ["threads/t9/transcript.jsonl", "--db", db]);
    expect(file).toBeInstanceOf(NotFoundError);
    expect((file as Error).message).toContain("no transcript file at");
    const noStore = await failure(verifyCommand, ["home", "--db", join(dir, "none")]);
    expect((noStore as Error).message).toContain("there is no Spool store at");
  });

  it("takes a bare word as an id even when a file of that name exists", async () => {
    await seed();
    writeFileSync(join(dir, "home"), "not a transcript\n");
    const result = await run(verifyCommand, ["home", "--db", db, "--json"]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ mode: "continuity", continuity: "home" });
  });

  it("verifies a transcript.jsonl given by path, against the log, and names the first bad line", async () => {
    await seed({ transcriptDigest: true });
    const store = await openEventStore({ db, env: {} });
    const bytes = await rebuildTranscript(store, "home", "t1");
    await store.close();
    mkdirSync(join(dir, "t1"));
    const path = join(dir, "t1", "transcript.jsonl");
    writeFileSync(path, bytes);
    const lines = bytes.toString("utf8").split("\n").length - 1;
    const result = await run(verifyCommand, ["t1/transcript.jsonl", "--db", db]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toMatch(
      new RegExp(
        `^OK: transcript of thread "t1" \\(.*transcript\\.jsonl\\): ${lines} lines, 1 checkpoint verified\n$`,
      ),
    );
    const json = JSON.parse((await run(verifyCommand, [path, "--db", db, "--json"])).stdout);
    expect(json).toMatchObject({ mode: "transcript", ok: true, lines, checkpoints: 1, path });

    writeFileSync(path, bytes.toString("utf8").replace('"chat"', '"evil"'));
    const tampered = await run(verifyCommand, [path, "--db", db]);
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toMatch(/^FAILED: \S+ at line 1 \(byte \d+\) of /);
  });

  it("needs exactly one target", async () => {
    expect(await failure(verifyCommand, [])).toBeInstanceOf(UsageError);
    expect(await failure(verifyCommand, ["a", "b"])).toBeInstanceOf(UsageError);
  });
});
