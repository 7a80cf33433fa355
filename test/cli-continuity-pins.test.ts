/**
 * The CLI's pins and context over a continuity that handed off: `spool pin`/`unpin`/`pins` (and
 * the chat's slash commands) keep the pins, and `spool context` shows what a model call was
 * given. Commands run through `main`, the entry of every CLI test.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ContextReport } from "../src/app/index.js";
import { runSlashCommand } from "../src/cli/commands/chat-slash.js";
import type { PinRow } from "../src/cli/commands/pins.js";
import { pinId } from "../src/runtime/continuity-actions.js";
import { foldContinuityState } from "../src/runtime/index.js";
import { runSpool } from "./support/cli.js";
import {
  buildHandoffLog,
  CHAT,
  jsonLines,
  MODEL,
  SUMMARIZER,
  T1,
  T2,
} from "./support/handoff-log.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const temp = useTempStore("spool-continuity-cli-");

const spool = (args: string[]) =>
  runSpool([...args, "--db", join(temp.dir, "store")], { cwd: temp.dir });

describe("spool pin, unpin and pins", () => {
  it("pins on the chat's continuity, lists, re-pins, unpins, and the runtime's fold agrees", async () => {
    await buildHandoffLog(temp.store, { answer: false });
    const fact = "The shed key is under the pot";
    const pinned = await spool(["pin", fact]);
    expect(pinned).toMatchObject({ code: 0, stderr: "" });
    expect(pinned.stdout).toBe(`${pinId(fact)}\n`);
    const rule = await spool(["pin", "--rule", "--continuity", CHAT, "Answer", "in", "French"]);
    expect(rule.stdout).toBe(`${pinId("Answer in French")}\n`);

    let pins = jsonLines<PinRow>((await spool(["pins", "--json"])).stdout);
    expect(pins).toMatchObject([
      { id: pinId(fact), kind: "fact", text: fact, by: "user" },
      { id: pinId("Answer in French"), kind: "rule", text: "Answer in French", by: "user" },
    ]);
    // The same text again is the same pin, now the newest.
    await spool(["pin", ` ${fact} `]);
    pins = jsonLines<PinRow>((await spool(["pins", "--json", "--continuity", CHAT])).stdout);
    expect(pins.map((pin) => pin.id)).toEqual([pinId("Answer in French"), pinId(fact)]);

    const table = await spool(["pins", "--continuity", CHAT]);
    expect(table.stdout.split("\n")[0]).toMatch(/^ID +KIND +BY +PINNED +TEXT$/);
    expect(table.stdout).toMatch(new RegExp(`${pinId(fact)} +fact +user +\\S+Z +${fact}\\n`));

    const unpinned = await spool(["unpin", pinId(fact)]);
    expect(unpinned.code).toBe(0);
    pins = jsonLines<PinRow>((await spool(["pins", "--json"])).stdout);
    expect(pins.map((pin) => pin.id)).toEqual([pinId("Answer in French")]);
    const again = await spool(["unpin", pinId(fact)]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`no pin "${pinId(fact)}" is in force in "chat"`);

    const events = await readAll(temp.store, CHAT);
    const logged = events.filter((event) => event.type.startsWith("context."));
    expect(logged.filter((event) => event.type !== "context.compiled")).toHaveLength(4);
    for (const event of logged.filter((item) => item.type !== "context.compiled")) {
      expect(event).toMatchObject({ stream: { kind: "continuity", id: CHAT }, origin: "cli" });
    }
    const state = foldContinuityState(events);
    expect([...state.pinned.keys()]).toEqual([pinId("Answer in French")]);
  });

  it("refuses empty text, and a store without a chat", async () => {
    await buildHandoffLog(temp.store, { answer: false });
    expect((await spool(["pin"])).code).toBe(2);
    expect((await spool(["pin", "--continuity", "nope", "x"])).code).toBe(1);
    const empty = await runSpool(["pins", "--db", join(temp.dir, "elsewhere")], { cwd: temp.dir });
    expect(empty.code).toBe(1);
  });

  it("runs /pin, /pin-rule, /pins and /unpin in the chat, and leaves other text alone", async () => {
    await buildHandoffLog(temp.store, { answer: false });
    const lines: string[] = [];
    const slash = {
      store: temp.store,
      continuity: CHAT,
      actor: "ada",
      width: 120,
      out: {
        info: (line: string) => lines.push(line),
        error: (line: string) => lines.push(`! ${line}`),
      },
    };
    expect(await runSlashCommand("/pin the gate sticks", slash)).toEqual({ handled: true });
    expect(await runSlashCommand("/pin-rule  be brief ", slash)).toEqual({ handled: true });
    expect(await runSlashCommand("/pins", slash)).toEqual({ handled: true });
    expect(await runSlashCommand(`/unpin ${pinId("the gate sticks")}`, slash)).toEqual({
      handled: true,
    });
    expect(await runSlashCommand("/unpin pin-0000", slash)).toEqual({ handled: true });
    expect(await runSlashCommand("/pin", slash)).toEqual({ handled: true });
    expect(await runSlashCommand("/usr/bin is where?", slash)).toEqual({
      handled: false,
      text: "/usr/bin is where?",
    });
    expect(await runSlashCommand("what about /pins", slash)).toEqual({
      handled: false,
      text: "what about /pins",
    });
    expect(lines).toEqual([
      `pinned fact ${pinId("the gate sticks")} — /unpin ${pinId("the gate sticks")} removes it`,
      `pinned rule ${pinId("be brief")} — /unpin ${pinId("be brief")} removes it`,
      `${pinId("the gate sticks")}  fact  the gate sticks`,
      `${pinId("be brief")}  rule  be brief`,
      `unpinned ${pinId("the gate sticks")}`,
      "! no pin pin-0000 is in force (see /pins)",
      "! /pin needs the text to pin: /pin <text>",
    ]);
    const pins = jsonLines<PinRow>((await spool(["pins", "--json"])).stdout);
    expect(pins.map((pin) => pin.text)).toEqual(["be brief"]);
  });
});

describe("spool context", () => {
  it("shows the latest model call: parts against the budget, messages, ranges, summaries, pins", async () => {
    const { pin, bundle } = await buildHandoffLog(temp.store);
    const result = await spool(["context", CHAT]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(
      new RegExp(`^Step ${T2.replace(".", "\\.")}:0 · ${MODEL} · seq \\d+ · \\S+Z$`),
    );
    expect(lines.slice(1)).toEqual([
      "Tokens: 2,900 of 8,000 (36%) · continuity",
      "  system       900  11%",
      "  pinned        12  0%",
      "  summaries    812  10%",
      "  feeds          0  0%",
      "  messages   1,176  15%",
      "Messages: 3 sent, 1 omitted",
      `Ranges: ${T2} #${pin!.seq}–#${pin!.seq + 1}`,
      "Summaries:",
      expect.stringMatching(new RegExp(`^  ${SUMMARIZER}  812 tokens, covers ${T1} #2–#\\d+$`)),
      "Pinned:",
      `  ${pinId("Water daily")}  rule  Water daily`,
      `Bundle: ${bundle!.hash} (${bundle!.size} bytes); --show prints it`,
    ]);
  });

  it("prints the report as JSON, picks a step, and shows the manifest", async () => {
    await buildHandoffLog(temp.store);
    const json = await spool(["context", CHAT, "--json", "--show"]);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as ContextReport;
    expect(report).toMatchObject({
      continuity: CHAT,
      step: `${T2}:0`,
      thread: T2,
      index: 0,
      model: MODEL,
      compiled: { tokens: 2900, budget: 8000, messages: 3, omitted: 1, summaries: [SUMMARIZER] },
      summaries: [
        { id: SUMMARIZER, summarizer: "thread_summary", tokens: 812, covers: { thread: T1 } },
      ],
      pinned: [{ id: pinId("Water daily"), kind: "rule", text: "Water daily" }],
      manifest: { version: 1, model: MODEL, summaries: [SUMMARIZER], tokens: 2900 },
    });
    const older = await spool(["context", CHAT, "--step", `${T1}:0`]);
    expect(older.stdout).toContain("Tokens: 3,100 of 8,000 (39%)");
    expect(older.stdout).not.toContain("Bundle:");
    const shown = await spool(["context", CHAT, "--show"]);
    expect(shown.stdout).toContain('\n{\n  "version": 1,\n  "model": "claude-test",');
    const missing = await spool(["context", CHAT, "--step", "7"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`no model call "${T2}:7"`);
    const noManifest = await spool(["context", CHAT, "--step", `${T1}:1`, "--show"]);
    expect(noManifest.code).toBe(1);
  });

  it("leaves the summarizer's own model calls out of the latest", async () => {
    await buildHandoffLog(temp.store, { answer: false });
    const report = JSON.parse((await spool(["context", CHAT, "--json"])).stdout) as ContextReport;
    expect(report.step).toBe(`${T1}:1`);
    const summarizer = await spool(["context", CHAT, "--json", "--step", `${SUMMARIZER}:0`]);
    expect((JSON.parse(summarizer.stdout) as ContextReport).thread).toBe(SUMMARIZER);
  });
});

describe("the new commands' help", () => {
  it("is registered for each, and listed by spool --help", async () => {
    const top = await runSpool(["--help"], { cwd: temp.dir });
    for (const name of ["context", "pin", "unpin", "pins"]) {
      expect(top.stdout).toMatch(new RegExp(`\\n  ${name} `));
      const help = await runSpool([name, "--help"], { cwd: temp.dir });
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^Usage: spool ${name}`));
    }
  });
});
