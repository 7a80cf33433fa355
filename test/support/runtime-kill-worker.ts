/**
 * The child process of the runtime kill test (`test/runtime-kill.test.ts`): one agent on one
 * continuity, with a model whose output depends only on the request, so a restarted process asks
 * for exactly what the killed one would have. Its tools have side effects outside the log:
 * `ledger.append` (not idempotent) appends a line to a ledger file, `cache.put` (idempotent)
 * writes a file by key, `clock.tick` is pure.
 *
 * It loads, prints `loaded`, and waits for its arguments on stdin (until EOF), so
 * a test can start the next process while the last one runs: `<db>`, `<dir>`, `start|resume`,
 * `<turns>`, one a line. `start` submits turns 1..turns; `resume` calls `runtime.resume` first, then submits
 * the turns the log does not have yet.
 *
 * Prints one line per fact, each with one write (whole lines survive a SIGKILL in the pipe):
 * `ready` once the store is open; `ack <id> <type> <seq>` once a critical append has resolved, before the caller acts on
 * it; `model` when a model call starts and `tok` per streamed text token; `act <tool> <step>
 * <action>` when a tool starts and `did <tool> <step> <action>` once its side effect is on disk;
 * `done` at the end.
 */
import { appendFileSync, closeSync, fsyncSync, mkdirSync, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { defineTool } from "../../src/actions/index.js";
import { type EventStore, openEventStore } from "../../src/log/index.js";
import { createScriptedProvider } from "../../src/providers/index.js";
import type { Provider, ProviderMessage, ProviderRequest } from "../../src/providers/provider.js";
import type { StreamPart } from "../../src/providers/stream-part.js";
import { type AgentSpec, createAgentRuntime } from "../../src/runtime/index.js";
import { tapStored } from "./store-taps.js";

export const KILL_CONTINUITY = "kill";
export const KILL_MODEL = "claude-sonnet-4-5";
/** The ledger file (`<step>|<action>|<value>` per line) and the cache directory, in `dir`. */
export const LEDGER_FILE = "ledger.txt";
export const CACHE_DIR = "cache";

/** What the tools do to the world; the test's replay passes effects that must never run. */
export interface KillEffects {
  ledger(actionId: string, value: string): Promise<unknown>;
  cache(actionId: string, key: string, value: string): Promise<unknown>;
}

/** The agent of the kill test: the same spec in the worker and in the test's replay. */
export function killAgent(effects: KillEffects): AgentSpec {
  return {
    directive: "kill-test",
    instructions: "Keep the ledger and the cache as each turn asks.",
    model: KILL_MODEL,
    limits: {},
    permits: () => true,
    tools: [
      defineTool({
        name: "ledger.append",
        description: "Appends one line to the ledger. Not idempotent: every run adds a line.",
        parameters: z.object({ value: z.string() }),
        sideEffects: true,
        idempotent: false,
        execute: ({ value }, context) => effects.ledger(context.actionId, value),
      }),
      defineTool({
        name: "cache.put",
        description: "Stores a value under a key (running it twice stores the same value).",
        parameters: z.object({ key: z.string(), value: z.string() }),
        sideEffects: true,
        idempotent: true,
        execute: ({ key, value }, context) => effects.cache(context.actionId, key, value),
      }),
      defineTool({
        name: "clock.tick",
        description: "Returns the tick after n.",
        parameters: z.object({ n: z.number().int() }),
        idempotent: true,
        execute: ({ n }) => ({ tick: n + 1 }),
      }),
    ],
  };
}

/** The text of turn `turn`; the model finds the turn by its marker. */
export function turnText(turn: number): string {
  return `Please keep the ledger for this turn. [[turn ${turn}]]`;
}

const act = (mode: string, id: string, body: object) =>
  `<action type="tool" mode="${mode}" id="${id}">${JSON.stringify(body)}</action>`;
const ledger = (value: string, extra: object = {}) => ({
  name: "ledger.append",
  parameters: { value },
  ...extra,
});
const cache = (key: string, value: string, extra: object = {}) => ({
  name: "cache.put",
  parameters: { key, value },
  ...extra,
});
const tick = (n: number) => ({ name: "clock.tick", parameters: { n } });

/** Step templates: sync, async (parallel) and a `depends_on` chain, with non-final responses. */
const STEPS: ReadonlyArray<(turn: number, k: number) => string> = [
  (t, k) =>
    `<thought>Turn ${t} begins: a tick, then two writes at once.</thought>` +
    act("sync", `t${t}s${k}c`, tick(t)) +
    act("async", `t${t}s${k}l`, ledger(`${t}.${k}.l`)) +
    act("async", `t${t}s${k}p`, cache(`k${t}-${k}`, `v${t}.${k}`)) +
    `<response final="false">Turn ${t} is under way.</response>`,
  (t, k) =>
    act("async", `t${t}s${k}a`, ledger(`${t}.${k}.a`, { output_key: "a" })) +
    act(
      "sync",
      `t${t}s${k}b`,
      cache(`k${t}-${k}`, "$a.appended", { depends_on: [`t${t}s${k}a`] }),
    ) +
    `<thought>the chain is half done</thought>` +
    act("async", `t${t}s${k}c`, ledger(`${t}.${k}.c`, { depends_on: [`t${t}s${k}b`] })),
  (t, k) =>
    act("sync", `t${t}s${k}a`, ledger(`${t}.${k}.a`)) +
    `<response final="false">One line written in step ${k}; two more things to do.</response>` +
    act("async", `t${t}s${k}b`, cache(`k${t}-${k}`, `w${t}.${k}`)) +
    act("async", `t${t}s${k}c`, tick(k)),
  (t, k) =>
    `<thought>three in parallel this time</thought>` +
    act("async", `t${t}s${k}a`, ledger(`${t}.${k}.a`)) +
    act("async", `t${t}s${k}b`, ledger(`${t}.${k}.b`)) +
    act("async", `t${t}s${k}c`, cache(`k${t}-${k}`, `x${t}.${k}`)) +
    `<response final="false">Three more are running.</response>`,
  (t, k) =>
    act("sync", `t${t}s${k}a`, cache(`k${t}-${k}`, `y${t}.${k}`, { output_key: "y" })) +
    act("sync", `t${t}s${k}b`, ledger("$y.key", { depends_on: [`t${t}s${k}a`] })) +
    `<response final="false">Stored and noted $y.key.</response>`,
];

/**
 * The steps of turn `turn`: 4 to 6 model calls, the last one a final response that also stores
 * `$y.key`, a variable an earlier step of the turn set (variables live as long as the thread).
 */
export function turnScript(turn: number): string[] {
  const count = 3 + (turn % 3);
  const steps = Array.from({ length: count }, (_, k) => STEPS[(turn + k) % STEPS.length]!(turn, k));
  steps.push(
    `<thought>all done</thought>${act("sync", `t${turn}f`, cache(`final-${turn}`, "$y.key"))}<response>Turn ${turn} is done.</response>`,
  );
  return steps;
}

/**
 * What the model says to `request`: the turn is the last `[[turn N]]` marker in a user message,
 * the step the number of assistant messages after it. A step past the script (a restart made
 * the model answer again) gets a final response.
 */
export function modelOutput(request: ProviderRequest): string {
  let turn = 0;
  let step = 0;
  for (const message of request.messages) {
    if (message.role === "assistant") step += 1;
    if (message.role !== "user") continue;
    const markers = [...textOf(message).matchAll(/\[\[turn (\d+)\]\]/g)];
    if (markers.length > 0) {
      turn = Number(markers.at(-1)![1]);
      step = 0;
    }
  }
  const script = turnScript(turn);
  return script[step] ?? `<response>Turn ${turn} is done (again, after a restart).</response>`;
}

function textOf(message: ProviderMessage): string {
  if (message.role === "tool") return "";
  if (typeof message.content === "string") return message.content;
  return message.content.map((part) => ("text" in part ? part.text : "")).join("");
}

/** A provider that plays `modelOutput(request)` token by token (1 ms per word). */
export function killModel(print: (line: string) => void = () => {}): Provider {
  return {
    name: "scripted",
    format: "scripted",
    async *stream(request, options) {
      print("model");
      const inner = createScriptedProvider({
        model: KILL_MODEL,
        script: [modelOutput(request)],
        tokens: "word",
        timing: { tokenMs: 1 },
      });
      for await (const part of inner.stream(request, options) as AsyncIterable<StreamPart>) {
        if (part.type === "text") print("tok");
        yield part;
      }
    },
  };
}

/** The store, printing `ack` for every critical event once its append has resolved. */
function acking(store: EventStore, print: (line: string) => void): EventStore {
  return tapStored(store, (event) => {
    if (event.criticality === "critical") print(`ack ${event.id} ${event.type} ${event.seq}`);
  });
}

/** A tool's work takes a little time, so kills land before, inside and after its effect. */
const work = () => new Promise<void>((resolve) => setTimeout(resolve, 2));

async function main(args: string[]): Promise<void> {
  const [db, dir, mode, turnsArg] = args;
  if (!db || !dir || (mode !== "start" && mode !== "resume") || !turnsArg) {
    throw new Error("usage: runtime-kill-worker <db> <dir> <start|resume> <turns>");
  }
  const print = (line: string) => {
    process.stdout.write(`${line}\n`);
  };
  const store = acking(await openEventStore({ db }), print);
  let step = "";
  mkdirSync(join(dir, CACHE_DIR), { recursive: true });
  const ledgerFd = openSync(join(dir, LEDGER_FILE), "a");
  const effects: KillEffects = {
    async ledger(actionId, value) {
      const at = step;
      print(`act ledger ${at} ${actionId}`);
      await work();
      appendFileSync(ledgerFd, `${at}|${actionId}|${value}\n`);
      fsyncSync(ledgerFd);
      print(`did ledger ${at} ${actionId}`);
      await work();
      return { appended: value };
    },
    async cache(actionId, key, value) {
      print(`act cache ${step} ${actionId}`);
      await work();
      const fd = openSync(join(dir, CACHE_DIR, key), "w");
      writeFileSync(fd, value);
      fsyncSync(fd);
      closeSync(fd);
      print(`did cache ${step} ${actionId}`);
      return { key, value };
    },
  };
  const runtime = createAgentRuntime({
    store,
    provider: killModel(print),
    agent: killAgent(effects),
    observer: (notice) => {
      // One step runs at a time on the continuity: the tools write the step they run in.
      if (notice.type === "step-started") step = notice.step;
    },
  });
  print("ready");
  if (mode === "resume") await runtime.resume(KILL_CONTINUITY);
  let added = 0;
  for await (const _ of store.read({ continuity: KILL_CONTINUITY, types: ["turn.added"] })) {
    added += 1;
  }
  for (let turn = added + 1; turn <= Number(turnsArg); turn++) {
    await runtime.submit(KILL_CONTINUITY, { text: turnText(turn), actor: "ada", origin: "test" });
  }
  await runtime.close();
  await store.close();
  closeSync(ledgerFd);
  print("done");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stdout.write("loaded\n");
  let input = "";
  for await (const chunk of process.stdin) input += String(chunk);
  await main(input.trim().split("\n"));
}
