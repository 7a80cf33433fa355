/**
 * A session with a stream watch replays exactly from its log (issue 18, part 4): an agent whose
 * manifest watches a directory of real JPEGs, notes and commentary answered by a scripted
 * loopback model, user turns that see the notes, a screen question with the frame attached, and
 * a commentary folded into the thread. Replay re-derives every decision of the runtime in a
 * closed world and calls no model: not the agent's, and not the vision model (the watch's notes,
 * compactions and commentary are served from the log, never asked again).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type AgentSession, openAgentSession } from "../src/app/index.js";
import type { EventStore } from "../src/log/index.js";
import { replayContinuity } from "../src/replay/index.js";
import { isEvent } from "../src/spec/index.js";
import { type LocalModelServer, startLocalModelServer } from "./support/local-model-server.js";
import { readAll, tempStore } from "./support/transcripts.js";
import { jpeg, nextEvent } from "./support/watch-session-parts.js";

const CONTINUITY = "watched";
let temp: Awaited<ReturnType<typeof tempStore>>;
let workspace: string;
let server: LocalModelServer;
let session: AgentSession | undefined;
const notes: string[] = [];
const comments: string[] = [];
const replies: string[] = [];

beforeEach(async () => {
  temp = await tempStore("spool-replay-watch-");
  workspace = mkdtempSync(join(tmpdir(), "spool-replay-watch-ws-"));
  mkdirSync(join(workspace, ".ai", "agents"), { recursive: true });
  mkdirSync(join(workspace, "home"), { recursive: true });
  mkdirSync(join(workspace, "frames"));
  server = await startLocalModelServer({
    kind: "plain",
    model: "vision-small",
    answer: (body) => {
      const queue = body.includes("You take notes")
        ? notes
        : body.includes("You are watching the user's screen")
          ? comments
          : body.includes("running summary")
            ? ["a summary"]
            : replies;
      return { text: queue.shift() ?? "[SKIP]", inputTokens: 30 };
    },
  });
});
afterEach(async () => {
  await session?.close();
  session = undefined;
  await server.close();
  await temp.cleanup();
  rmSync(workspace, { recursive: true, force: true });
});

const env = () => ({ OPENAI_BASE_URL: server.baseURL, SPOOL_MODEL: "vision-small" });

function open(store: EventStore, extra: Parameters<typeof openAgentSession>[1] = {}) {
  return openAgentSession(
    { workspace, env: env(), store, continuity: CONTINUITY },
    {
      agent: "watcher",
      home: join(workspace, "home"),
      watchTimer: () => () => undefined,
      ...extra,
    },
  );
}

const user = (text: string) => ({ text, actor: "user:ada", origin: "cli" });

describe("a session with a watch", () => {
  it("replays identically from its log, with no model called again", async () => {
    writeFileSync(
      join(workspace, ".ai", "agents", "watcher.yaml"),
      "directive: assistant\nwatch:\n  source: { directory: ./frames }\n",
    );
    writeFileSync(join(workspace, "frames", "001.jpg"), await jpeg([200, 20, 20]));
    writeFileSync(join(workspace, "frames", "002.jpg"), await jpeg([20, 20, 200]));
    notes.push("A red screen.", "A blue screen now.");
    comments.push("The screen is red. [[NOTE: red start]]", "[SKIP]");
    replies.push(
      "<response>Hello Ada.</response>",
      "<thought>look at the frame</thought><response>A blue screen.</response>",
    );
    // Frame times 20 s apart (the directory is read at once): each frame gets its own look.
    let clock = Date.UTC(2026, 0, 1);
    session = open(temp.store, { watchClock: () => (clock += 20_000) });
    const watch = await session.watch;
    expect(watch).toBeDefined();
    // Both frames are read and looked at before anyone talks.
    await watch!.done;
    await watch!.watch.idle();
    await nextEvent(temp.store, CONTINUITY, "commentary.added");
    expect((await session.runtime.submit(CONTINUITY, user("hello"))).status).toBe("completed");
    const asked = await session.runtime.submit(CONTINUITY, user("what's on my screen?"));
    expect(asked.status).toBe("completed");
    await session.close();
    session = undefined;

    const events = await readAll(temp.store, CONTINUITY);
    const types = new Set(events.map((event) => event.type));
    for (const type of ["note.added", "commentary.added", "context.feeds", "watch.stopped"]) {
      expect(types.has(type), type).toBe(true);
    }
    const turn = events.filter((event) => isEvent(event, "turn.added")).at(-1)!;
    expect(JSON.stringify(turn.data)).toContain('"name":"screen"');
    const feeds = events.filter((event) => isEvent(event, "context.feeds"));
    expect(JSON.stringify(feeds.at(-1)!.data)).toContain("A blue screen now.");

    const calls = server.requests.length;
    const report = await replayContinuity({
      source: temp.store,
      continuity: CONTINUITY,
      stallMs: 5_000,
      makeRuntime: ({ store, world }) => {
        const replayed = open(store, { provider: world.provider, world });
        expect(replayed.watch).toBeUndefined();
        return replayed.runtime;
      },
    });
    expect(report.difference).toBeUndefined();
    expect(report).toMatchObject({ identical: true, reached: [] });
    expect(report.compared).toBeGreaterThan(0);
    expect(server.requests.length, "replay must call no model").toBe(calls);
  }, 60_000);
});
