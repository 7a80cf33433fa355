/**
 * The CLI over a continuity that handed off: `spool threads` shows the chain, `spool tail` one
 * conversation across it, `spool pin`/`unpin`/`pins` keep the pins, and `spool context` shows
 * what a model call was given. The log is built from real events appended through the store (so
 * the catalog validates each one); commands run through `main`, the entry of every CLI test.
 */
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createChatRenderer } from "../src/cli/chat/index.js";
import { runSlashCommand } from "../src/cli/commands/chat-slash.js";
import type { ContextReport } from "../src/cli/commands/context-command.js";
import { ConversationView } from "../src/cli/commands/conversation-view.js";
import type { PinRow } from "../src/cli/commands/pins.js";
import type { ThreadRow } from "../src/cli/commands/thread-rows.js";
import { createStyle } from "../src/cli/format.js";
import { type CliIo, main } from "../src/cli/main.js";
import type { EventStore } from "../src/log/index.js";
import { pinId } from "../src/runtime/continuity-actions.js";
import { foldContinuityState } from "../src/runtime/index.js";
import type { NewEvent, SpoolEvent } from "../src/spec/index.js";
import { collectOutput } from "./support/chat-fakes.js";
import { awaitableOutput, runSpool } from "./support/cli.js";
import { readAll, tempStore } from "./support/transcripts.js";

const CHAT = "chat";
const MODEL = "claude-test";
const T1 = "th-01JC3V7Q8ZK2N5W4X6Y8A0B1C2";
const T2 = `${T1}.c1`;
const SUMMARIZER = `${T1}@summary1`;
const HOOK = `${T1}@hook1`;
const SHORT_T1 = "th-…Y8A0B1C2";
const HANDOFF_LINE =
  "── context handed off to a new thread (pressure 0.91, 7,402 → 2,310 tokens, summary 812 tokens) ──";

let dir: string;
let db: string;
let store: EventStore;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, store, cleanup } = await tempStore("spool-continuity-cli-"));
  db = join(dir, "store");
});
afterEach(async () => {
  await cleanup();
});

const usage = (input: number, output = 20) => ({
  input_tokens: input,
  output_tokens: output,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
});

const onThread = (thread: string, type: string, data: unknown): NewEvent => ({
  continuity: CHAT,
  stream: { kind: "thread", id: thread },
  type,
  data,
});

const onStream = (kind: "step" | "worker", id: string, type: string, data: unknown): NewEvent => ({
  continuity: CHAT,
  stream: { kind, id },
  type,
  data,
});

/** A whole model step of `thread`: start, its compiled context, the message and the usage. */
async function modelStep(
  thread: string,
  index: number,
  text: string,
  inputTokens: number,
  compiled: Record<string, unknown> = {},
): Promise<SpoolEvent[]> {
  const step = `${thread}:${index}`;
  const base = { kind: "model", thread, index, provider: "scripted", model: MODEL };
  return store.appendBatch([
    onStream("step", step, "step.started", base),
    onStream("step", step, "context.compiled", {
      strategy: "continuity",
      messages: 2,
      omitted: 0,
      tokens: inputTokens,
      budget: 8000,
      digest: "a".repeat(64),
      ...compiled,
    }),
    onStream("step", step, "message.completed", {
      format: "scripted",
      provider: "scripted",
      model: MODEL,
      response_id: null,
      content: [{ type: "text", text }],
      usage: usage(inputTokens),
      stop_reason: "end",
      provider_stop_reason: null,
    }),
    onStream("step", step, "step.completed", {
      ...base,
      usage: usage(inputTokens),
      stop_reason: "end",
      duration_ms: 5,
    }),
  ]);
}

async function turn(text: string): Promise<SpoolEvent> {
  return store.append({
    continuity: CHAT,
    type: "turn.added",
    actor: "ada",
    origin: "cli",
    data: { text },
  });
}

const runStarted = (turnId: string, nextStep: number) => ({
  turn: turnId,
  resumed: false,
  directive: "assistant",
  model: MODEL,
  next_step: nextStep,
});

const runCompleted = (turnId: string, status: string, steps: number) => ({
  turn: turnId,
  status,
  steps,
  usage: usage(100),
  cost_usd: 0,
});

/**
 * A chat whose thread T1 answers two turns, reaches the handoff pressure and hands off to T2
 * (summarized by the child thread T1@summary1, a hook firing beside it); T2 carries the second
 * exchange as trailing messages and answers the rest of the second turn. `mode: "trailing-only"`
 * hands off without a summary; `answer: false` stops right after the handoff.
 */
async function buildHandoffLog(
  options: { mode?: "summary" | "trailing-only"; answer?: boolean } = {},
) {
  const mode = options.mode ?? "summary";
  await store.append({
    continuity: CHAT,
    type: "continuity.created",
    actor: "ada",
    origin: "cli",
    data: { title: "Chat", labels: { kind: "chat" } },
  });
  const first = await turn("what grows in the garden?");
  await store.appendBatch([
    onThread(T1, "thread.started", {
      directive: "assistant",
      chain_root: T1,
      model: MODEL,
      turn: first.id,
    }),
    onThread(T1, "run.started", runStarted(first.id, 0)),
  ]);
  await modelStep(
    T1,
    0,
    "<thought>looking at the beds</thought><response>Tomatoes and basil.</response>",
    3100,
    {
      parts: { system: 900, pinned: 0, summaries: 0, feeds: 0, messages: 2200 },
      ranges: [{ thread: T1, from_seq: 2, to_seq: 4 }],
      summaries: [],
      pinned: [],
    },
  );
  await store.append(onThread(T1, "run.completed", runCompleted(first.id, "completed", 1)));
  const second = await turn("and what is in the shed?");
  await store.append(onThread(T1, "run.started", runStarted(second.id, 1)));
  const [, , shedAnswer] = await modelStep(
    T1,
    1,
    '<response final="false">A rake and a spade.</response>',
    7402,
  );
  await store.appendBatch([
    onThread(T1, "hook.fired", {
      hook: "precompute",
      event: "pressure",
      layer: 1,
      item_type: "directive",
      item_id: "thread_summary",
      params: {},
    }),
    onStream("worker", HOOK, "hook.completed", {
      hook: "precompute",
      event: "pressure",
      outcome: "completed",
      detail: "HOOK-DETAIL",
    }),
    onThread(T1, "handoff.started", {
      continuation: T2,
      reason: "context pressure",
      tokens_used: 7402,
      max_tokens: 8134,
      pressure_ratio: 0.91,
      summarizer: "thread_summary",
      attempt: 1,
    }),
  ]);
  const covers = { thread: T1, from_seq: first.seq, to_seq: shedAnswer!.seq };
  const summaryText = "SUMMARY-TEXT: the user keeps a garden.";
  const summary = {
    id: SUMMARIZER,
    summarizer: "thread_summary",
    text: summaryText,
    tokens: 812,
    covers,
  };
  if (mode === "summary") {
    await store.appendBatch([
      onStream("worker", SUMMARIZER, "summary.started", {
        thread: T1,
        summarizer: "thread_summary",
        mode: "handoff",
        covers,
        attempt: 1,
      }),
      onThread(SUMMARIZER, "thread.started", {
        directive: "thread_summary",
        chain_root: SUMMARIZER,
        model: MODEL,
        parent: { thread: T1, step: `${T1}:2`, action: "summary1", depth: 1 },
      }),
      onThread(SUMMARIZER, "run.started", {
        input: "Write the summary now.",
        resumed: false,
        directive: "thread_summary",
        model: MODEL,
        next_step: 0,
      }),
    ]);
    await modelStep(SUMMARIZER, 0, `<response>${summaryText}</response>`, 5000);
    const artifact = await store.artifacts.put(Buffer.from(summaryText), {
      mediaType: "text/markdown",
    });
    await store.appendBatch([
      onThread(SUMMARIZER, "run.completed", {
        status: "completed",
        steps: 1,
        usage: usage(5000),
        cost_usd: 0,
      }),
      onThread(SUMMARIZER, "thread.completed", { result: summaryText }),
      onStream("worker", SUMMARIZER, "summary.completed", {
        ...summary,
        thread: T1,
        mode: "handoff",
        artifact: { hash: artifact.hash, size: artifact.size, media_type: "text/markdown" },
      }),
    ]);
  }
  const summaryTokens = mode === "summary" ? 812 : 0;
  await store.appendBatch([
    onThread(T2, "thread.started", {
      directive: "assistant",
      chain_root: T1,
      continuation_of: T1,
      model: MODEL,
    }),
    onThread(T2, "handoff.seeded", {
      from: T1,
      mode,
      summaries: mode === "summary" ? [summary] : [],
      trailing: [
        { role: "user", content: "and what is in the shed?", seq: second.seq, turn: true },
        { role: "assistant", content: "A rake and a spade.", seq: shedAnswer!.seq },
      ],
      resume: true,
      tokens: { summary: summaryTokens, trailing: 1498 },
    }),
    onThread(T1, "provider.cursor-rotated", {
      previous_response_id: null,
      reason: "handoff",
      rebuilt_messages: 3,
    }),
    onThread(T1, "run.completed", runCompleted(second.id, "continued", 1)),
    onThread(T1, "thread.continued", {
      continuation: T2,
      reason: "context pressure",
      mode,
      pressure_ratio: 0.91,
      tokens_before: 7402,
      tokens_after: summaryTokens + 1498,
      ...(mode === "summary" ? { summary_id: SUMMARIZER, summary_tokens: 812 } : {}),
    }),
    onThread(T2, "run.started", runStarted(second.id, 0)),
  ]);
  if (options.answer === false) return { first, second };
  const pin = await store.append({
    continuity: CHAT,
    type: "context.pinned",
    actor: "ada",
    origin: "cli",
    data: { id: pinId("Water daily"), kind: "rule", text: "Water daily", by: "user" },
  });
  const manifest = { version: 1, model: MODEL, summaries: [SUMMARIZER], tokens: 2900 };
  const bundle = await store.artifacts.put(Buffer.from(JSON.stringify(manifest)), {
    mediaType: "application/vnd.spool.bundle+json",
  });
  await modelStep(T2, 0, "<response>Also a wheelbarrow.</response>", 2900, {
    messages: 3,
    omitted: 1,
    parts: { system: 900, pinned: 12, summaries: 812, feeds: 0, messages: 1176 },
    ranges: [{ thread: T2, from_seq: pin.seq, to_seq: pin.seq + 1 }],
    summaries: [SUMMARIZER],
    pinned: [pinId("Water daily")],
    bundle: {
      hash: bundle.hash,
      size: bundle.size,
      media_type: "application/vnd.spool.bundle+json",
    },
  });
  await store.append(onThread(T2, "run.completed", runCompleted(second.id, "completed", 1)));
  return { first, second, pin, bundle };
}

const spool = (args: string[]) => runSpool([...args, "--db", db], { cwd: dir });
const jsonLines = <T>(text: string) =>
  text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as T);
const count = (text: string, needle: string) => text.split(needle).length - 1;

/** `spool tail …` through `main`, stopped once `until` has been shown. */
async function tail(args: string[], until: string) {
  const stdout = awaitableOutput(false, 200);
  const stderr = awaitableOutput(false, 200);
  const stop = new AbortController();
  const io: CliIo = { stdout, stderr, env: {}, cwd: dir, signal: stop.signal };
  const done = main(["tail", ...args, "--db", db], io);
  await stdout.until(until);
  stop.abort();
  expect(await done).toBe(0);
  return stdout.text;
}

describe("spool threads across a handoff", () => {
  it("lists the chain with the handoff and the seed, as JSON lines", async () => {
    await buildHandoffLog();
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
    await buildHandoffLog();
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
    await buildHandoffLog({ mode: "trailing-only" });
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
    await buildHandoffLog();
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
    await buildHandoffLog({ mode: "trailing-only" });
    const text = await tail([CHAT, "--from-start"], "Also a wheelbarrow.");
    expect(text).toContain(
      "── context handed off to a new thread (pressure 0.91, 7,402 → 1,498 tokens, no summary: recent messages only) ──\n",
    );
  });

  it("recaps only what was said in messages detail, across the handoff", async () => {
    await buildHandoffLog();
    let text = "";
    const view = new ConversationView({
      style: createStyle(false),
      width: 200,
      detail: "messages",
      write: (chunk) => {
        text += chunk;
      },
    });
    for (const event of await readAll(store, CHAT)) view.push(event);
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

describe("spool pin, unpin and pins", () => {
  it("pins on the chat's continuity, lists, re-pins, unpins, and the runtime's fold agrees", async () => {
    await buildHandoffLog({ answer: false });
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

    const events = await readAll(store, CHAT);
    const logged = events.filter((event) => event.type.startsWith("context."));
    expect(logged.filter((event) => event.type !== "context.compiled")).toHaveLength(4);
    for (const event of logged.filter((item) => item.type !== "context.compiled")) {
      expect(event).toMatchObject({ stream: { kind: "continuity", id: CHAT }, origin: "cli" });
    }
    const state = foldContinuityState(events);
    expect([...state.pinned.keys()]).toEqual([pinId("Answer in French")]);
  });

  it("refuses empty text, and a store without a chat", async () => {
    await buildHandoffLog({ answer: false });
    expect((await spool(["pin"])).code).toBe(2);
    expect((await spool(["pin", "--continuity", "nope", "x"])).code).toBe(1);
    const empty = await runSpool(["pins", "--db", join(dir, "elsewhere")], { cwd: dir });
    expect(empty.code).toBe(1);
  });

  it("runs /pin, /pin-rule, /pins and /unpin in the chat, and leaves other text alone", async () => {
    await buildHandoffLog({ answer: false });
    const lines: string[] = [];
    const slash = {
      store,
      continuity: CHAT,
      actor: "ada",
      width: 120,
      out: {
        info: (line: string) => lines.push(line),
        error: (line: string) => lines.push(`! ${line}`),
      },
    };
    expect(await runSlashCommand("/pin the gate sticks", slash)).toBe(true);
    expect(await runSlashCommand("/pin-rule  be brief ", slash)).toBe(true);
    expect(await runSlashCommand("/pins", slash)).toBe(true);
    expect(await runSlashCommand(`/unpin ${pinId("the gate sticks")}`, slash)).toBe(true);
    expect(await runSlashCommand("/unpin pin-0000", slash)).toBe(true);
    expect(await runSlashCommand("/pin", slash)).toBe(true);
    expect(await runSlashCommand("/usr/bin is where?", slash)).toBe(false);
    expect(await runSlashCommand("what about /pins", slash)).toBe(false);
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
    const { pin, bundle } = await buildHandoffLog();
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
    await buildHandoffLog();
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
    await buildHandoffLog({ answer: false });
    const report = JSON.parse((await spool(["context", CHAT, "--json"])).stdout) as ContextReport;
    expect(report.step).toBe(`${T1}:1`);
    const summarizer = await spool(["context", CHAT, "--json", "--step", `${SUMMARIZER}:0`]);
    expect((JSON.parse(summarizer.stdout) as ContextReport).thread).toBe(SUMMARIZER);
  });
});

describe("the new commands' help", () => {
  it("is registered for each, and listed by spool --help", async () => {
    const top = await runSpool(["--help"], { cwd: dir });
    for (const name of ["context", "pin", "unpin", "pins"]) {
      expect(top.stdout).toMatch(new RegExp(`\\n  ${name} `));
      const help = await runSpool([name, "--help"], { cwd: dir });
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^Usage: spool ${name}`));
    }
  });
});
