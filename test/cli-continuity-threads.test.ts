/**
 * The CLI over a continuity that handed off: `spool threads` shows the chain, `spool tail` one
 * conversation across it, and the chat one line for the handoff. Commands run through `main`,
 * the entry of every CLI test.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ThreadRow } from "../src/app/index.js";
import { createChatRenderer } from "../src/cli/chat/index.js";
import { ConversationView } from "../src/cli/commands/conversation-view.js";
import { createStyle } from "../src/cli/format.js";
import { type CliIo, main } from "../src/cli/main.js";
import { collectOutput } from "./support/chat-fakes.js";
import { awaitableOutput, runSpool } from "./support/cli.js";
import { buildHandoffLog, CHAT, jsonLines, SUMMARIZER, T1, T2 } from "./support/handoff-log.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const SHORT_T1 = "th-…Y8A0B1C2";
const HANDOFF_LINE =
  "── context handed off to a new thread (pressure 0.91, 7,402 → 2,310 tokens, summary 812 tokens) ──";

const temp = useTempStore("spool-continuity-cli-");

const spool = (args: string[]) =>
  runSpool([...args, "--db", join(temp.dir, "store")], { cwd: temp.dir });
const count = (text: string, needle: string) => text.split(needle).length - 1;

/** `spool tail …` through `main`, stopped once `until` has been shown. */
async function tail(args: string[], until: string) {
  const stdout = awaitableOutput(false, 200);
  const stderr = awaitableOutput(false, 200);
  const stop = new AbortController();
  const io: CliIo = { stdout, stderr, env: {}, cwd: temp.dir, signal: stop.signal };
  const done = main(["tail", ...args, "--db", join(temp.dir, "store")], io);
  await stdout.until(until);
  stop.abort();
  expect(await done).toBe(0);
  return stdout.text;
}

describe("spool threads across a handoff", () => {
  it("lists the chain with the handoff and the seed, as JSON lines", async () => {
    await buildHandoffLog(temp.store);
    const result = await spool(["threads", CHAT, "--json"]);
    expect(result.code).toBe(0);
    const rows = jsonLines<ThreadRow>(result.stdout);
    expect(rows.map((row) => row.id)).toEqual([T1, SUMMARIZER, T2]);
    const [old, summarizer, continuation] = rows as [ThreadRow, ThreadRow, ThreadRow];
    expect(old).toMatchObject({
      status: "continued",
      chain_root: T1,
      continuation_of: null,
      worker: false,
      runs: { completed: 1, total: 2 },
      continuation: {
        thread: T2,
        reason: "context pressure",
        pressure_ratio: 0.91,
        mode: "summary",
        tokens_before: 7402,
        tokens_after: 2310,
        summary_id: SUMMARIZER,
        summary_tokens: 812,
      },
      seed: null,
      deferred_handoffs: 0,
    });
    expect(summarizer).toMatchObject({
      directive: "thread_summary",
      parent: { thread: T1, action: "summary1", depth: 1 },
      status: "completed",
      worker: true,
    });
    expect(continuation).toMatchObject({
      status: "open",
      chain_root: T1,
      continuation_of: T1,
      worker: false,
      runs: { completed: 1, total: 1 },
      continuation: null,
      seed: {
        from: T1,
        mode: "summary",
        summaries: 1,
        trailing: 2,
        tokens: { summary: 812, trailing: 1498 },
      },
    });
  });

  it("shows each handoff under the thread it continued, in the table", async () => {
    await buildHandoffLog(temp.store);
    const result = await spool(["threads", CHAT]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(5);
    expect(lines[1]).toMatch(
      new RegExp(`^${SHORT_T1} +assistant .* continued → ${SHORT_T1}\\.c1 `),
    );
    expect(lines[2]).toBe(
      `  ↪ handoff to ${SHORT_T1}.c1: context pressure · pressure 0.91 · 7,402 → 2,310 tokens · summary 812 tokens`,
    );
    expect(lines[3]).toMatch(new RegExp(`^${SHORT_T1}@summary1 +thread_summary .* / summary1 `));
    expect(lines[4]).toMatch(new RegExp(`^${SHORT_T1}\\.c1 +assistant .* open `));
  });

  it("flags a trailing-only handoff", async () => {
    await buildHandoffLog(temp.store, { mode: "trailing-only" });
    const text = await spool(["threads", CHAT]);
    const line = text.stdout.split("\n").find((row) => row.includes("↪ handoff"));
    expect(line).toBe(
      `  ↪ handoff to ${SHORT_T1}.c1: context pressure · pressure 0.91 · 7,402 → 1,498 tokens · trailing-only (no summary)`,
    );
    const rows = jsonLines<ThreadRow>((await spool(["threads", CHAT, "--json"])).stdout);
    expect(rows[0]!.continuation).toMatchObject({ mode: "trailing-only", summary_id: null });
    expect(rows.map((row) => row.id)).toEqual([T1, T2]);
  });
});

describe("spool tail across a handoff", () => {
  it("shows one conversation: one handoff line, no carried messages twice, no summarizer", async () => {
    await buildHandoffLog(temp.store);
    const text = await tail([CHAT, "--from-start"], "Also a wheelbarrow.");
    expect(text).toContain("› ada: what grows in the garden?\n");
    expect(text).toContain("Tomatoes and basil.\n");
    expect(count(text, "and what is in the shed?")).toBe(1);
    expect(count(text, "A rake and a spade.")).toBe(1);
    expect(text).toContain(`${HANDOFF_LINE}\n`);
    expect(count(text, "handed off")).toBe(1);
    expect(text.indexOf(HANDOFF_LINE)).toBeGreaterThan(text.indexOf("A rake and a spade."));
    expect(text.indexOf("Also a wheelbarrow.")).toBeGreaterThan(text.indexOf(HANDOFF_LINE));
    for (const hidden of ["SUMMARY-TEXT", "HOOK-DETAIL", "5,000 in", "run continued", "↪"]) {
      expect(text).not.toContain(hidden);
    }
    // The summarizer's usage line is hidden; the conversation's three steps show theirs.
    expect(text.match(/↳ [\d,]+ in · \d+ out/g)).toHaveLength(3);
  });

  it("says when a handoff carried recent messages only", async () => {
    await buildHandoffLog(temp.store, { mode: "trailing-only" });
    const text = await tail([CHAT, "--from-start"], "Also a wheelbarrow.");
    expect(text).toContain(
      "── context handed off to a new thread (pressure 0.91, 7,402 → 1,498 tokens, no summary: recent messages only) ──\n",
    );
  });

  it("recaps only what was said in messages detail, across the handoff", async () => {
    await buildHandoffLog(temp.store);
    let text = "";
    const view = new ConversationView({
      style: createStyle(false),
      width: 200,
      detail: "messages",
      write: (chunk) => {
        text += chunk;
      },
    });
    for (const event of await readAll(temp.store, CHAT)) view.push(event);
    view.finish();
    expect(text).toBe(
      [
        "› ada: what grows in the garden?",
        "Tomatoes and basil.",
        "› ada: and what is in the shed?",
        "A rake and a spade.",
        HANDOFF_LINE,
        "Also a wheelbarrow.",
        "",
      ].join("\n"),
    );
  });
});

describe("the chat's handoff notice", () => {
  it("is one quiet line, with the reason when the pressure is not known", () => {
    const out = collectOutput(true, 80);
    const renderer = createChatRenderer({ output: out, env: { TERM: "xterm-256color" } });
    renderer.observe({ type: "handoff", from: T1, to: T2, reason: "context pressure" });
    renderer.close();
    expect(out.text).toBe("\x1b[2m— continued in a new thread (context pressure) —\x1b[22m\n");
  });
});
