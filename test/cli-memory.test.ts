import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runSpool } from "./support/cli.js";
import {
  continuityStart,
  pinEvent,
  summaryEvent,
  unpinEvent,
  write,
} from "./support/memory-log.js";
import { useTempStore } from "./support/transcripts.js";

const temp = useTempStore("spool-memory-cli-");
const spool = (args: string[]) =>
  runSpool([...args, "--db", join(temp.dir, "store")], { cwd: temp.dir });

describe("spool memory", () => {
  it("searches the store's summaries and facts, scoped by actor, and rebuilds the index from the log", async () => {
    await write(temp.store, [
      ...continuityStart("infra", "ana"),
      summaryEvent(
        "infra",
        "th-1",
        "s1",
        "Moved the staging cluster to Frankfurt; DNS cut over on Friday.",
      ),
      pinEvent("infra", "p1", "Staging runs on three nodes."),
      ...continuityStart("garden", "bo"),
      summaryEvent("garden", "th-2", "s2", "Planted the staging beds for tomatoes."),
    ]);
    const table = await spool(["memory", "search", "where", "is", "staging?"]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/KIND/);
    expect(table.stdout).toContain("Frankfurt");
    expect(existsSync(join(temp.dir, "store", "spool.memory.db"))).toBe(true);

    const json = await spool([
      "memory",
      "search",
      "staging",
      "--actor",
      "ana",
      "--json",
      "--limit",
      "10",
    ]);
    const hits = json.stdout
      .trim()
      .split("\n")
      .map(
        (line) =>
          JSON.parse(line) as { continuity: string; kind: string; rank: number; ranking: string },
      );
    expect(hits.map((hit) => hit.continuity)).toEqual(["infra", "infra"]);
    expect(hits.map((hit) => hit.rank)).toEqual([1, 2]);
    expect(hits[0]!.ranking).toBe("fts");

    await write(temp.store, [unpinEvent("infra", "p1")]);
    const after = await spool(["memory", "search", "three nodes", "--json"]);
    expect(after).toMatchObject({ code: 1, stdout: "" });

    const rebuilt = await spool(["memory", "reindex"]);
    expect(rebuilt).toMatchObject({ code: 0 });
    expect(rebuilt.stdout).toMatch(/^Reindexed 2 entries up to log position \d+\.\n$/);

    const odd = await spool(["memory", "search", '"NEAR(', "*", "OR"]);
    expect(odd.code).toBe(1);
    expect(odd.stderr).toMatch(/Nothing in memory matches/);

    const bad = await spool(["memory", "search", "x", "--limit", "0"]);
    expect(bad.code).toBe(2);
    const missing = await runSpool(["memory", "search", "x", "--db", join(temp.dir, "nowhere")], {
      cwd: temp.dir,
    });
    expect(missing.code).toBe(1);
    expect(existsSync(join(temp.dir, "nowhere"))).toBe(false);
  });

  it("counts a person who pinned a fact by hand among a continuity's actors", async () => {
    await write(temp.store, [
      ...continuityStart("ops", "bo"),
      { ...pinEvent("ops", "p9", "The staging database lives on db-staging-7."), actor: "cy" },
      // A pin the model made names no person: it makes nobody an actor.
      {
        continuity: "ops",
        type: "context.pinned",
        actor: "dee",
        data: { id: "p10", kind: "fact", text: "The staging cache is warm.", by: "th-1" },
      },
    ]);
    const mine = await spool([
      "memory",
      "search",
      "staging",
      "database",
      "--actor",
      "cy",
      "--json",
    ]);
    expect(mine.code).toBe(0);
    expect(mine.stdout).toContain("db-staging-7");
    const theirs = await spool(["memory", "search", "staging", "--actor", "dee", "--json"]);
    expect(theirs).toMatchObject({ code: 1, stdout: "" });
  });
});
