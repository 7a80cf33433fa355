/**
 * A commentary sees the recent conversation (issue 18, part 1): a session's watch gives its
 * commentary call the foreground thread's newest user and assistant messages from the log, as
 * text within a token budget: responses without thoughts, an earlier commentary as the agent's
 * own words, no image from an earlier turn (only the current frame), and nothing older than the
 * budget holds. Real SQLite store, real JPEG frames, scripted models.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runtimeWatchOf, type SessionWatch, startSessionWatch } from "../src/app/index.js";
import { DEFAULT_WATCH_SETTINGS } from "../src/frames/index.js";
import { createScriptedProvider, type ProviderRequest } from "../src/providers/index.js";
import { type AgentRuntime, ConversationTail } from "../src/runtime/index.js";
import { isEvent } from "../src/spec/index.js";
import { longRunRuntime, SMALL_MODEL } from "./support/continuity-run.js";
import { readAll, tempStore } from "./support/transcripts.js";
import { jpeg, nextEvent, scriptedVision } from "./support/watch-session-parts.js";

const CONTINUITY = "watching";
let temp: Awaited<ReturnType<typeof tempStore>>;
let workspace: string;
let runtime: AgentRuntime | undefined;
let session: SessionWatch | undefined;

beforeEach(async () => {
  temp = await tempStore("spool-watch-conversation-");
  workspace = mkdtempSync(join(tmpdir(), "spool-watch-conversation-ws-"));
});
afterEach(async () => {
  await session?.stop();
  await runtime?.close();
  session = undefined;
  runtime = undefined;
  await temp.cleanup();
  rmSync(workspace, { recursive: true, force: true });
});

const user = (text: string) => ({ text, actor: "user:ada", origin: "test" });

/** The text parts and the image parts of a request's user messages. */
function partsOf(request: ProviderRequest) {
  const texts: string[] = [];
  const images: string[] = [];
  for (const message of request.messages) {
    if (message.role !== "user") continue;
    if (typeof message.content === "string") texts.push(message.content);
    else {
      for (const part of message.content) {
        if (part.type === "text") texts.push(part.text);
        if (part.type === "image") images.push(part.artifact ?? part.data);
      }
    }
  }
  return { text: texts.join("\n"), images };
}

describe("a commentary's request", () => {
  it("holds the recent conversation as text, within its budget, and only the current frame", async () => {
    const vision = scriptedVision();
    const foreground = createScriptedProvider({
      model: SMALL_MODEL,
      script: [
        `<response>ANSWER-1 ${"long ".repeat(200)}end.</response>`,
        "<thought>SECRET-THINKING about arenas</thought><response>ANSWER-2 A red arena.</response>",
        "<response>ANSWER-3 Noted, keep going.</response>",
      ],
    });
    runtime = longRunRuntime(temp.store, foreground, {
      watch: runtimeWatchOf(
        () => session,
        () => undefined,
      ),
    });
    session = await startSessionWatch({
      store: temp.store,
      continuity: CONTINUITY,
      workspace,
      env: {},
      settings: { settings: DEFAULT_WATCH_SETTINGS, migrated: [], source: { kind: "push" } },
      runtime,
      provider: vision.provider,
      model: "vision-small",
      instructions: "You are Ada's gaming buddy.",
      conversationTokens: 120,
    });
    const red = await jpeg([220, 20, 20]);
    const blue = await jpeg([20, 20, 220]);
    const t0 = Date.now();

    // The first frame: a note and the start commentary, before anyone talked.
    vision.notes.push("A red arena.");
    vision.comments.push("Looks like a fight is starting. [[NOTE: fight starting]]");
    session.push!.pushFrame({ data: red, at: t0 });
    await nextEvent(temp.store, CONTINUITY, "commentary.added");
    await session.watch.idle();
    expect(partsOf(vision.commentaryRequests[0]!).text).not.toContain("Recent conversation");

    // A long turn (outside the budget later), a screen question (its frame attached), a short one.
    await runtime.submit(CONTINUITY, user(`TURN-1 my name is Ada ${"words ".repeat(200)}`));
    const asked = await runtime.submit(CONTINUITY, user("TURN-2 what's on my screen?"));
    expect(asked.status).toBe("completed");
    await runtime.submit(CONTINUITY, user("TURN-3 ok, watch the boss for me"));
    const events = await readAll(temp.store, CONTINUITY);
    const turns = events.filter((event) => isEvent(event, "turn.added"));
    const oldFrame = turns[1]!.data.attachments?.[0]?.hash;
    expect(oldFrame).toBe(session.watch.latest!.frame.hash);

    // A change well after the last turn: a commentary that sees the conversation.
    const lastTurnAt = Date.parse(turns.at(-1)!.ts);
    vision.notes.push("A blue arena, the boss appeared.");
    vision.comments.push("The boss is here!");
    const before = events.at(-1)!.seq;
    session.push!.pushFrame({ data: blue, at: Math.max(lastTurnAt, t0) + 60_000 });
    await nextEvent(temp.store, CONTINUITY, "commentary.added", before);
    await session.watch.idle();

    const request = vision.commentaryRequests.at(-1)!;
    const { text, images } = partsOf(request);
    expect(request.system).toContain("You are Ada's gaming buddy.");
    expect(text).toContain("Recent conversation:");
    const conversation = text.slice(text.indexOf("Recent conversation:"));
    // Oldest first, each speaker named; the agent's own commentary is its message.
    expect(conversation.indexOf("User: TURN-2 what's on my screen?")).toBeGreaterThan(0);
    expect(conversation.indexOf("Assistant: ANSWER-2 A red arena.")).toBeGreaterThan(
      conversation.indexOf("User: TURN-2"),
    );
    expect(conversation).toContain("User: TURN-3 ok, watch the boss for me");
    expect(conversation).toContain("Assistant: ANSWER-3 Noted, keep going.");
    // Thoughts are not conversation; the long first exchange is beyond the 120-token budget.
    expect(text).not.toContain("SECRET-THINKING");
    expect(text).not.toContain("TURN-1");
    expect(text).not.toContain("ANSWER-1");
    // The notes (the loops run side by side: this frame's own note may come after), and one
    // image: the current frame, never the screen question's older one.
    expect(text).toContain("A red arena.");
    const current = session.watch.latest!.frame.hash;
    expect(images).toEqual([current]);
    expect(current).not.toBe(oldFrame);
  }, 30_000);

  it("follows the log: a turn a run took, the commentary folded in, a long newest message cut to its end", async () => {
    const store = temp.store;
    const add = (type: string, data: unknown, stream?: { kind: string; id: string }) =>
      store.append({
        continuity: CONTINUITY,
        type,
        ...(stream ? { stream } : {}),
        ...(type === "turn.added" ? { actor: "user:ada", origin: "test" } : {}),
        data,
      } as never);
    const turn = await add("turn.added", { text: "hello there" });
    const thread = { kind: "thread", id: "th-1" };
    await add("thread.started", { directive: "keeper", chain_root: "th-1", turn: turn.id }, thread);
    await add(
      "run.started",
      { turn: turn.id, resumed: false, directive: "keeper", model: SMALL_MODEL, next_step: 0 },
      thread,
    );
    const tail = new ConversationTail({ store, continuity: CONTINUITY, maxTokens: 40 });
    expect(await tail.conversation()).toBe("User: hello there");
    expect((await tail.activity()).busy).toBe(true);
    await add("commentary.added", {
      text: "I see a menu.",
      trigger: "start",
      frame: { hash: "a".repeat(64), width: 64, height: 36, at: 1, source: "push" },
    });
    expect(await tail.conversation()).toBe("User: hello there\n\nAssistant: I see a menu.");
    const long = await add("turn.added", { text: `LONG ${"word ".repeat(400)}LAST-WORDS` });
    // A turn no run took yet is pending work, not yet a message of the thread.
    expect(await tail.conversation()).toBe("User: hello there\n\nAssistant: I see a menu.");
    await add(
      "run.completed",
      {
        turn: turn.id,
        status: "completed",
        steps: 0,
        usage: { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 },
        cost_usd: 0,
      },
      thread,
    );
    await add(
      "run.started",
      { turn: long.id, resumed: false, directive: "keeper", model: SMALL_MODEL, next_step: 0 },
      thread,
    );
    // The newest message alone is over the budget: its end is kept, marked as cut.
    const cut = await tail.conversation();
    expect(cut.startsWith("… ")).toBe(true);
    expect(cut.endsWith("LAST-WORDS")).toBe(true);
    expect(cut).not.toContain("hello there");
  });
});
