/**
 * What a user sees of a source's delivery turn in `spool chat` (live and in its recap) and
 * `spool tail`: one quiet line naming the source, its chunks, lines and pattern matches (and an
 * end it announces), never the digest the model reads; a source's rotation, failure or end is one
 * quiet line beside the conversation, with any password in it removed.
 */
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createChatRenderer, deliveryLine } from "../src/cli/chat/index.js";
import { main } from "../src/cli/main.js";
import { openEventStore } from "../src/log/index.js";
import type { AnyNewEvent } from "../src/spec/index.js";
import { collectOutput, screenOf, stripColor } from "./support/chat-fakes.js";
import { awaitableOutput, memoryOutput } from "./support/cli.js";
import { createWorkspace, type Workspace } from "./support/cli-e2e.js";

/** A digest as the runtime writes it: many lines the user should not see. */
const DIGEST = [
  "Source log (file logs/app.log): chunks 12-14, 1500 lines, 90 KiB; cursor @100 -> @190000",
  "Matches: error 37, warn 0",
  "--- chunk #12 ---",
  ...Array.from({ length: 40 }, (_, index) => `line ${index} ERROR secret-looking detail`),
].join("\n");

const delivered = {
  sources: [
    {
      source_id: "log",
      from_chunk: 12,
      to_chunk: 14,
      cursor: { offset: 190_000 },
      lines: 1_500,
      bytes: 92_160,
      matches: { error: 37, warn: 0 },
    },
  ],
};

describe("a delivery turn's line", () => {
  it("names the source, its chunks, lines and the matches that are not zero", () => {
    expect(deliveryLine("source:log", DIGEST, delivered)).toBe(
      "▸ log: chunks 12–14 · 1,500 lines · error 37",
    );
    const one = { sources: [{ ...delivered.sources[0]!, from_chunk: 9, to_chunk: 9, lines: 1 }] };
    expect(deliveryLine("source:log", DIGEST, one)).toBe("▸ log: chunk 9 · 1 line · error 37");
  });

  it("tells an end it announces, and several sources in one line", () => {
    const both = {
      sources: [
        delivered.sources[0]!,
        { source_id: "api", from_chunk: 3, to_chunk: 3, cursor: {}, lines: 20 },
      ],
      ends: [
        { source_id: "api", status: "exhausted" as const },
        { source_id: "cmd", status: "failed" as const },
      ],
    };
    expect(deliveryLine("sources", DIGEST, both)).toBe(
      "▸ log: chunks 12–14 · 1,500 lines · error 37; api: chunk 3 · 20 lines · input ended; cmd: failed and stopped",
    );
  });

  it("shows the chunks alone for a turn of an older log, and a first line when it records nothing", () => {
    const old = { sources: [{ source_id: "log", from_chunk: 4, to_chunk: 6, cursor: {} }] };
    expect(deliveryLine("source:log", DIGEST, old)).toBe("▸ log: chunks 4–6");
    expect(deliveryLine("source:log", 'Source "log" is exhausted: …\nmore', { sources: [] })).toBe(
      '▸ source:log: Source "log" is exhausted: …',
    );
  });

  it("is what the live chat shows for the runtime's delivery notice", () => {
    const out = collectOutput(false, 100);
    const renderer = createChatRenderer({ output: out, env: { TERM: "xterm-256color" } });
    renderer.observe({
      type: "turn-received",
      continuity: "c",
      turn: "t",
      actor: "source:log",
      text: DIGEST,
      origin: "source",
      delivery: { sources: delivered.sources, ends: [] },
    });
    renderer.close();
    expect(screenOf(out.text).map(stripColor)).toEqual([
      "▸ log: chunks 12–14 · 1,500 lines · error 37",
    ]);
  });
});

describe("spool tail and the chat's recap", () => {
  let workspace: Workspace;
  beforeEach(() => {
    workspace = createWorkspace("spool-delivery-lines-");
  });
  afterEach(() => workspace.remove());

  /** A continuity whose log holds a question, a delivery, a rotation, an answer and a failure. */
  async function writeLog(continuity: string): Promise<void> {
    const store = await openEventStore({ db: join(workspace.dir, ".spool"), env: {} });
    const stream = { kind: "source" as const, id: "log" };
    const events: AnyNewEvent[] = [
      { continuity, type: "continuity.created", actor: "tester", origin: "cli", data: {} },
      {
        continuity,
        type: "turn.added",
        actor: "tester",
        origin: "cli",
        data: { text: "watch the log" },
      },
      {
        continuity,
        type: "turn.added",
        actor: "source:log",
        origin: "source",
        data: { text: DIGEST, ...delivered },
      },
      {
        continuity,
        stream,
        type: "source.rotated",
        data: { source_id: "log", reason: "renamed", cursor: { offset: 0 } },
      },
      {
        continuity,
        stream,
        type: "source.failed",
        data: {
          source_id: "log",
          error: {
            code: "source.unreachable",
            message: "https://bob:hunter2@feed.example/x refused the connection",
          },
          final: false,
          retry_in_ms: 2_000,
        },
      },
      {
        continuity,
        stream,
        type: "source.failed",
        data: {
          source_id: "log",
          error: { code: "source.unreadable", message: "logs/app.log may not be read (EACCES)" },
          final: true,
        },
      },
    ];
    try {
      for (const event of events) await store.append(event);
    } finally {
      await store.close();
    }
  }

  it("spool tail shows the delivery as one line, and the rotation and failure", async () => {
    await writeLog("watched");
    const stop = new AbortController();
    const stdout = memoryOutput();
    const stderr = awaitableOutput();
    const done = main(["tail", "watched", "--from-start"], {
      stdout,
      stderr,
      env: workspace.env(),
      cwd: workspace.dir,
      signal: stop.signal,
    });
    // `tail` follows until stopped; it says "— live —" once it has shown the log.
    await stderr.until("— live —");
    stop.abort();
    expect(await done).toBe(0);
    expect(stdout.text.trimEnd().split("\n")).toEqual([
      "you › watch the log",
      "▸ log: chunks 12–14 · 1,500 lines · error 37",
      "↻ log: rotated (renamed away): reading the new file from its start",
      "! log: https://bob@feed.example/x refused the connection (again in 2 s)",
      "✗ log stopped: logs/app.log may not be read (EACCES)",
    ]);
    expect(stdout.text).not.toContain("hunter2");
  });

  it("the chat's recap shows the delivery as one line", async () => {
    await writeLog("chat");
    const stdout = memoryOutput();
    const stderr = memoryOutput();
    const code = await main(["chat", "--continuity", "chat"], {
      stdout,
      stderr,
      env: workspace.env({ SPOOL_PROVIDER: "scripted" }),
      cwd: workspace.dir,
      terminal: { input: Readable.from([]) },
    });
    expect(stderr.text).toBe("");
    expect(code).toBe(0);
    const lines = stdout.text.split("\n");
    expect(lines).toContain("you › watch the log");
    expect(lines).toContain("▸ log: chunks 12–14 · 1,500 lines · error 37");
    expect(stdout.text).not.toContain("secret-looking");
    // The recap shows what was said: the source's rotation and failure are not in it.
    expect(stdout.text).not.toContain("rotated");
  });
});
