/**
 * `spool sources`: where each source of a continuity stands, read from the log alone. A real
 * file source runs through its runner into a real store; the file then grows beyond what was
 * read, and the command shows the chunks logged, those not yet given to the agent, and the bytes
 * written but unread.
 */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openEventStore } from "../src/log/index.js";
import {
  checkSourceEntry,
  createFileSource,
  sourceEntryOf,
  startSourceRunner,
} from "../src/sources/index.js";
import { runSpool } from "./support/cli.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "spool-cli-sources-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const lines = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => `line ${from + i} ERROR maybe\n`).join("");

describe("spool sources", () => {
  it("shows each source's kind, target, chunks, cursor and lag, and the same as JSON", async () => {
    const db = join(dir, "log");
    const path = join(dir, "app.log");
    writeFileSync(path, lines(1, 1_200));
    const checked = checkSourceEntry({
      id: "app",
      kind: "file",
      target: "app.log",
      batch: { max_lines: 500, max_wait_ms: 10 },
      patterns: { error: "ERROR" },
    });
    const definition = checked.definition!;
    const store = await openEventStore({ db, env: {} });
    try {
      await store.append({
        continuity: "watch",
        stream: { kind: "source", id: "app" },
        type: "source.added",
        data: { source_id: "app", definition: sourceEntryOf(definition), by: "manifest" },
      });
      let seen = 0;
      let all: () => void = () => {};
      const logged = new Promise<void>((resolve) => {
        all = resolve;
      });
      const runner = startSourceRunner({
        store,
        continuity: "watch",
        source: createFileSource(definition, { path }),
        position: { chunks: 0, cursor: undefined },
        appended: (event) => {
          if (event.type !== "source.chunk") return;
          seen += (event.data as { line_count: number }).line_count;
          if (seen === 1_200) all();
        },
      });
      await logged;
      await runner.stop();
    } finally {
      await store.close();
    }
    appendFileSync(path, lines(1_201, 10));

    const table = await runSpool(["sources", "watch", "--db", db], { cwd: dir });
    expect(table.code).toBe(0);
    const row = table.stdout.split("\n").find((line) => line.startsWith("app "));
    expect(row).toBeDefined();
    expect(row).toMatch(/file\s+app\.log\s+active\s+3\s/);
    // Nothing was delivered to an agent yet, and ten lines were written after the reading.
    const unread = lines(1_201, 10).length;
    expect(row).toContain(`3 chunks, ${unread} B unread`);

    const json = await runSpool(["sources", "watch", "--json", "--db", db], { cwd: dir });
    const [parsed] = json.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(parsed).toMatchObject({
      id: "app",
      kind: "file",
      status: "active",
      chunks: 3,
      lines: 1_200,
      bytes: lines(1, 1_200).length,
      delivered: 0,
      undelivered: 3,
      unread_bytes: unread,
      matches: { error: 1_200 },
    });
    expect(parsed.cursor.offset).toBe(lines(1, 1_200).length);
  });

  it("says how to declare sources when a continuity has none", async () => {
    const db = join(dir, "log");
    const store = await openEventStore({ db, env: {} });
    await store.append({
      continuity: "plain",
      type: "turn.added",
      actor: "ada",
      origin: "test",
      data: { text: "hi" },
    });
    await store.close();
    const result = await runSpool(["sources", "plain", "--db", db], { cwd: dir });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("has no sources: declare them under sources:");
  });
});
