/**
 * Two `spool chat`s on one continuity, end to end: real processes on real pseudo-terminals
 * against a loopback OpenAI-compatible server, watched through what their screens show (cursor
 * movements and erasures applied, `screenOf`). The first chat owns the continuity (its lease);
 * the second follows it and queues its turns for it. The owner shows a queued turn on a line of
 * its own above its prompt, which comes back with what its user was typing; the follower shows
 * its turn once and the owner's answer as it streams; and when the owner is SIGKILLed, the
 * follower notices its lease lapse on its own and takes the run over, with nothing typed.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createWorkspace,
  eventsOf,
  hasScript,
  readEvents,
  type SpoolProcess,
  spoolOnPty,
  type Workspace,
} from "./support/cli-e2e.js";
import { openaiTextFrames } from "./support/openai-sse.js";
import { type ReplayServer, startReplayServer } from "./support/replay-server.js";

/** Each spool process loads the sources through tsx: seconds apiece on a busy machine. */
const PROCESSES_TIMEOUT = 150_000;
/** Short, so that a killed owner's lease lapses soon; renewed every third of it. */
const TTL_MS = 2_000;
const CONTINUITY = "shared";
const PROMPT = "you › ";
const FOLLOWING = /another process \(pid (\d+) on [^)]+\) is running this continuity; following/;

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** How many of `lines` contain `text`. */
const count = (lines: string[], text: string) => lines.filter((line) => line.includes(text)).length;

describe.skipIf(!hasScript)(
  "two spool chats on one continuity (needs util-linux `script`)",
  { timeout: PROCESSES_TIMEOUT },
  () => {
    let workspace: Workspace;
    let server: ReplayServer;
    const running: SpoolProcess[] = [];

    const chat = () => {
      const env = workspace.env({
        OPENAI_BASE_URL: `${server.url}/v1`,
        OPENAI_API_KEY: "sk-loopback-000000000000",
        SPOOL_MODEL: "loopback",
        SPOOL_LEASE_TTL_MS: String(TTL_MS),
      });
      const spool = spoolOnPty(["chat", "--continuity", CONTINUITY], { cwd: workspace.dir, env });
      running.push(spool);
      return spool;
    };
    /** The owner at its prompt, then a follower at its prompt. */
    const ownerAndFollower = async () => {
      const owner = chat();
      await owner.shows(PROMPT);
      const follower = chat();
      await follower.shows(FOLLOWING);
      await follower.shows(PROMPT);
      return { owner, follower };
    };

    beforeEach(async () => {
      workspace = createWorkspace("spool-chat-follow-");
      server = await startReplayServer();
    });

    afterEach(async () => {
      for (const spool of running.splice(0)) spool.kill();
      await server.close();
      workspace.remove();
    });

    it("shows a queued turn above the owner's prompt, and the follower its turn once, then the answer as it streams", async () => {
      const rest = deferred();
      server.respond({
        chunks: openaiTextFrames(["<response>Answer ", "to the ", "follower.</response>"]),
        // The last piece waits: both screens are read while the answer is still streaming.
        beforeChunk: (index) => (index === 3 ? rest.promise : undefined),
      });
      const { owner, follower } = await ownerAndFollower();

      owner.type("draft");
      await owner.showsOnScreen(/you › draft$/);
      follower.type("hello from the follower\r");
      await follower.showsOnScreen(/Answer to the$/m);
      await owner.showsOnScreen(/Answer to the$/m);

      // The owner: the turn on a line of its own, the prompt cleared from under it.
      let lines = owner.lines();
      expect(lines).toContainEqual(expect.stringMatching(/^› \S+: hello from the follower$/));
      expect(count(lines, "hello from the follower")).toBe(1);
      expect(count(lines, PROMPT.trim())).toBe(0);
      // The follower: its turn once, as typed at its prompt; the answer streaming below it.
      lines = follower.lines();
      expect(count(lines, "hello from the follower")).toBe(1);
      expect(lines).toContain("you › hello from the follower");

      rest.resolve();
      // Both prompts come back below the answer, the owner's with what its user was typing.
      await owner.showsOnScreen(/^Answer to the follower\.\n↳[^\n]*\nyou › draft$/m);
      await follower.showsOnScreen(/^Answer to the follower\.\n\s*↳[^\n]*\nyou ›$/m);
      lines = owner.lines();
      expect(count(lines, "hello from the follower")).toBe(1);
      expect(count(lines, "you ›")).toBe(1);
      expect(count(follower.lines(), "hello from the follower")).toBe(1);

      owner.type("\x15\x04"); // Ctrl-U clears the draft, Ctrl-D at the empty prompt exits
      follower.type("\x04");
      expect(await owner.exited).toMatchObject({ code: 0 });
      expect(await follower.exited).toMatchObject({ code: 0 });
      const events = await readEvents(workspace.dir, CONTINUITY);
      expect(eventsOf(events, "turn.added").map((event) => event.data.text)).toEqual([
        "hello from the follower",
      ]);
      expect(eventsOf(events, "run.completed").map((event) => event.data.status)).toEqual([
        "completed",
      ]);
      expect(server.requests).toHaveLength(1);
    });

    it("takes the run over when the owner dies, with nothing typed", async () => {
      const killed = deferred();
      const arrived = deferred();
      server.respond(
        {
          chunks: openaiTextFrames(["<response>Half an ", "answer</response>"]),
          // The owner dies in the middle of its answer.
          beforeChunk: (index) => {
            if (index !== 2) return;
            arrived.resolve();
            return killed.promise;
          },
        },
        { chunks: openaiTextFrames(["<response>The recovered ", "answer.</response>"]) },
      );
      const { follower } = await ownerAndFollower();
      const ownerPid = Number(FOLLOWING.exec(follower.plain())?.[1]);

      follower.type("a question\r");
      await arrived.promise;
      await follower.showsOnScreen(/Half an$/m);
      process.kill(ownerPid, "SIGKILL");
      killed.resolve();

      await follower.showsOnScreen(
        /is gone: its lease lapsed; taking over here\n(.*\n)*The recovered answer\.\n↳[^\n]*\nyou ›$/,
        30_000,
      );
      const lines = follower.lines();
      expect(count(lines, "a question")).toBe(1);
      expect(count(lines, "taking over here")).toBe(1);
      const takeover = lines.findIndex((line) => line.includes("taking over here"));
      expect(lines[takeover]).toMatch(
        new RegExp(`^the process running this continuity \\(pid ${ownerPid} on [^)]+\\) is gone`),
      );
      expect(lines.indexOf("Half an")).toBeLessThan(takeover);

      follower.type("\x04");
      expect(await follower.exited).toMatchObject({ code: 0 });
      const events = await readEvents(workspace.dir, CONTINUITY);
      expect(eventsOf(events, "turn.added").map((event) => event.data.text)).toEqual([
        "a question",
      ]);
      expect(eventsOf(events, "recovery.started")).toHaveLength(1);
      expect(eventsOf(events, "run.completed").at(-1)?.data.status).toBe("completed");
      expect(server.requests).toHaveLength(2);
    });
  },
);
