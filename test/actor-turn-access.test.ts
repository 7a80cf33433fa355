/**
 * Actors and turns: an actor added read-only, removed, or not on a continuity's access list
 * cannot add turns, in the runtime (`submit`) and through the CLI (`spool turn add`, `spool run`,
 * `spool chat`), with a typed error and nothing appended; `spool actors` manages the list.
 */
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { main } from "../src/cli/main.js";
import type { EventStore } from "../src/log/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import {
  ActorAccessError,
  applyActorEvent,
  createAgentRuntime,
  emptyActorRoster,
  turnRefusal,
} from "../src/runtime/index.js";
import type { NewEvent, SpoolEvent } from "../src/spec/index.js";
import { memoryOutput, runSpool } from "./support/cli.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const temp = useTempStore("spool-actors-");
const MODEL = "claude-sonnet-4-5";

const created = (continuity: string, actor: string): NewEvent => ({
  continuity,
  type: "continuity.created",
  actor,
  origin: "test",
  data: { title: "Shared" },
});
const added = (continuity: string, id: string, access: "owner" | "write" | "read"): NewEvent => ({
  continuity,
  type: "actor.added",
  actor: "ada",
  origin: "test",
  data: { actor_id: id, kind: "person", access },
});
const removed = (continuity: string, id: string): NewEvent => ({
  continuity,
  type: "actor.removed",
  actor: "ada",
  origin: "test",
  data: { actor_id: id, reason: "left" },
});

/** A continuity created by ada, with bob writing, rita reading and carl removed. */
async function sharedContinuity(store: EventStore, continuity = "shared"): Promise<void> {
  await store.append(created(continuity, "ada"));
  await store.append(added(continuity, "bob", "write"));
  await store.append(added(continuity, "rita", "read"));
  await store.append(added(continuity, "carl", "write"));
  await store.append(removed(continuity, "carl"));
}

const roster = (events: NewEvent[]) => {
  const folded = emptyActorRoster();
  for (const event of events) applyActorEvent(folded, event as SpoolEvent);
  return folded;
};

describe("turnRefusal", () => {
  it("keeps a continuity open until an actor is added, then refuses read-only, removed and unknown actors", () => {
    const open = roster([created("c", "ada")]);
    expect(turnRefusal(open, "ada")).toBeUndefined();
    expect(turnRefusal(open, "anyone")).toBeUndefined();

    const listed = roster([
      created("c", "ada"),
      added("c", "bob", "write"),
      added("c", "olga", "owner"),
      added("c", "rita", "read"),
      added("c", "carl", "write"),
      removed("c", "carl"),
    ]);
    expect(turnRefusal(listed, "ada")).toBeUndefined();
    expect(turnRefusal(listed, "bob")).toBeUndefined();
    expect(turnRefusal(listed, "olga")).toBeUndefined();
    expect(turnRefusal(listed, "rita")).toBe("read-only");
    expect(turnRefusal(listed, "carl")).toBe("removed");
    expect(turnRefusal(listed, "mallory")).toBe("unknown");

    // Added again, with write access, carl may; the creator removed may not.
    const later = roster([
      created("c", "ada"),
      added("c", "carl", "write"),
      removed("c", "carl"),
      added("c", "carl", "write"),
      removed("c", "ada"),
    ]);
    expect(turnRefusal(later, "carl")).toBeUndefined();
    expect(turnRefusal(later, "ada")).toBe("removed");
    // A read-only actor removed is removed.
    expect(turnRefusal(roster([added("c", "rita", "read"), removed("c", "rita")]), "rita")).toBe(
      "removed",
    );
  });
});

describe("the runtime's submit", () => {
  it("refuses each actor the list refuses with ActorAccessError, appending nothing, and runs the others", async () => {
    const { store } = temp;
    await sharedContinuity(store);
    const runtime = createAgentRuntime({
      store,
      provider: createScriptedProvider({
        model: MODEL,
        script: ["<response>ok</response>", "<response>ok</response>"],
      }),
      agent: {
        directive: "t",
        instructions: "Answer.",
        model: MODEL,
        limits: {},
        permits: () => true,
        tools: [],
      },
    });
    try {
      const before = (await readAll(store, "shared")).length;
      for (const [actor, reason] of [
        ["rita", "read-only"],
        ["carl", "removed"],
        ["mallory", "unknown"],
      ] as const) {
        const error = await runtime
          .submit("shared", { text: `from ${actor}`, actor, origin: "test" })
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(ActorAccessError);
        expect(error).toMatchObject({ code: `actor.${reason}`, reason, actor });
      }
      expect(await readAll(store, "shared")).toHaveLength(before);

      const result = await runtime.submit("shared", { text: "hi", actor: "bob", origin: "test" });
      expect(result.status).toBe("completed");
      // An actor added later, while the runtime runs, is seen at its next turn.
      await store.append(added("shared", "mallory", "write"));
      await store.append(removed("shared", "bob"));
      const second = await runtime.submit("shared", {
        text: "me now",
        actor: "mallory",
        origin: "test",
      });
      expect(second.status).toBe("completed");
      await expect(
        runtime.submit("shared", { text: "again", actor: "bob", origin: "test" }),
      ).rejects.toMatchObject({ code: "actor.removed" });
      const turns = (await readAll(store, "shared")).filter((event) => event.type === "turn.added");
      expect(turns.map((event) => event.actor)).toEqual(["bob", "mallory"]);
    } finally {
      await runtime.close();
    }
  });
});

describe("through the CLI", () => {
  const db = () => join(temp.dir, "store");
  const spool = (args: string[], user = "ada") =>
    runSpool([...args, "--db", db()], { cwd: temp.dir, env: { USER: user } });

  it("spool actors adds and removes as an owner, lists, and spool turn add refuses as the runtime does", async () => {
    await temp.store.append(created("home", "ada"));
    await temp.store.flush();
    // Open until an actor is added: anyone adds a turn.
    expect(await spool(["turn", "add", "home", "--actor", "zoe", "hello"])).toMatchObject({
      code: 0,
    });
    expect((await spool(["actors", "home"])).stdout).toContain(
      "No access list yet: any actor adds turns until one is added",
    );

    expect((await spool(["actors", "add", "home", "bob"])).code).toBe(0);
    expect((await spool(["actors", "add", "home", "rita", "--access", "read"])).code).toBe(0);
    expect((await spool(["actors", "add", "home", "carl"])).code).toBe(0);
    expect((await spool(["actors", "remove", "home", "carl", "--reason", "left"])).code).toBe(0);
    const notOwner = await spool(["actors", "add", "home", "eve"], "bob");
    expect(notOwner.code).toBe(1);
    expect(notOwner.stderr).toContain('actor "bob" does not own continuity "home"');
    const badAccess = await spool(["actors", "add", "home", "eve", "--access", "admin"]);
    expect(badAccess.code).toBe(2);
    expect(badAccess.stderr).toContain("--access must be one of owner, write, read");

    const listed = await spool(["actors", "home", "--json"]);
    expect(
      listed.stdout
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line)),
    ).toEqual([
      { actor: "ada", access: "owner", creator: true },
      { actor: "bob", access: "write", creator: false },
      { actor: "rita", access: "read", creator: false },
      { actor: "carl", access: "removed", creator: false },
    ]);

    const before = (await readAll(temp.store, "home")).length;
    for (const [actor, what] of [
      ["rita", "it was added read-only"],
      ["carl", "it was removed from it"],
      ["zoe", "it is not on its access list"],
    ]) {
      const refused = await spool(["turn", "add", "home", "--actor", actor!, "let me in"]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        `spool: actor "${actor}" may not add turns to continuity "home": ${what}`,
      );
      expect(refused.stderr).toContain("spool actors");
    }
    expect(await readAll(temp.store, "home")).toHaveLength(before);
    expect(await spool(["turn", "add", "home", "--actor", "bob", "hi"])).toMatchObject({
      code: 0,
    });
    expect(await spool(["turn", "add", "home", "hi"])).toMatchObject({ code: 0 });
  });

  it("spool run and spool chat refuse a read-only actor before anything runs", async () => {
    await sharedContinuity(temp.store);
    await temp.store.flush();
    const before = (await readAll(temp.store, "shared")).length;
    const ran = await spool(["run", "demo", "--continuity", "shared"], "rita");
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('actor "rita" may not add turns to continuity "shared"');

    const input = new PassThrough();
    input.end("hello\n");
    const stdout = memoryOutput();
    const stderr = memoryOutput();
    const chatted = await main(["chat", "--continuity", "shared", "--db", db()], {
      stdout,
      stderr,
      env: { USER: "carl" },
      cwd: temp.dir,
      terminal: { input },
    });
    expect(chatted).toBe(1);
    expect(stderr.text).toContain('actor "carl" may not add turns to continuity "shared"');
    expect(await readAll(temp.store, "shared")).toHaveLength(before);
  });
});
