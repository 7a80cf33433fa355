import { createHash } from "node:crypto";
import pg from "pg";
import { monotonicFactory } from "ulid";
import { afterEach, describe, expect, inject, it } from "vitest";
import type { LogBackend } from "../src/log/log-backend.js";
import { ARTIFACT_CHUNK_BYTES } from "../src/log/postgres/postgres-artifacts.js";
import {
  openPostgresBackend,
  type PostgresBackendOptions,
} from "../src/log/postgres/postgres-backend.js";
import { redactUrl } from "../src/log/postgres/postgres-errors.js";
import {
  canonicalEvent,
  chainHash,
  GENESIS_HASH,
  type NewEvent,
  type PreparedEvent,
  prepareEvent,
  type SpoolEvent,
  StoreError,
} from "../src/spec/index.js";
import { createTestDatabase, freePort } from "./support/postgres-server.js";

const adminUrl = inject("postgresUrl");
const newId = monotonicFactory();
let tick = 0;
const defaults = {
  now: () => new Date(Date.UTC(2026, 0, 1) + tick++ * 1000).toISOString(),
  newId: () => newId(),
};

const backends: LogBackend[] = [];
const clients: pg.Client[] = [];

afterEach(async () => {
  await Promise.all(backends.splice(0).map((backend) => backend.close()));
  await Promise.all(clients.splice(0).map((client) => client.end()));
});

async function open(
  url: string,
  options: Partial<PostgresBackendOptions> = {},
): Promise<LogBackend> {
  const backend = await openPostgresBackend({ url, ...options });
  backends.push(backend);
  return backend;
}

async function fresh(
  options: Partial<PostgresBackendOptions> = {},
): Promise<{ url: string; backend: LogBackend }> {
  const url = await createTestDatabase(adminUrl);
  return { url, backend: await open(url, options) };
}

/** A plain connection for looking behind the backend's back. */
async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  clients.push(client);
  return client;
}

function pending(input: NewEvent): PreparedEvent {
  return prepareEvent(input, defaults);
}

function turn(continuity: string, text: string): PreparedEvent {
  return pending({ continuity, type: "turn.added", actor: "ana", origin: "cli", data: { text } });
}

function threadStarted(continuity: string, thread: string): PreparedEvent {
  return pending({
    continuity,
    type: "thread.started",
    stream: { kind: "thread", id: thread },
    data: { directive: "chat", chain_root: thread },
  });
}

/** Recomputes every continuity's chain over `events` (in seq order) and checks each link. */
function expectValidChains(events: readonly SpoolEvent[]): void {
  const heads = new Map<string, string>();
  for (const { seq: _seq, hash, ...event } of events) {
    expect(hash).toBe(
      chainHash(heads.get(event.continuity) ?? GENESIS_HASH, canonicalEvent(event)),
    );
    heads.set(event.continuity, hash);
  }
}

async function rejection(promise: Promise<unknown>, code: string): Promise<StoreError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(StoreError);
  expect((error as StoreError).code).toBe(code);
  return error as StoreError;
}

/** Records the heads a backend's watch reports; `reached(seq)` resolves once one is ≥ seq. */
function recordHeads(backend: LogBackend) {
  const seen: number[] = [];
  const waiting: Array<{ at: number; resolve: () => void }> = [];
  const unsubscribe = backend.watch((head) => {
    seen.push(head);
    for (const waiter of [...waiting]) {
      if (head >= waiter.at) {
        waiting.splice(waiting.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  });
  const reached = (at: number) =>
    seen.some((head) => head >= at)
      ? Promise.resolve()
      : new Promise<void>((resolve) => waiting.push({ at, resolve }));
  return { seen, unsubscribe, reached };
}

describe("postgres backend: events", () => {
  it("writes a batch and reads it back as stored, with the head", async () => {
    const { backend } = await fresh();
    const stored = await backend.write([
      turn("c1", "hello"),
      threadStarted("c1", "t1"),
      turn("c2", "other"),
    ]);
    expect(stored.map((event) => event.seq)).toEqual([1, 2, 3]);
    expect(stored[0]).toMatchObject({
      continuity: "c1",
      type: "turn.added",
      actor: "ana",
      origin: "cli",
      data: { text: "hello" },
    });
    const page = await backend.readPage({}, 0, 10);
    // `chars` is the data's stored length: the store sizes its next page by it.
    const chars = stored.reduce((sum, event) => sum + JSON.stringify(event.data).length, 0);
    expect(page).toEqual({ events: stored, head: 3, chars });
    expect(await backend.head()).toBe(3);
    expectValidChains(page.events);
  });

  it("round-trips a large batch of awkward text through the array insert", async () => {
    const { backend } = await fresh();
    const awkward = 'a "quoted" \\ back {brace}, comma\nNULL \u0000 nul 😀 \ud800 lone';
    const batch = Array.from({ length: 600 }, (_, i) => turn(`c${i % 7}`, `${i} ${awkward}`));
    expect(await backend.write([])).toEqual([]);
    const stored = await backend.write(batch);
    const read: SpoolEvent[] = [];
    for (let after = 0; ; ) {
      const page = await backend.readPage({}, after, 250);
      if (page.events.length === 0) break;
      read.push(...page.events);
      after = page.events.at(-1)!.seq;
    }
    expect(read).toEqual(stored);
    expect(read[599]!.data).toEqual({ text: `599 ${awkward}` });
    expectValidChains(read);
    expect((await backend.continuity("c0"))?.events).toBe(86);
  });

  it("filters by continuity, stream, types, after, until and limit", async () => {
    const { backend } = await fresh();
    await backend.write([
      turn("c1", "a"),
      threadStarted("c1", "t1"),
      turn("c2", "b"),
      threadStarted("c2", "t2"),
    ]);
    await backend.write([turn("c1", "c"), threadStarted("c1", "t3")]);
    const seqs = async (query: Parameters<LogBackend["readPage"]>[0], after = 0, limit = 100) =>
      (await backend.readPage(query, after, limit)).events.map((event) => event.seq);
    expect(await seqs({ continuity: "c1" })).toEqual([1, 2, 5, 6]);
    expect(await seqs({ stream: { kind: "thread", id: "t2" } })).toEqual([4]);
    expect(await seqs({ types: ["thread.started"] })).toEqual([2, 4, 6]);
    expect(await seqs({ continuity: "c1", types: ["turn.added"] })).toEqual([1, 5]);
    expect(
      await seqs({
        continuity: "c2",
        stream: { kind: "thread", id: "t2" },
        types: ["thread.started"],
      }),
    ).toEqual([4]);
    expect(await seqs({ types: [] })).toEqual([]);
    expect(await seqs({}, 2, 2)).toEqual([3, 4]);
    expect(await seqs({ until: 3 })).toEqual([1, 2, 3]);
    expect(await seqs({ until: 99 })).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await seqs({}, 0, 0)).toEqual([]);
    expect((await backend.readPage({ until: 2 }, 4, 10)).head).toBe(6);
  });

  it("links each continuity's chain across batches and keeps its head", async () => {
    const { backend } = await fresh();
    const first = await backend.write([turn("c1", "one"), turn("c1", "two")]);
    const second = await backend.write([turn("c2", "x"), turn("c1", "three")]);
    expect(first[0]!.hash).toBe(chainHash(GENESIS_HASH, canonicalEvent(first[0]!)));
    expect(first[1]!.hash).toBe(chainHash(first[0]!.hash, canonicalEvent(first[1]!)));
    expect(second[1]!.hash).toBe(chainHash(first[1]!.hash, canonicalEvent(second[1]!)));
    expect(second[0]!.hash).toBe(chainHash(GENESIS_HASH, canonicalEvent(second[0]!)));
    expect(await backend.continuity("c1")).toEqual({
      continuity: "c1",
      events: 3,
      firstSeq: 1,
      lastSeq: 4,
      createdAt: first[0]!.ts,
      lastAt: second[1]!.ts,
      headHash: second[1]!.hash,
    });
    expect((await backend.continuities()).map((head) => [head.continuity, head.events])).toEqual([
      ["c1", 3],
      ["c2", 1],
    ]);
    expect(await backend.continuity("missing")).toBeUndefined();
  });

  it("gives a reader tailing by seq every event exactly once, in order, while four writers race", async () => {
    const url = await createTestDatabase(adminUrl);
    const writers = await Promise.all([0, 1, 2, 3].map(() => open(url, { poolSize: 2 })));
    const reader = await open(url);
    const seen: SpoolEvent[] = [];
    let writing = true;
    const tail = async () => {
      let cursor = 0;
      for (;;) {
        // Sampled before the read, so the read that ends the loop began after every write resolved.
        const last = !writing;
        const page = await reader.readPage({}, cursor, 100);
        seen.push(...page.events);
        cursor = page.events.at(-1)?.seq ?? cursor;
        if (last && page.events.length === 0) return;
      }
    };
    const tailing = tail();
    let total = 0;
    await Promise.all(
      writers.map(async (writer, index) => {
        for (let round = 0; round < 15; round += 1) {
          const size = 1 + ((round + index) % 3);
          total += size;
          const batch = Array.from({ length: size }, (_, k) =>
            turn(k === 0 ? "shared" : `own-${index}`, `${index}.${round}.${k}`),
          );
          await writer.write(batch);
        }
      }),
    );
    writing = false;
    await tailing;
    expect(seen.map((event) => event.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect(await reader.head()).toBe(total);
    expectValidChains(seen);
    expect((await reader.continuity("shared"))?.headHash).toBe(
      seen.filter((event) => event.continuity === "shared").at(-1)?.hash,
    );
  });

  it("accepts several processes creating the schema of an empty database at once", async () => {
    const url = await createTestDatabase(adminUrl);
    const [a, b, c] = await Promise.all([open(url), open(url), open(url, { schema: "public" })]);
    await a!.write([turn("c1", "from a")]);
    await b!.write([turn("c1", "from b")]);
    expect((await c!.readPage({}, 0, 10)).events.map((event) => event.data)).toEqual([
      { text: "from a" },
      { text: "from b" },
    ]);
  });

  it("works in fast durability and in a schema of its own beside other tables", async () => {
    const url = await createTestDatabase(adminUrl);
    await (await connect(url)).query("CREATE TABLE customers (id int)");
    const backend = await open(url, { schema: "spool", durability: "fast" });
    await backend.write([turn("c1", "fast")]);
    expect((await backend.readPage({}, 0, 10)).events).toHaveLength(1);
    expect(backend.location).toBe(redactUrl(url));
  });
});

describe("postgres backend: watch", () => {
  it("calls a second backend's listener after another backend writes", async () => {
    const url = await createTestDatabase(adminUrl);
    const writer = await open(url);
    const watcher = await open(url);
    const heads = recordHeads(watcher);
    await heads.reached(0);
    await writer.write([turn("c1", "one"), turn("c1", "two")]);
    await heads.reached(2);
    await writer.write([turn("c1", "three")]);
    await heads.reached(3);
    expect(heads.seen).toEqual([0, 2, 3]);

    const late = recordHeads(watcher);
    await late.reached(3);
    expect(late.seen).toEqual([3]);
    heads.unsubscribe();
    late.unsubscribe();
  });

  it("reconnects a dropped LISTEN connection and reports the head again", async () => {
    const url = await createTestDatabase(adminUrl);
    const writer = await open(url);
    const watcher = await open(url);
    const heads = recordHeads(watcher);
    await heads.reached(0);
    const admin = await connect(url);
    const killed = await admin.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'spool-listen'",
    );
    expect(killed.rowCount).toBe(1);
    await writer.write([turn("c1", "while down")]);
    await heads.reached(1);
    await writer.write([turn("c1", "after")]);
    await heads.reached(2);
    heads.unsubscribe();
  });
});

describe("postgres backend: opening", () => {
  it("reports an unreachable server without the password", async () => {
    const port = await freePort();
    const url = `postgres://spool:hunter2-secret@127.0.0.1:${port}/spool`;
    const error = await rejection(openPostgresBackend({ url }), "store.unreachable");
    expect(error.retryable).toBe(true);
    expect(error.message).toContain(`127.0.0.1:${port}`);
    expect(error.message).toContain("SPOOL_DB");
    expect(error.message).not.toContain("hunter2-secret");
    expect(JSON.stringify(error.details)).not.toContain("hunter2-secret");
  });

  it("reports a wrong password and a missing database as unreachable, with what to do", async () => {
    const wrong = new URL(adminUrl);
    wrong.password = "not-the-password";
    const auth = await rejection(
      openPostgresBackend({ url: wrong.toString() }),
      "store.unreachable",
    );
    expect(auth.message).toMatch(/authentication failed/);
    expect(auth.message).not.toContain("not-the-password");

    const missing = new URL(adminUrl);
    missing.pathname = "/spool_no_such_database";
    const absent = await rejection(
      openPostgresBackend({ url: missing.toString() }),
      "store.unreachable",
    );
    expect(absent.message).toContain("createdb spool_no_such_database");
    expect(absent.message).not.toContain(new URL(adminUrl).password);
  });

  it("rejects a URL that is not postgres://", async () => {
    await rejection(
      openPostgresBackend({ url: "mysql://root:pw@localhost/db" }),
      "store.bad-location",
    );
  });

  it("refuses a database holding other tables and leaves it untouched", async () => {
    const url = await createTestDatabase(adminUrl);
    const client = await connect(url);
    await client.query("CREATE TABLE customers (id int)");
    const error = await rejection(openPostgresBackend({ url }), "store.foreign-database");
    expect(error.message).toContain("customers");
    expect(
      (await client.query("SELECT to_regclass('spool_meta') AS meta")).rows[0].meta,
    ).toBeNull();
  });

  it("refuses a log written by a newer schema version", async () => {
    const { url, backend } = await fresh();
    await backend.close();
    await (await connect(url)).query(
      "UPDATE spool_meta SET value = '99' WHERE key = 'schema_version'",
    );
    const error = await rejection(openPostgresBackend({ url }), "store.schema-too-new");
    expect(error.message).toMatch(/Upgrade Spool/);
  });

  it("raises store.closed after close, which is idempotent", async () => {
    const { backend } = await fresh();
    await backend.close();
    await backend.close();
    await rejection(backend.head(), "store.closed");
    await rejection(backend.write([turn("c1", "late")]), "store.closed");
    await rejection(backend.readPage({}, 0, 10), "store.closed");
    await rejection(backend.artifacts.put(new Uint8Array([1])), "store.closed");
    expect(() => backend.watch(() => {})).toThrow(StoreError);
  });

  it("removes passwords from URLs", () => {
    expect(redactUrl("postgres://u:secret@db.example:5432/spool")).toBe(
      "postgres://u@db.example:5432/spool",
    );
    expect(redactUrl("postgresql://u@host/db?password=secret&sslmode=require")).toBe(
      "postgresql://u@host/db?sslmode=require",
    );
    expect(redactUrl("not a url u:secret@host")).toBe("not a url u@host");
    expect(redactUrl("host=db password=secret")).not.toContain("secret");
    expect(redactUrl("postgres://u:secret@/db?host=/run/postgresql")).toBe(
      "postgres://u@/db?host=/run/postgresql",
    );
  });
});

describe("postgres backend: artifacts", () => {
  const size = 2 * ARTIFACT_CHUNK_BYTES + 100_000;
  const content = Buffer.alloc(size);
  for (let i = 0, x = 7; i < size; i += 1) {
    x = (x * 1_103_515_245 + 12_345) >>> 0;
    content[i] = x >>> 24;
  }
  const hash = createHash("sha256").update(content).digest("hex");

  async function* pieces(bytes: Buffer, step = 100_003): AsyncIterable<Uint8Array> {
    for (let offset = 0; offset < bytes.length; offset += step)
      yield bytes.subarray(offset, offset + step);
  }

  async function rows(url: string) {
    const client = await connect(url);
    const count = async (sql: string) => Number((await client.query(sql)).rows[0].n);
    return {
      artifacts: await count("SELECT count(*) AS n FROM spool_artifacts"),
      chunks: await count("SELECT count(*) AS n FROM spool_artifact_chunks"),
      uploads: await count(
        "SELECT count(*) AS n FROM spool_artifact_chunks WHERE hash LIKE 'upload:%'",
      ),
    };
  }

  it("stores the same bytes once and returns the first put's info", async () => {
    const { url, backend } = await fresh();
    const first = await backend.artifacts.put(content, { mediaType: "image/png" });
    expect(first).toMatchObject({ hash, size, mediaType: "image/png" });
    expect(new Date(first.createdAt).toISOString()).toBe(first.createdAt);
    expect(await backend.artifacts.put(content, { mediaType: "text/plain" })).toEqual(first);
    expect(await backend.artifacts.put(pieces(content))).toEqual(first);
    expect(await rows(url)).toEqual({ artifacts: 1, chunks: 3, uploads: 0 });
    expect(await backend.artifacts.stat(hash)).toEqual(first);
    expect(await backend.artifacts.has(hash)).toBe(true);
  });

  it("reads ranges across chunk boundaries, clipping past the end", async () => {
    const { backend } = await fresh();
    await backend.artifacts.put(content);
    const cases = [
      {},
      { offset: ARTIFACT_CHUNK_BYTES - 10, length: 20 },
      { offset: 10, length: 2 * ARTIFACT_CHUNK_BYTES },
      { offset: ARTIFACT_CHUNK_BYTES },
      { offset: size - 5, length: 100 },
      { offset: size + 10 },
      { length: 0 },
    ];
    for (const range of cases) {
      const start = Math.min(range.offset ?? 0, size);
      const expected = content.subarray(start, Math.min(size, start + (range.length ?? size)));
      expect((await backend.artifacts.get(hash, range)).equals(expected)).toBe(true);
    }
    const streamed: Buffer[] = [];
    for await (const piece of backend.artifacts.stream(hash, {
      offset: 5,
      length: 2 * ARTIFACT_CHUNK_BYTES,
    }))
      streamed.push(piece);
    expect(streamed.map((piece) => piece.length)).toEqual([
      ARTIFACT_CHUNK_BYTES - 5,
      ARTIFACT_CHUNK_BYTES,
      5,
    ]);
    expect(Buffer.concat(streamed).equals(content.subarray(5, 5 + 2 * ARTIFACT_CHUNK_BYTES))).toBe(
      true,
    );
  });

  it("stores a stream without leaving temporary chunks, and an empty artifact", async () => {
    const { url, backend } = await fresh();
    const info = await backend.artifacts.put(pieces(content), { mediaType: "video/mp4" });
    expect(info).toMatchObject({ hash, size, mediaType: "video/mp4" });
    expect((await backend.artifacts.get(hash)).equals(content)).toBe(true);
    expect(await rows(url)).toEqual({ artifacts: 1, chunks: 3, uploads: 0 });
    const empty = await backend.artifacts.put(new Uint8Array());
    expect(empty.size).toBe(0);
    expect((await backend.artifacts.get(empty.hash)).length).toBe(0);
  });

  it("stores nothing when the content stream fails, and passes its error on", async () => {
    const { url, backend } = await fresh();
    const failure = new Error("source broke");
    async function* broken(): AsyncIterable<Uint8Array> {
      yield content.subarray(0, ARTIFACT_CHUNK_BYTES + 1);
      throw failure;
    }
    await expect(backend.artifacts.put(broken())).rejects.toBe(failure);
    expect(await rows(url)).toEqual({ artifacts: 0, chunks: 0, uploads: 0 });
  });

  it("keeps one copy when identical content is put concurrently from two processes", async () => {
    const { url, backend: a } = await fresh();
    const b = await open(url);
    const infos = await Promise.all([
      a.artifacts.put(content),
      b.artifacts.put(content),
      a.artifacts.put(pieces(content)),
      b.artifacts.put(pieces(content, 65_536)),
    ]);
    for (const info of infos) expect(info).toEqual(infos[0]);
    expect(await rows(url)).toEqual({ artifacts: 1, chunks: 3, uploads: 0 });
    expect((await b.artifacts.get(hash)).equals(content)).toBe(true);
  });

  it("raises not-found, bad-range and bad-hash", async () => {
    const { backend } = await fresh();
    const absent = createHash("sha256").update("absent").digest("hex");
    await rejection(backend.artifacts.get(absent), "artifact.not-found");
    await rejection(
      (async () => {
        for await (const _ of backend.artifacts.stream(absent));
      })(),
      "artifact.not-found",
    );
    expect(await backend.artifacts.stat(absent)).toBeUndefined();
    expect(await backend.artifacts.has(absent)).toBe(false);
    const { hash: small } = await backend.artifacts.put(Buffer.from("small"));
    await rejection(backend.artifacts.get(small, { offset: -1 }), "artifact.bad-range");
    await rejection(backend.artifacts.get(small, { length: -5 }), "artifact.bad-range");
    await rejection(backend.artifacts.get("not-a-hash"), "artifact.bad-hash");
    await rejection(backend.artifacts.get(small.toUpperCase()), "artifact.bad-hash");
  });
});
