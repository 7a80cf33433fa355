/**
 * A follower takes over a continuity as soon as its owner closes normally, not when the owner's
 * lease would have lapsed: the owner logs `runtime.closed` and releases its lease at `close`, and
 * the follower's lease watch reads the lease again on that event. The lease lives 10 minutes and
 * nobody renews or expires it here, so only a release can let the follower in. On SQLite (two
 * connections to one file) and on PostgreSQL.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, inject, it } from "vitest";
import { ChatLead } from "../src/cli/commands/chat-lead.js";
import { createContext } from "../src/cli/context.js";
import { type EventStore, openEventStore } from "../src/log/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import { type AgentSpec, ContinuityLiveError, createAgentRuntime } from "../src/runtime/index.js";
import { createTestDatabase } from "./support/postgres-server.js";

const TTL_MS = 10 * 60_000;
const continuity = "home";

const agent: AgentSpec = {
  directive: "tester",
  instructions: "Test things.",
  model: "claude-sonnet-4-5",
  limits: {},
  permits: () => true,
  tools: [],
};

/** A lease renewal timer that never fires: the lease lives its whole ten minutes. */
const noRenewal = () => ({ stop: () => {} });

function runtimeOver(store: EventStore, holder: string, script: string[]) {
  return createAgentRuntime({
    store,
    provider: createScriptedProvider({ model: "claude-sonnet-4-5", script }),
    agent,
    lease: { holder, ttlMs: TTL_MS, timer: noRenewal },
  });
}

let dir: string;
let stores: EventStore[];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "spool-lead-close-"));
  stores = [];
});
afterEach(async () => {
  await Promise.all(stores.map((store) => store.close()));
  rmSync(dir, { recursive: true, force: true });
});

const locations = {
  sqlite: async () => join(dir, "store"),
  postgres: async () => createTestDatabase(inject("postgresUrl")),
};

describe.each(Object.entries(locations))("on %s", (_kind, location) => {
  it("a following chat takes the continuity over once its owner closes, long before the lease lapses", async () => {
    const db = await location();
    const connect = async () => {
      const store = await openEventStore({ db, durability: "fast", env: {} });
      stores.push(store);
      return store;
    };
    const [a, b] = [await connect(), await connect()];
    const owner = runtimeOver(a, "owner", ["<response>one</response>"]);
    expect(
      (await owner.submit(continuity, { text: "hi", actor: "ada", origin: "test" })).status,
    ).toBe("completed");

    // The second process waits: its chat follows the owner and watches its lease.
    const follower = runtimeOver(b, "follower", ["<response>two</response>"]);
    await expect(follower.resume(continuity)).rejects.toBeInstanceOf(ContinuityLiveError);
    const lines: string[] = [];
    let tookOver: () => void = () => {};
    const takeover = new Promise<void>((resolve) => {
      tookOver = resolve;
    });
    const output = { write: () => true };
    const lead = new ChatLead({
      ctx: createContext({ stdout: output, stderr: output, env: {}, cwd: dir }),
      store: b,
      continuity,
      runtime: follower,
      write: () => {},
      say: {
        info: (line) => {
          lines.push(line);
          if (line.includes("taking over here")) tookOver();
        },
        error: (line) => lines.push(`error: ${line}`),
      },
    });
    expect(await lead.lead()).toBe(false);
    expect(lead.following).toBe(true);
    expect((await b.lease(continuity))?.live).toBe(true);

    // The owner ends normally: it logs its close and releases the lease.
    await owner.close();
    await takeover;
    // The takeover that began there is the one this call shares: it resumed the continuity.
    expect(await lead.lead()).toBe(true);
    expect(lead.following).toBe(false);
    expect(await b.lease(continuity)).toMatchObject({ holder: "follower", live: true });
    expect(lines.at(-1)).toBe(
      "the process running this continuity (owner) ended; taking over here",
    );

    // The follower runs the continuity now: its turn runs here.
    expect(
      (await follower.submit(continuity, { text: "again", actor: "ada", origin: "test" })).status,
    ).toBe("completed");
    await lead.close();
    await follower.close();
    const types: string[] = [];
    for await (const event of b.read({ continuity })) types.push(event.type);
    expect(types.filter((type) => type === "runtime.closed")).toHaveLength(2);
    expect(types.filter((type) => type === "recovery.started")).toHaveLength(1);
  }, 30_000);
});
