/**
 * Bad input through the whole path: a runtime on SQLite with real sources read by the real
 * adapters, their chunks delivered to a model that notes each delivery. Each bad input ends as a
 * clear `source.failed` (final or not, its message saying what to do) or as bounded chunks, never
 * a crash of the runtime; a source that failed for good is told to the agent in a delivery turn.
 * The inputs too large to hold (a 50 MB line, a flood of stderr while the agent is busy) run in a
 * child process with a small heap, so a runtime that held them in proportion to their size would
 * die of it. Permission denied is skipped as root (root reads any file); a directory where a file
 * should be is the final failure that runs everywhere.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { openEventStore } from "../src/log/index.js";
import { readChunkLines } from "../src/sources/index.js";
import type { EventData, SpoolEvent } from "../src/spec/index.js";
import { runToExit } from "./support/child-process.js";
import { chunkNumbers, deliveredRanges } from "./support/memory-sources.js";
import { Watch as ServerWatch, startHttp } from "./support/network-source-harness.js";
import {
  deliveryTexts,
  failuresOf,
  ofSource,
  startWatch,
  WATCH_CONTINUITY,
  type Watch,
} from "./support/source-watch.js";

const MiB = 1024 * 1024;
/** The heap the child runs with: far below the inputs it is given. */
const CHILD_HEAP_MB = 96;
const root = fileURLToPath(new URL("..", import.meta.url));

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function watching(options: Parameters<typeof startWatch>[0]): Promise<Watch> {
  const watch = await startWatch(options);
  cleanups.push(() => watch.remove());
  return watch;
}

/** Lines of `source`'s chunks in `events`, in order (from the log or their artifacts). */
async function linesOf(watch: Watch, events: readonly SpoolEvent[], source: string) {
  const lines: string[] = [];
  for (const event of events.filter(ofSource(source, "source.chunk"))) {
    lines.push(...(await readChunkLines(watch.store, event)));
  }
  return lines;
}

/** Every chunk of `source` delivered once, in order, by delivery turns. */
function expectDelivered(events: readonly SpoolEvent[], source: string): void {
  const numbers = chunkNumbers(events, source);
  expect(numbers).toEqual(numbers.map((_, index) => index + 1));
  const covered = (deliveredRanges(events).get(source) ?? []).flatMap(({ from, to }) =>
    Array.from({ length: to - from + 1 }, (_, index) => from + index),
  );
  expect(covered).toEqual(numbers);
}

/** A chunk event's data. */
const chunkData = (event: SpoolEvent) => event.data as EventData<"source.chunk">;

/** Writes `parts` to `path` one at a time: the test never holds the whole file. */
async function writeParts(path: string, count: number, part: (index: number) => Buffer) {
  const handle = await open(path, "w");
  try {
    for (let index = 0; index < count; index++) await handle.write(part(index));
  } finally {
    await handle.close();
  }
}

/**
 * Runs a watch in a child process with a `CHILD_HEAP_MB` heap (see source-watch-worker.ts);
 * resolves with the events of its log once it exited cleanly.
 */
async function inSmallHeap(
  dir: string,
  input: Record<string, unknown>,
): Promise<{ events: SpoolEvent[]; lines: (source: string) => Promise<string[]> }> {
  const child = spawn(
    process.execPath,
    [
      `--max-old-space-size=${CHILD_HEAP_MB}`,
      "--import",
      "tsx",
      join(root, "test/support/source-watch-worker.ts"),
    ],
    { cwd: root, stdio: ["pipe", "pipe", "pipe"] },
  );
  const out: string[] = [];
  child.stdin!.end(JSON.stringify({ dir, ...input }));
  const exit = await runToExit(child, (line) => out.push(line));
  expect(exit.stderr.slice(-3000)).not.toMatch(/heap out of memory|FATAL ERROR/);
  expect({ code: exit.code, signal: exit.signal }).toEqual({ code: 0, signal: null });
  expect(out.at(-1)).toMatch(/^done \d+$/);
  const store = await openEventStore({ db: join(dir, "store") });
  cleanups.push(() => store.close());
  const events: SpoolEvent[] = [];
  for await (const event of store.read({ continuity: WATCH_CONTINUITY })) events.push(event);
  const lines = async (source: string) => {
    const all: string[] = [];
    for (const event of events.filter(ofSource(source, "source.chunk"))) {
      all.push(...(await readChunkLines(store, event)));
    }
    return all;
  };
  return { events, lines };
}

function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "spool-bad-input-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, "workspace", "logs"), { recursive: true });
  return dir;
}

describe("bad input through a runtime's sources", () => {
  it("binary garbage and invalid UTF-8: bounded chunks, the bad bytes replaced and counted, delivered", async () => {
    let release: () => void = () => {};
    const busy = new Promise<void>((resolve) => {
      release = resolve;
    });
    const watch = await watching({
      sources: [
        { id: "garbage", kind: "file", target: "logs/garbage.bin" },
        { id: "latin1", kind: "file", target: "logs/latin1.log" },
      ],
      firstAnswer: busy,
    });
    const garbage = randomBytes(2 * MiB);
    mkdirSync(join(watch.workspace, "logs"));
    writeFileSync(join(watch.workspace, "logs", "garbage.bin"), garbage);
    writeFileSync(
      join(watch.workspace, "logs", "latin1.log"),
      Buffer.concat([
        Buffer.from("caf\xe9 cr\xe8me\n", "latin1"),
        Buffer.from([0xc0, 0xaf, 0x0a, 0x80, 0x41, 0x0a, 0xe2, 0x82, 0x0a]),
        Buffer.from("ok\n"),
      ]),
    );
    await watch.until((event) => ofSource("latin1", "source.chunk")(event));
    await watch.until(
      (event) =>
        ofSource("garbage", "source.chunk")(event) &&
        (chunkData(event).cursor as { offset: number }).offset === garbage.lastIndexOf(0x0a) + 1,
    );
    release();
    await watch.until((event) => event.type === "run.completed", 2);
    const events = await watch.close();

    expect(await linesOf(watch, events, "latin1")).toEqual([
      "caf\ufffd cr\ufffdme",
      "\ufffd\ufffd",
      "\ufffdA",
      "\ufffd",
      "ok",
    ]);
    const invalid = (source: string) =>
      events
        .filter(ofSource(source, "source.chunk"))
        .reduce((sum, event) => sum + (chunkData(event).invalid_bytes ?? 0), 0);
    expect(invalid("latin1")).toBe(7);
    expect(invalid("garbage")).toBeGreaterThan(0);
    for (const event of events.filter(ofSource("garbage", "source.chunk"))) {
      const data = chunkData(event);
      expect(data.bytes).toBeLessThanOrEqual(64 * 1024 + 64 * 1024);
    }
    for (const line of await linesOf(watch, events, "garbage")) {
      expect(Buffer.byteLength(line)).toBeLessThanOrEqual(64 * 1024 * 3);
    }
    expectDelivered(events, "garbage");
    expectDelivered(events, "latin1");
    for (const text of deliveryTexts(events)) expect(text.length).toBeLessThan(16_000);
    expect(failuresOf(events, "garbage")).toEqual([]);
  });

  it("a 50 MB line: cut to a bounded line with the bytes dropped counted, in a small heap", async () => {
    const dir = scratchDir();
    const block = Buffer.alloc(MiB, "x");
    await writeParts(join(dir, "workspace", "logs", "huge.log"), 51, (index) =>
      index < 50 ? block : Buffer.from("\nafter\n"),
    );
    const { events, lines } = await inSmallHeap(dir, {
      sources: [{ id: "huge", kind: "file", target: "logs/huge.log" }],
      busyUntil: { type: "source.chunk", source: "huge", count: 2 },
      until: { type: "run.completed", count: 2 },
    });
    expect(await lines("huge")).toEqual(["x".repeat(64 * 1024), "after"]);
    const cut = events
      .filter(ofSource("huge", "source.chunk"))
      .reduce((sum, event) => sum + (chunkData(event).cut?.bytes ?? 0), 0);
    expect(cut).toBe(50 * MiB - 64 * 1024);
    expectDelivered(events, "huge");
    for (const text of deliveryTexts(events)) expect(text.length).toBeLessThan(16_000);
  });

  it("a command flooding stderr while the agent is busy: bounded chunks, one bounded delivery, in a small heap", async () => {
    const dir = scratchDir();
    const flood = 64 * MiB;
    const { events } = await inSmallHeap(dir, {
      sources: [
        {
          id: "noisy",
          kind: "command",
          target: `head -c ${flood} /dev/zero | tr '\\0' 'e' | fold -w 99 >&2; echo finished`,
          batch: { max_bytes: 16 * 1024 },
          options: { restart: "never" },
        },
      ],
      shell: true,
      busyUntil: { type: "source.exhausted", source: "noisy" },
      until: { type: "run.completed", count: 2 },
    });
    const chunks = events.filter(ofSource("noisy", "source.chunk")).map(chunkData);
    const stderr = chunks.filter((chunk) => chunk.channel === "stderr");
    expect(stderr.reduce((sum, chunk) => sum + chunk.line_count, 0)).toBe(Math.ceil(flood / 99));
    for (const chunk of stderr) expect(chunk.bytes).toBeLessThanOrEqual(16 * 1024 + 100);
    expect(chunks.filter((chunk) => chunk.channel === "stdout").flatMap((c) => c.lines)).toEqual([
      "finished",
    ]);
    expectDelivered(events, "noisy");
    // Everything that piled up while the agent was busy came in one turn of bounded size, which
    // names the chunks it did not read and tells the source's end.
    const texts = deliveryTexts(events);
    expect(texts).toHaveLength(1);
    expect(texts[0]!.length).toBeLessThan(16_000);
    expect(texts[0]).toContain("Not read for this digest (too much at once)");
    expect(texts[0]).toContain('Source "noisy" is exhausted');
    // 64 MiB through a shell pipeline and a child process: about 25 s on a quiet 2-core machine.
  }, 180_000);

  it("a file deleted and created again: both rotations logged, every line once, delivered", async () => {
    const watch = await watching({
      sources: [{ id: "app", kind: "file", target: "logs/app.log" }],
    });
    const path = join(watch.workspace, "logs", "app.log");
    mkdirSync(join(watch.workspace, "logs"));
    writeFileSync(path, "one\ntwo\n");
    await watch.until(
      (event) => ofSource("app", "source.chunk")(event) && chunkData(event).lines?.at(-1) === "two",
    );
    unlinkSync(path);
    await watch.until(
      (event) =>
        ofSource("app", "source.rotated")(event) &&
        (event.data as EventData<"source.rotated">).reason === "deleted",
    );
    writeFileSync(path, "three\n");
    const hasThree = (event: SpoolEvent) =>
      ofSource("app", "source.chunk")(event) && chunkData(event).lines?.includes("three") === true;
    await watch.until(hasThree);
    await watch.until(
      (event) =>
        event.type === "turn.added" &&
        (event.data as EventData<"turn.added">).text.includes("three"),
    );
    const events = await watch.close();
    expect(await linesOf(watch, events, "app")).toEqual(["one", "two", "three"]);
    expect(
      events
        .filter(ofSource("app", "source.rotated"))
        .map((event) => (event.data as EventData<"source.rotated">).reason),
    ).toEqual(["deleted", "recreated"]);
    expect(failuresOf(events, "app").filter((failure) => failure.final)).toEqual([]);
    expectDelivered(events, "app");
  });

  const root = process.getuid?.() === 0;
  it.skipIf(root)(
    "permission denied: a final source.failed saying how to give access, told to the agent (skipped as root: root reads any file)",
    async () => {
      const watch = await watching({
        sources: [{ id: "secret", kind: "file", target: "logs/secret.log" }],
      });
      mkdirSync(join(watch.workspace, "logs"));
      const path = join(watch.workspace, "logs", "secret.log");
      writeFileSync(path, "hidden\n");
      chmodSync(path, 0o000);
      cleanups.push(() => chmodSync(path, 0o600));
      await expectToldFailure(watch, "secret", "source.unreadable", /permission denied.*chmod/);
    },
  );

  it("a directory where a file should be: a final source.failed saying what to point it at, told to the agent", async () => {
    const watch = await watching({ sources: [{ id: "dir", kind: "file", target: "logs" }] });
    mkdirSync(join(watch.workspace, "logs"));
    await expectToldFailure(
      watch,
      "dir",
      "source.unreadable",
      /not a regular file.*point the source at a file, or use a dataset source/,
    );
  });

  it("an HTTP server that answers 500, and one that closes at once: notices that say what to check, the source retries, the runtime goes on", async () => {
    const servers = new ServerWatch();
    const failing = await startHttp(servers, (_request, response) => {
      response.writeHead(500, { "content-type": "text/plain" });
      response.end("boom");
    });
    const closing = await startHttp(servers, (request) => request.socket.destroy());
    cleanups.push(() => failing.close());
    cleanups.push(() => closing.close());
    const options = { interval_ms: 20, max_backoff_ms: 100 };
    const watch = await watching({
      sources: [
        { id: "status", kind: "http", target: failing.url("/metrics"), options },
        { id: "cut", kind: "http", target: closing.url("/metrics"), options },
      ],
      allowHosts: ["127.0.0.1:*"],
    });
    await watch.until(ofSource("status", "source.failed"), 3);
    await watch.until(ofSource("cut", "source.failed"), 3);
    await watch.until((event) => event.type === "run.completed");
    const events = await watch.close();
    for (const [source, pattern] of [
      [
        "status",
        /answered HTTP 500 .*: the server at 127\.0\.0\.1:\d+ failed \(its own logs say why\); the source tries again on its own/,
      ],
      [
        "cut",
        /could not be read \(.+\): check that a server is running at 127\.0\.0\.1:\d+ and that the URL is right/,
      ],
    ] as const) {
      const failures = failuresOf(events, source);
      expect(failures.length).toBeGreaterThanOrEqual(3);
      for (const failure of failures) {
        expect(failure.final).toBe(false);
        expect(failure.error.message).toMatch(pattern);
        expect(failure.retry_in_ms).toBeGreaterThan(0);
      }
      expect(events.filter(ofSource(source, "source.chunk"))).toEqual([]);
    }
    // Not failed for good: no delivery says so, and the continuity ran its turn.
    expect(deliveryTexts(events)).toEqual([]);
    expect(events.filter((event) => event.type === "run.completed")).toHaveLength(1);
  });

  it("an SSE server that restarts: a notice while it is gone, then every message once, in order, delivered", async () => {
    const servers = new ServerWatch();
    const messages = Array.from({ length: 6 }, (_, index) => `m${index + 1}`);
    let available = 3;
    const feed = await startHttp(servers, (request, response) => {
      const last = request.headers["last-event-id"];
      const from = typeof last === "string" ? Number(last) : 0;
      response.writeHead(200, { "content-type": "text/event-stream" });
      for (let index = from; index < available; index++) {
        response.write(`id: ${index + 1}\ndata: ${messages[index]}\n\n`);
      }
    });
    cleanups.push(() => feed.close());
    const watch = await watching({
      sources: [
        {
          id: "feed",
          kind: "sse",
          target: feed.url("/events"),
          options: { retry_ms: 20, max_backoff_ms: 100 },
        },
      ],
      allowHosts: ["127.0.0.1:*"],
    });
    const logged = (line: string) => (event: SpoolEvent) =>
      ofSource("feed", "source.chunk")(event) && chunkData(event).lines?.includes(line) === true;
    await watch.until(logged("m3"));
    available = 6;
    await feed.restart();
    await watch.until(ofSource("feed", "source.failed"));
    await watch.until(logged("m6"));
    await watch.until(
      (event) =>
        event.type === "turn.added" && (event.data as EventData<"turn.added">).text.includes("m6"),
    );
    const events = await watch.close();
    expect(await linesOf(watch, events, "feed")).toEqual(messages);
    const failures = failuresOf(events, "feed");
    expect(failures.length).toBeGreaterThan(0);
    for (const failure of failures) {
      expect(failure.final).toBe(false);
      expect(failure.error.message).toMatch(/the source tries again on its own/);
    }
    expectDelivered(events, "feed");
  });
});

/**
 * `source` failed for good with `code` and a message matching `how`, and a delivery turn told the
 * agent so; the runtime went on (it ran the delivery) and closed cleanly.
 */
async function expectToldFailure(watch: Watch, source: string, code: string, how: RegExp) {
  await watch.until(
    (event) =>
      event.type === "turn.added" &&
      (event.data as EventData<"turn.added">).text.includes(`Source "${source}" failed`),
  );
  await watch.until((event) => event.type === "run.completed", 2);
  const events = await watch.close();
  const failures = failuresOf(events, source);
  expect(failures).toHaveLength(1);
  expect(failures[0]).toMatchObject({ final: true, error: { code } });
  expect(failures[0]!.error.message).toMatch(how);
  const told = deliveryTexts(events).filter((text) => text.includes(`Source "${source}" failed`));
  expect(told).toHaveLength(1);
  expect(told[0]).toContain(failures[0]!.error.message);
  expect(told[0]).toContain("Resume it with source.resume once the cause is fixed");
}
