import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../src/actions/index.js";
import type { ThreadRow } from "../src/app/index.js";
import { tailCommand } from "../src/cli/commands/tail.js";
import { threadsCommand } from "../src/cli/commands/threads.js";
import { createContext, NotFoundError } from "../src/cli/context.js";
import type { EventStore } from "../src/log/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import { type AgentSpec, createAgentRuntime } from "../src/runtime/index.js";
import type { SpoolEvent } from "../src/spec/index.js";
import { awaitableOutput } from "./support/cli.js";
import { readAll, tempStore } from "./support/transcripts.js";

const continuity = "home";
const MODEL = "claude-sonnet-4-5";
let dir: string;
let db: string;
let store: EventStore;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, store, cleanup } = await tempStore("spool-tail-"));
  db = join(dir, "store");
});
afterEach(async () => {
  await cleanup();
});

const echo = defineTool({
  name: "echo",
  description: "Returns its text.",
  parameters: z.object({ text: z.string() }),
  idempotent: true,
  execute: ({ text }) => ({ text }),
});

function spec(directive: string): AgentSpec {
  return {
    directive,
    instructions: "Test things.",
    model: MODEL,
    limits: {},
    permits: () => true,
    tools: [echo],
  };
}

/** A runtime over the test store playing `script`, with a `child` directive for agent actions. */
function runtimeWith(script: string[]) {
  const provider = createScriptedProvider({ model: MODEL, script });
  return createAgentRuntime({
    store,
    provider,
    agent: spec("t"),
    agents: {
      get: (name) => (name === "child" ? spec("child") : undefined),
      names: () => ["child"],
    },
  });
}

const TOOL_STEP = `<thought>checking the echo</thought><action type="tool" mode="sync" id="a1">{"name":"echo","parameters":{"text":"x"}}</action><response final="false">one moment</response>`;

/** Runs `command` with `args` against the test store, in a context with collecting outputs. */
function start(
  command: typeof tailCommand,
  args: string[],
  options: { tty?: boolean; env?: Record<string, string> } = {},
) {
  const stdout = awaitableOutput(options.tty ?? false, 100);
  const stderr = awaitableOutput(false, 100);
  const stop = new AbortController();
  const ctx = createContext({
    stdout,
    stderr,
    env: options.env ?? {},
    cwd: dir,
    signal: stop.signal,
  });
  const done = command(ctx, [...args, "--db", db]);
  return { stdout, stderr, stop, done };
}

const count = (text: string, needle: string) => text.split(needle).length - 1;

describe("spool tail", () => {
  it("shows turns, thoughts, responses and actions as a conversation, without colour off a TTY", async () => {
    const runtime = runtimeWith([TOOL_STEP, "<response>all done</response>"]);
    await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    const tail = start(tailCommand, [continuity]);
    await tail.stdout.until("all done");
    tail.stop.abort();
    expect(await tail.done).toBe(0);
    const text = tail.stdout.text;
    expect(text).toContain("› ada: go\n");
    expect(text).toContain("checking the echo\n");
    expect(text).toContain('  ▸ tool echo {"text":"x"}\n');
    expect(text).toMatch(/ {2}✓ echo \d+ ms\n/);
    expect(text).toMatch(/ {2}↳ \d[\d,]* in · \d+ out\n/);
    expect(count(text, "one moment")).toBe(1);
    expect(count(text, "all done")).toBe(1);
    expect(text).not.toContain("<response");
    expect(text).not.toContain("\x1b[");
    await runtime.close();
  });

  it("dims thoughts on a TTY and keeps responses plain", async () => {
    const runtime = runtimeWith([TOOL_STEP, "<response>all done</response>"]);
    await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    const tail = start(tailCommand, [continuity], { tty: true });
    await tail.stdout.until("all done");
    tail.stop.abort();
    await tail.done;
    expect(tail.stdout.text).toContain("\x1b[2mchecking the echo\x1b[22m");
    expect(tail.stdout.text).toMatch(/(^|\n)all done\n/);
    const noColor = start(tailCommand, [continuity], { tty: true, env: { NO_COLOR: "1" } });
    await noColor.stdout.until("all done");
    noColor.stop.abort();
    await noColor.done;
    expect(noColor.stdout.text).not.toContain("\x1b[");
    await runtime.close();
  });

  it("follows the most recently active continuity live and picks up a later turn", async () => {
    const runtime = runtimeWith([
      "<response>elsewhere answer</response>",
      "<response>first answer</response>",
      "<response>second answer</response>",
    ]);
    await runtime.submit("older", { text: "elsewhere", actor: "bob", origin: "test" });
    await runtime.submit(continuity, { text: "hello", actor: "ada", origin: "test" });
    const tail = start(tailCommand, []);
    await tail.stdout.until("first answer");
    await runtime.submit(continuity, { text: "and again", actor: "ada", origin: "test" });
    await tail.stdout.until("second answer");
    tail.stop.abort();
    expect(await tail.done).toBe(0);
    expect(tail.stdout.text).not.toContain("elsewhere");
    expect(tail.stdout.text.indexOf("› ada: and again")).toBeGreaterThan(
      tail.stdout.text.indexOf("first answer"),
    );
    await runtime.close();
  });

  it("starts at the last two turns unless --from-start", async () => {
    const runtime = runtimeWith([
      "<response>r1</response>",
      "<response>r2</response>",
      "<response>r3</response>",
    ]);
    for (const text of ["t-one", "t-two", "t-three"]) {
      await runtime.submit(continuity, { text, actor: "ada", origin: "test" });
    }
    const recent = start(tailCommand, [continuity]);
    await recent.stdout.until("r3");
    recent.stop.abort();
    await recent.done;
    expect(recent.stdout.text).not.toContain("t-one");
    expect(recent.stdout.text).toContain("› ada: t-two");
    const all = start(tailCommand, [continuity, "--from-start"]);
    await all.stdout.until("r3");
    all.stop.abort();
    await all.done;
    expect(all.stdout.text).toContain("› ada: t-one");
    await runtime.close();
  });

  it("shows a step's response from its message when no deltas were logged, once", async () => {
    const runtime = runtimeWith([TOOL_STEP, "<response>all done</response>"]);
    await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    // The same log without its droppable deltas, as after a crash lost them.
    for (const event of await readAll(store, continuity)) {
      if (event.type === "token.delta") continue;
      await store.append({
        continuity: "copy",
        type: event.type,
        ...(event.stream.kind === "continuity" ? {} : { stream: event.stream }),
        actor: event.actor,
        origin: event.origin,
        data: event.data,
      } as Parameters<EventStore["append"]>[0]);
    }
    const tail = start(tailCommand, ["copy"]);
    await tail.stdout.until("all done");
    tail.stop.abort();
    await tail.done;
    expect(count(tail.stdout.text, "one moment")).toBe(1);
    expect(count(tail.stdout.text, "checking the echo")).toBe(1);
    await runtime.close();
  });

  it("prints one JSON event per line with --json", async () => {
    const runtime = runtimeWith(["<response>hi</response>"]);
    await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    const tail = start(tailCommand, [continuity, "--json"]);
    await tail.stdout.until('"type":"run.completed"');
    tail.stop.abort();
    await tail.done;
    const events = tail.stdout.text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as SpoolEvent);
    expect(events[0]).toMatchObject({ type: "turn.added", actor: "ada", data: { text: "go" } });
    expect(events.map((event) => event.type)).toContain("message.completed");
    expect(events.every((event) => event.continuity === continuity)).toBe(true);
    await runtime.close();
  });

  it("fails with a clear not-found error for an unknown continuity", async () => {
    const runtime = runtimeWith(["<response>hi</response>"]);
    await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    const tail = start(tailCommand, ["nope"]);
    await expect(tail.done).rejects.toThrow(NotFoundError);
    await expect(tail.done).rejects.toThrow(/no continuity "nope"/);
    await runtime.close();
  });
});

describe("spool threads", () => {
  const script = [
    `<action type="agent" mode="sync" id="c1">{"name":"child","parameters":{"task":"x"}}</action><response final="false">asking</response>`,
    "<response>child done</response>",
    "<response>all done</response>",
  ];

  /** Tokens per thread, summed from the log's `step.completed` events. */
  async function tokensByThread() {
    const sums = new Map<string, { input: number; output: number }>();
    for (const event of await readAll(store, continuity)) {
      if (event.type !== "step.completed") continue;
      const data = event.data as {
        thread: string;
        usage: { input_tokens: number; output_tokens: number };
      };
      const sum = sums.get(data.thread) ?? { input: 0, output: 0 };
      sum.input += data.usage.input_tokens;
      sum.output += data.usage.output_tokens;
      sums.set(data.thread, sum);
    }
    return sums;
  }

  it("lists a parent and its child thread with statuses, runs, steps and tokens (--json)", async () => {
    const runtime = runtimeWith(script);
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    const run = start(threadsCommand, [continuity, "--json"]);
    expect(await run.done).toBe(0);
    const rows = run.stdout.text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as ThreadRow);
    const tokens = await tokensByThread();
    expect(rows).toHaveLength(2);
    const [parent, child] = rows as [ThreadRow, ThreadRow];
    expect(parent).toMatchObject({
      id: result.thread,
      directive: "t",
      model: MODEL,
      parent: null,
      steps: 2,
      runs: { completed: 1, total: 1 },
      status: "open",
      tokens: tokens.get(result.thread),
    });
    expect(child).toMatchObject({
      directive: "child",
      parent: { thread: result.thread, action: "c1", depth: 1 },
      steps: 1,
      runs: { completed: 1, total: 1 },
      status: "completed",
      tokens: tokens.get(child.id),
    });
    expect(child.tokens.input).toBeGreaterThan(0);
    await runtime.close();
  });

  it("renders the threads of the most recently active continuity as a table", async () => {
    const runtime = runtimeWith(script);
    const result = await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    const run = start(threadsCommand, []);
    expect(await run.done).toBe(0);
    const lines = run.stdout.text.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^THREAD +DIRECTIVE +MODEL +PARENT +STEPS +RUNS +STATUS +STARTED/);
    expect(lines).toHaveLength(3);
    const ulidTail = result.thread.slice(-8);
    expect(lines[1]).toMatch(new RegExp(`^th-…${ulidTail} +t +${MODEL} +- +2 +1/1 +open `));
    expect(lines[2]).toMatch(
      new RegExp(
        `^th-…${ulidTail}:0@c1 +child +${MODEL} +th-…${ulidTail} / c1 +1 +1/1 +completed `,
      ),
    );
    const tokens = (await tokensByThread()).get(result.thread)!;
    expect(lines[1]).toContain(` ${tokens.input.toLocaleString("en-US")} `);
    expect(run.stderr.text).toContain(continuity);
    await runtime.close();
  });

  it("fails with a clear not-found error for an unknown continuity", async () => {
    const runtime = runtimeWith(["<response>hi</response>"]);
    await runtime.submit(continuity, { text: "go", actor: "ada", origin: "test" });
    const run = start(threadsCommand, ["nope"]);
    await expect(run.done).rejects.toThrow(NotFoundError);
    await expect(run.done).rejects.toThrow(/no continuity "nope"/);
    await runtime.close();
  });
});
