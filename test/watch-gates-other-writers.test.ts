/**
 * The commentary gates cover every actor and process (issue 18, part 2): two writers on one real
 * SQLite store. Process A watches (a session watch beside a runtime that never runs a turn);
 * process B holds the continuity's lease and runs the turns (a server, `spool turn add`). B's run
 * in progress holds A's commentary back (`foreground-busy`), B's turn opens the quiet window, a
 * commentary after both sees B's conversation, and a run left open by a process whose lease
 * lapsed (it died) holds nothing back. A's own runtime knows none of it: the log tells.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type SessionWatch, startSessionWatch } from "../src/app/index.js";
import { DEFAULT_WATCH_SETTINGS } from "../src/frames/index.js";
import { type EventStore, openEventStore } from "../src/log/index.js";
import type { AgentRuntime, ThreadRunResult } from "../src/runtime/index.js";
import { answeringProvider, longRunRuntime } from "./support/continuity-run.js";
import { jpeg, nextEvent, scriptedVision } from "./support/watch-session-parts.js";

const CONTINUITY = "shared";
const TTL = 10_000;
let dir: string;
let leaseNow: number;
/** The time both processes' events are stamped with (and the frames' times are on). */
let now: number;
const T0 = 1_700_000_000_000;
let stores: EventStore[];
let runtimes: AgentRuntime[];
let session: SessionWatch | undefined;

/** A connection to the test's store, as another process would open it. */
async function connect(): Promise<EventStore> {
  const store = await openEventStore({
    db: join(dir, "store"),
    durability: "fast",
    leaseClock: () => leaseNow,
    defaults: { now: () => new Date(now).toISOString() },
  });
  stores.push(store);
  return store;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "spool-watch-writers-"));
  leaseNow = 1_000_000;
  now = T0;
  stores = [];
  runtimes = [];
});
afterEach(async () => {
  await session?.stop();
  session = undefined;
  await Promise.all(runtimes.map((runtime) => runtime.close()));
  await Promise.all(stores.map((store) => store.close()));
  rmSync(dir, { recursive: true, force: true });
});

/** B's model: each answer waits until the test lets it go (`release`). */
function heldModel() {
  const waiting: (() => void)[] = [];
  let started: (() => void) | undefined;
  const provider = answeringProvider(async (request) => {
    const said = JSON.stringify(request.messages.at(-1));
    await new Promise<void>((resolve) => {
      waiting.push(resolve);
      started?.();
    });
    return `<response>REPLY to ${said.match(/TURN-\d+/)?.[0] ?? "?"}</response>`;
  });
  return {
    provider,
    /** Resolves once a call waits. */
    called: () =>
      new Promise<void>((resolve) => {
        if (waiting.length > 0) resolve();
        else started = resolve;
      }),
    release: () => waiting.shift()?.(),
  };
}

describe("the commentary gates read every writer of the log", () => {
  it("hold for another process's run and turn, see its conversation, and not for a dead one's", async () => {
    const [a, b] = [await connect(), await connect()];
    const vision = scriptedVision();
    const watcherRuntime = longRunRuntime(
      a,
      answeringProvider(() => "<response>-</response>"),
    );
    const held = heldModel();
    const server = longRunRuntime(b, held.provider, {
      lease: { holder: "server", ttlMs: TTL, timer: () => ({ stop: () => undefined }) },
    });
    runtimes.push(watcherRuntime, server);
    session = await startSessionWatch({
      store: a,
      continuity: CONTINUITY,
      workspace: dir,
      env: {},
      settings: { settings: DEFAULT_WATCH_SETTINGS, migrated: [], source: { kind: "push" } },
      runtime: watcherRuntime,
      provider: vision.provider,
      model: "vision-small",
    });
    const push = session.push!;
    const frames = [await jpeg([200, 0, 0]), await jpeg([0, 0, 200])];
    let shown = 0;
    /** Pushes the next (alternating) frame at `at` and waits for the commentary loop's event. */
    const frameAt = async <T extends "commentary.added" | "commentary.skipped">(
      at: number,
      type: T,
    ) => {
      const after = await a.head();
      push.pushFrame({ data: frames[shown++ % 2]!, at });
      const event = await nextEvent(a, CONTINUITY, type, after);
      await session!.watch.idle();
      return event;
    };
    const submit = (text: string): Promise<ThreadRunResult> =>
      server.submit(CONTINUITY, { text, actor: "user:bo", origin: "http" });

    // The first frame: the start commentary, nobody talking.
    expect((await frameAt(T0, "commentary.skipped")).data.gate).toBe("skip");

    // B runs a turn and its model is still answering: A's commentary is held back.
    now = T0 + 20_000;
    const first = submit("TURN-1 hello from the server");
    await held.called();
    await nextEvent(a, CONTINUITY, "run.started");
    const busy = await frameAt(T0 + 40_000, "commentary.skipped");
    expect(busy.data.gate).toBe("foreground-busy");
    expect(watcherRuntime.activity(CONTINUITY)).toEqual({ busy: false });
    held.release();
    expect((await first).status).toBe("completed");

    // B's next turn, a second ago: the quiet window holds the commentary.
    now = T0 + 60_000;
    const second = submit("TURN-2 are you watching?");
    await held.called();
    held.release();
    expect((await second).status).toBe("completed");
    const quiet = await frameAt(T0 + 61_000, "commentary.skipped");
    expect(quiet.data.gate).toBe("quiet-window");

    // Past the window with nothing running: the commentary goes out and knows what B said.
    vision.comments.push("Yes, and the screen just went blue.");
    const said = await frameAt(T0 + 70_000, "commentary.added");
    expect(said.data.text).toBe("Yes, and the screen just went blue.");
    const request = JSON.stringify(vision.commentaryRequests.at(-1)!.messages);
    expect(request).toContain("User: TURN-2 are you watching?");
    expect(request).toContain("Assistant: REPLY to TURN-2");

    // B starts a run and dies (its lease is never renewed and lapses): nothing holds A back.
    now = T0 + 80_000;
    const third = submit("TURN-3 one more thing");
    await held.called();
    const turn3 = await nextEvent(a, CONTINUITY, "turn.added", said.seq);
    await nextEvent(a, CONTINUITY, "run.started", turn3.seq);
    // While its lease is live the open run holds the commentary back …
    expect((await frameAt(T0 + 100_000, "commentary.skipped")).data.gate).toBe("foreground-busy");
    // … once it lapsed, the run the log leaves open is a dead process's.
    leaseNow += TTL + 1;
    expect((await b.lease(CONTINUITY))?.live).toBe(false);
    vision.comments.push("Still blue.");
    const after = await frameAt(T0 + 120_000, "commentary.added");
    expect(after.data.text).toBe("Still blue.");
    held.release();
    await third.catch(() => undefined);
  }, 60_000);
});
