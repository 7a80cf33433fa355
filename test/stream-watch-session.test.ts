/**
 * A running session watches: an agent whose manifest has `watch: { source: … }` gets, beside its
 * runtime, the frame source → `watchFrames` → `StreamWatch` through the real OpenAI SDK against a
 * loopback server, on a real SQLite store. User turns see the rolling notes (in the step's
 * `context.feeds`) and no image; a screen question gets the latest frame attached on its
 * `turn.added` and sent as an image; a commentary becomes an assistant message of the thread the
 * next turn sees; the idle timer looks at the latest frame when no frame comes; the session's
 * close stops the watch.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type AgentSession, openAgentSession } from "../src/app/index.js";
import type { EventStore } from "../src/log/index.js";
import type { RunObserver } from "../src/runtime/index.js";
import { type EventOf, type EventType, isEvent, type SpoolEvent } from "../src/spec/index.js";
import { type LocalModelServer, startLocalModelServer } from "./support/local-model-server.js";
import { readAll, tempStore } from "./support/transcripts.js";

type Answer = { text: string; inputTokens: number };
let store: EventStore;
let cleanup: () => Promise<void>;
let workspace: string;
let server: LocalModelServer;
let session: AgentSession | undefined;
const notes: string[] = [];
const comments: string[] = [];
const replies: string[] = [];
const CONTINUITY = "watching";

beforeEach(async () => {
  ({ store, cleanup } = await tempStore("spool-watch-session-"));
  workspace = mkdtempSync(join(tmpdir(), "spool-watch-session-ws-"));
  mkdirSync(join(workspace, ".ai", "agents"), { recursive: true });
  mkdirSync(join(workspace, "home"), { recursive: true });
  notes.length = 0;
  comments.length = 0;
  replies.length = 0;
  server = await startLocalModelServer({
    kind: "plain",
    model: "vision-small",
    answer: (body): Answer => {
      const queue = body.includes("You take notes")
        ? notes
        : body.includes("You are watching the user's screen")
          ? comments
          : replies;
      return { text: queue.shift() ?? "[SKIP]", inputTokens: 20 };
    },
  });
});
afterEach(async () => {
  await session?.close();
  session = undefined;
  await server.close();
  await cleanup();
  rmSync(workspace, { recursive: true, force: true });
});

/** A real 64×36 JPEG of one colour. */
function jpeg(rgb: [number, number, number]): Promise<Buffer> {
  const [r, g, b] = rgb;
  return sharp({ create: { width: 64, height: 36, channels: 3, background: { r, g, b } } })
    .jpeg()
    .toBuffer();
}

/** Resolves with the first event of `type` after `after` (by seq) that `match` accepts. */
async function until<T extends EventType>(
  type: T,
  after = 0,
  match: (event: EventOf<T>) => boolean = () => true,
): Promise<EventOf<T>> {
  const stop = new AbortController();
  for await (const message of store.subscribe({
    continuity: CONTINUITY,
    types: [type],
    signal: stop.signal,
  })) {
    if (message.type !== "event") continue;
    const { event } = message;
    if (event.seq > after && isEvent(event, type) && match(event)) {
      stop.abort();
      return event;
    }
  }
  throw new Error(`the log ended without ${type}`);
}

/** The chat requests of the agent's own turns (not the watch's), as parsed bodies. */
function agentRequests(): { messages: { role: string; content: unknown }[] }[] {
  return server.requests
    .filter((request) => request.path === "/v1/chat/completions")
    .map((request) => JSON.parse(request.body))
    .filter(
      (body) =>
        !JSON.stringify(body).includes("You take notes") &&
        !JSON.stringify(body).includes("You are watching the user's screen"),
    );
}

function open(manifest: string, observer?: RunObserver): AgentSession {
  writeFileSync(join(workspace, ".ai", "agents", "watcher.yaml"), manifest);
  let tick: (() => void) | undefined;
  session = openAgentSession(
    {
      workspace,
      env: { OPENAI_BASE_URL: server.baseURL, SPOOL_MODEL: "vision-small" },
      store,
      continuity: CONTINUITY,
      onWatchError: (error) => {
        throw error;
      },
    },
    {
      agent: "watcher",
      home: join(workspace, "home"),
      ...(observer ? { observer } : {}),
      watchTimer: (_every, fire) => {
        tick = fire;
        return () => {
          tick = undefined;
        };
      },
    },
  );
  expect(tick).toBeUndefined();
  return session;
}

const user = (text: string) => ({ text, actor: "user:test", origin: "cli" });

describe("a session with a watch: source", () => {
  it("notes frames, shows the notes to user turns, attaches the frame to a screen question, and folds commentary into the thread", async () => {
    const current = open("directive: assistant\nwatch:\n  source: { push: true }\n");
    const watch = await current.watch;
    expect(watch?.push).toBeDefined();
    const red = await jpeg([220, 20, 20]);
    const blue = await jpeg([20, 20, 220]);
    // Frame times share the store's clock, as a live source's do: the quiet window compares them
    // with when the last turn was logged.
    const t0 = Date.now();

    notes.push("A red screen with nothing on it.");
    comments.push("[SKIP]");
    watch!.push!.pushFrame({ data: red, at: t0 });
    const firstNote = await until("note.added");
    expect(firstNote.data).toMatchObject({
      text: "A red screen with nothing on it.",
      trigger: "first",
    });
    await until("commentary.skipped", 0, (event) => event.data.gate === "skip");
    await watch!.watch.idle();

    // A turn that asks nothing of the screen: the notes, no image.
    replies.push("<response>Hello.</response>");
    const hello = await current.runtime.submit(CONTINUITY, user("hello there"));
    expect(hello.status).toBe("completed");
    const [first] = agentRequests();
    expect(JSON.stringify(first)).toContain("A red screen with nothing on it.");
    expect(JSON.stringify(first)).not.toContain("image_url");

    // A change: a new note, and a commentary that goes out (no run, no quiet window).
    notes.push("The screen turned blue.");
    comments.push("Oh, the screen just went blue.");
    const before = (await readAll(store, CONTINUITY)).at(-1)!.seq;
    watch!.push!.pushFrame({ data: blue, at: t0 + 21_000 });
    await until("note.added", before);
    const said = await until("commentary.added", before);
    expect(said.data.text).toBe("Oh, the screen just went blue.");
    await watch!.watch.idle();

    // A screen question: the latest frame is attached on the turn and sent as an image; the
    // thread history holds what the agent said on its own.
    replies.push("<response>A blue screen.</response>");
    const asked = await current.runtime.submit(CONTINUITY, user("What's on my screen?"));
    expect(asked.status).toBe("completed");
    const events = await readAll(store, CONTINUITY);
    const turns = events.filter((event): event is EventOf<"turn.added"> =>
      isEvent(event, "turn.added"),
    );
    expect(turns[0]!.data.attachments).toBeUndefined();
    const latest = watch!.watch.latest!.frame;
    expect(turns[1]!.data.attachments).toEqual([
      { hash: latest.hash, size: latest.bytes, media_type: "image/jpeg", name: "screen" },
    ]);
    expect(await store.artifacts.has(latest.hash)).toBe(true);
    const second = agentRequests()[1]!;
    const text = JSON.stringify(second);
    expect(text).toContain("The screen turned blue.");
    expect(text).toContain(`data:image/jpeg;base64,${blue.toString("base64").slice(0, 40)}`);
    const assistant = second.messages.filter((message) => message.role === "assistant");
    expect(JSON.stringify(assistant)).toContain("Oh, the screen just went blue.");
    const feeds = events.filter((event) => isEvent(event, "context.feeds"));
    expect(feeds.length).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(feeds.at(-1)!.data)).toContain("The screen turned blue.");

    // No frame comes (a static screen): the idle look notes the latest frame again.
    notes.push("Still the blue screen, nothing moves.");
    await watch!.tick(t0 + 21_000 + 30_000);
    await watch!.watch.idle();
    const idle = (await readAll(store, CONTINUITY)).filter(
      (event): event is EventOf<"note.added"> => isEvent(event, "note.added"),
    );
    expect(idle.at(-1)!.data).toMatchObject({
      text: "Still the blue screen, nothing moves.",
      trigger: "idle",
    });

    await current.close();
    session = undefined;
    const all: SpoolEvent[] = await readAll(store, CONTINUITY);
    const stopped = all.filter((event) => isEvent(event, "watch.stopped"));
    expect(stopped).toHaveLength(1);
  }, 20_000);

  it("a screen question asked as the session opens (spool run --prompt) gets the directory's frame, and the close stops the watch", async () => {
    mkdirSync(join(workspace, "frames"));
    const green = await jpeg([20, 200, 20]);
    writeFileSync(join(workspace, "frames", "001.jpg"), green);
    notes.push("A green screen.");
    replies.push("<response>Green.</response>");
    const current = open("directive: assistant\nwatch:\n  source: { directory: ./frames }\n");
    const asked = await current.runtime.submit(CONTINUITY, user("what's on screen?"));
    expect(asked.status).toBe("completed");
    const turn = (await readAll(store, CONTINUITY)).find((event): event is EventOf<"turn.added"> =>
      isEvent(event, "turn.added"),
    )!;
    expect(turn.data.attachments?.[0]?.media_type).toBe("image/jpeg");
    expect(JSON.stringify(agentRequests()[0])).toContain(
      `data:image/jpeg;base64,${green.toString("base64").slice(0, 40)}`,
    );
    await current.close();
    session = undefined;
    const events = await readAll(store, CONTINUITY);
    expect(events.filter((event) => isEvent(event, "watch.stopped"))).toHaveLength(1);
    expect(events.filter((event) => isEvent(event, "watch.started"))).toHaveLength(1);
  });

  it("the commentary gates read the session: busy while a run goes, the quiet window from the turn", async () => {
    const seen: boolean[] = [];
    let current: AgentSession | undefined;
    const observer: RunObserver = (notice) => {
      if (notice.type === "run-started") seen.push(current!.runtime.activity(CONTINUITY).busy);
    };
    current = open("directive: assistant\nwatch:\n  source: { push: true }\n", observer);
    expect(current.runtime.activity(CONTINUITY)).toEqual({ busy: false });
    replies.push("<response>Hi.</response>");
    const before = Date.now();
    await current.runtime.submit(CONTINUITY, user("hello"));
    expect(seen).toEqual([true]);
    const after = current.runtime.activity(CONTINUITY);
    expect(after.busy).toBe(false);
    expect(after.lastTurnAt).toBeGreaterThanOrEqual(before - 1_000);
  });

  it("names the field of a bad source", async () => {
    expect(() =>
      open("directive: assistant\nwatch:\n  source: { directory: ./frames, fps: 2 }\n"),
    ).toThrow(/watch\.source.*fps/);
    expect(() => open("directive: assistant\nwatch:\n  source: { video: '' }\n")).toThrow(
      /watch\.source\.video/,
    );
    expect(() => open("directive: assistant\nwatch:\n  source: { camera: 1 }\n")).toThrow(
      /watch\.source: must be a mapping with exactly one of video, directory, screencast, push/,
    );
  });
});
