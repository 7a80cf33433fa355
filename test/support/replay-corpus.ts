/**
 * Continuities written the way a user writes them (`spool run` in-process, in a workspace with
 * its own `.ai/` items), for the replay tests: kv relic and workflow actions, a directive in a
 * sub-folder, Ctrl-C mid-tag and mid-tool, and handoff summaries on each provider format served
 * by a loopback server through the real SDKs. Each writer says what it wrote; the replay tests
 * then replay every one of them.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { main } from "../../src/cli/main.js";
import { anthropicTextFrames } from "./anthropic-sse.js";
import { awaitableOutput, memoryOutput, runSpool } from "./cli.js";
import { leaseLapsed, spoolOnPipes, type Workspace } from "./cli-e2e.js";
import type { ReplayServer } from "./replay-server.js";

/** A fake OpenAI-shaped key (never a real one). */
export const FAKE_OPENAI_KEY = "sk-test-replay-0123456789abcdefABCD";
/** A fake Anthropic-shaped key. */
export const FAKE_ANTHROPIC_KEY = "sk-ant-test-replay-0123456789abcdef";

/** Writes `text` to `relative` under the workspace, creating folders. */
export function writeItem(workspace: Workspace, relative: string, text: string): void {
  const path = join(workspace.dir, relative);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

/** A scripted-provider script file in the workspace's home; returns the environment using it. */
export function scripted(
  workspace: Workspace,
  name: string,
  turns: string[],
  tokenMs?: number,
): Record<string, string | undefined> {
  const path = join(workspace.home, `${name}.json`);
  writeFileSync(path, JSON.stringify({ turns }));
  return workspace.env({
    SPOOL_PROVIDER: "scripted",
    SPOOL_SCRIPT: path,
    ...(tokenMs !== undefined ? { SPOOL_SCRIPT_TOKEN_MS: String(tokenMs) } : {}),
  });
}

/** `spool run` in this process; throws with the output unless it exits `expected`. */
export async function run(
  workspace: Workspace,
  args: string[],
  env: Record<string, string | undefined>,
  expected = 0,
): Promise<string> {
  const result = await runSpool(["run", ...args], { cwd: workspace.dir, env });
  if (result.code !== expected) {
    throw new Error(
      `spool run ${args.join(" ")} exited ${result.code}:\n${result.stdout}${result.stderr}`,
    );
  }
  return result.stdout;
}

/** A workflow that reads the clock once (`.ai/workflows/tick.yaml`). */
const TICK_WORKFLOW = `name: tick
steps:
  - id: now
    action: { type: tool, name: clock.now, parameters: {} }
`;

/** Continuity `kv-workflow`: the kv relic written and read, and a workflow, in one step. */
export async function writeKvWorkflow(workspace: Workspace): Promise<string> {
  writeItem(workspace, ".ai/workflows/tick.yaml", TICK_WORKFLOW);
  const env = scripted(workspace, "kv-workflow", [
    `<action type="relic" mode="sync" id="k1">{"name":"kv.set","parameters":{"key":"a","value":1}}</action><action type="relic" mode="sync" id="k2">{"name":"kv.get","parameters":{"key":"a"},"depends_on":["k1"]}</action><action type="workflow" mode="sync" id="w1">{"name":"tick","parameters":{}}</action><response final="false">stored</response>`,
    "<response>done</response>",
  ]);
  await run(
    workspace,
    ["assistant", "--agent", "assistant", "--continuity", "kv-workflow", "--prompt", "go"],
    env,
  );
  return "kv-workflow";
}

/** Continuity `in-folder`: a run of `.ai/directives/data/process.md` (`data/process`). */
export async function writeDirectiveInFolder(workspace: Workspace): Promise<string> {
  writeItem(
    workspace,
    ".ai/directives/data/process.md",
    `# Process

\`\`\`xml
<directive name="process" version="1.0.0">
  <metadata>
    <description>Processes the data it is given.</description>
    <category>data</category>
    <author>test</author>
    <model tier="fast" />
    <limits max_turns="3" />
    <permissions>
      <execute>
        <tool>clock.now</tool>
      </execute>
    </permissions>
  </metadata>
</directive>
\`\`\`

Process the data.
`,
  );
  const env = scripted(workspace, "in-folder", [
    `<action type="tool" mode="sync" id="c1">{"name":"clock.now","parameters":{}}</action><response final="false">working</response>`,
    "<response>processed</response>",
  ]);
  await run(workspace, ["data/process", "--continuity", "in-folder"], env);
  return "in-folder";
}

/**
 * `spool run` cancelled like Ctrl-C (the command's signal aborts) once `when` has been shown;
 * resolves with what it printed. The run must end `cancelled` (exit 130).
 */
async function runCancelled(
  workspace: Workspace,
  args: string[],
  env: Record<string, string | undefined>,
  when: string,
): Promise<string> {
  const stdout = awaitableOutput();
  const stderr = memoryOutput();
  const controller = new AbortController();
  const running = main(["run", ...args], {
    stdout,
    stderr,
    env,
    cwd: workspace.dir,
    signal: controller.signal,
  });
  await Promise.race([stdout.until(when), running]);
  controller.abort();
  const code = await running;
  if (!stdout.text.includes(when)) {
    throw new Error(
      `spool run ended (${code}) before showing ${when}:\n${stdout.text}${stderr.text}`,
    );
  }
  return stdout.text;
}

/** Continuity `ctrl-c-tag`: cancelled while the model streams a `<response>` (no action). */
export async function writeCtrlCMidTag(workspace: Workspace): Promise<string> {
  const env = scripted(
    workspace,
    "ctrl-c-tag",
    [`<response>Counting: ${Array.from({ length: 400 }, (_, i) => `n${i}`).join(" ")}</response>`],
    5,
  );
  await runCancelled(
    workspace,
    ["assistant", "--continuity", "ctrl-c-tag", "--prompt", "count"],
    env,
    "n3 ",
  );
  return "ctrl-c-tag";
}

/** Continuity `ctrl-c-tool`: cancelled while a sync `shell.run` runs (`sleep`). */
export async function writeCtrlCMidTool(workspace: Workspace): Promise<string> {
  writeItem(
    workspace,
    ".ai/agents/sheller.yaml",
    "directive: assistant\ndescription: Runs commands.\ntools:\n  - shell.run\n",
  );
  const env = scripted(workspace, "ctrl-c-tool", [
    `<action type="tool" mode="sync" id="s1">{"name":"shell.run","parameters":{"command":"sleep 60"}}</action><response>slept</response>`,
  ]);
  await runCancelled(
    workspace,
    ["assistant", "--agent", "sheller", "--continuity", "ctrl-c-tool", "--prompt", "sleep"],
    env,
    "→ tool shell.run",
  );
  return "ctrl-c-tool";
}

/** A provider format a handoff is written on, and how its server is reached. */
export interface HandoffProvider {
  /** The continuity written. */
  continuity: string;
  env(server: ReplayServer): Record<string, string>;
  /** An SSE body answering `text`, reporting `inputTokens` of input. */
  answer(text: string, inputTokens: number): string;
  /** Input tokens that put the foreground model past 0.9 of its window. */
  pressure: number;
  /** The summarizer's model as the original run must log it. */
  summaryModel: string;
}

function chatBody(model: string, text: string, inputTokens: number): string {
  const chunk = (choices: unknown[], extra: object = {}) =>
    `data: ${JSON.stringify({ id: "chatcmpl-replay", object: "chat.completion.chunk", created: 1, model, choices, ...extra })}\n\n`;
  return [
    chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]),
    chunk([{ index: 0, delta: { content: text }, finish_reason: null }]),
    chunk([{ index: 0, delta: {}, finish_reason: "stop" }]),
    chunk([], {
      usage: { prompt_tokens: inputTokens, completion_tokens: 5, total_tokens: inputTokens + 5 },
    }),
    "data: [DONE]\n\n",
  ].join("");
}

function responsesBody(model: string, text: string, inputTokens: number): string {
  const event = (type: string, data: object) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const response = (status: string, output: unknown[], usage: unknown) => ({
    id: "resp_replay",
    object: "response",
    created_at: 1,
    status,
    model,
    output,
    usage,
  });
  const item = { id: "msg_replay", type: "message", role: "assistant", status: "completed" };
  const done = { ...item, content: [{ type: "output_text", text, annotations: [] }] };
  return [
    event("response.created", { sequence_number: 0, response: response("in_progress", [], null) }),
    event("response.output_item.added", {
      sequence_number: 1,
      output_index: 0,
      item: { ...item, status: "in_progress", content: [] },
    }),
    event("response.output_text.delta", {
      sequence_number: 2,
      item_id: "msg_replay",
      output_index: 0,
      content_index: 0,
      delta: text,
    }),
    event("response.output_item.done", { sequence_number: 3, output_index: 0, item: done }),
    event("response.completed", {
      sequence_number: 4,
      response: response("completed", [done], {
        input_tokens: inputTokens,
        output_tokens: 5,
        total_tokens: inputTokens + 5,
      }),
    }),
  ].join("");
}

function anthropicBody(text: string, inputTokens: number): string {
  return anthropicTextFrames([text])
    .join("")
    .replace('"input_tokens":12', `"input_tokens":${inputTokens}`);
}

/** The provider formats a handoff summary is written on. */
export const HANDOFF_PROVIDERS: readonly HandoffProvider[] = [
  {
    continuity: "handoff-anthropic",
    env: (server) => ({
      SPOOL_PROVIDER: "anthropic",
      ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY,
      ANTHROPIC_BASE_URL: server.url,
    }),
    answer: anthropicBody,
    pressure: 950_000,
    summaryModel: "claude-haiku-4-5",
  },
  {
    continuity: "handoff-openai-chat",
    env: (server) => ({
      SPOOL_PROVIDER: "openai",
      OPENAI_API_KEY: FAKE_OPENAI_KEY,
      OPENAI_BASE_URL: `${server.url}/v1`,
    }),
    answer: (text, tokens) => chatBody("gpt-5.5", text, tokens),
    pressure: 1_000_000,
    summaryModel: "gpt-5-mini",
  },
  {
    continuity: "handoff-openai-responses",
    env: (server) => ({
      SPOOL_PROVIDER: "openai-responses",
      OPENAI_API_KEY: FAKE_OPENAI_KEY,
      OPENAI_BASE_URL: `${server.url}/v1`,
    }),
    answer: (text, tokens) => responsesBody("gpt-5.5", text, tokens),
    pressure: 1_000_000,
    summaryModel: "gpt-5-mini",
  },
  {
    continuity: "handoff-compatible",
    env: (server) => ({
      SPOOL_PROVIDER: "ollama",
      SPOOL_MODEL: "qwen3:8b",
      SPOOL_BASE_URL: `${server.url}/v1`,
    }),
    answer: (text, tokens) => chatBody("qwen3:8b", text, tokens),
    pressure: 1_000_000,
    summaryModel: "qwen3:8b",
  },
];

/**
 * Writes `provider.continuity`: a first turn whose reported input passes 0.9 of the window
 * (the summarizer runs on the summary tier of that provider), then a second turn.
 */
export async function writeHandoff(
  workspace: Workspace,
  server: ReplayServer,
  provider: HandoffProvider,
): Promise<string> {
  server.respond(
    { chunks: [provider.answer("<response>first</response>", provider.pressure)] },
    { chunks: [provider.answer("The user said hello and was answered.", 900)] },
    { chunks: [provider.answer("<response>second</response>", 1200)] },
  );
  const env = workspace.env(provider.env(server));
  const args = ["assistant", "--continuity", provider.continuity, "--prompt"];
  await run(workspace, [...args, "hello"], env);
  await run(workspace, [...args, "again"], env);
  return provider.continuity;
}

/** What `writeCrash` writes with `fs.write` (append mode): replay must never write it again. */
export const CRASH_FILE = "crash-out.txt";

/**
 * Continuity `crash`: a `spool run` process SIGKILLed right after its `fs.write` (append) ran,
 * then `spool resume` in this process finishing it.
 */
export async function writeCrash(workspace: Workspace): Promise<string> {
  const action = {
    name: "fs.write",
    parameters: { path: CRASH_FILE, content: "written once\n", mode: "append" },
  };
  const env = scripted(
    workspace,
    "crash",
    [
      `<action type="tool" mode="sync" id="w1">${JSON.stringify(action)}</action><response final="false">${"Checking what I wrote before going on. ".repeat(6)}</response>`,
      "<response>done</response>",
    ],
    30,
  );
  const doomed = spoolOnPipes(
    ["run", "assistant", "--agent", "assistant", "--continuity", "crash", "--prompt", "write"],
    // A short lease: the killed owner's lapses soon, and only then may another process recover.
    { cwd: workspace.dir, env: { ...env, SPOOL_LEASE_TTL_MS: "1000" } },
  );
  try {
    doomed.child.stdin.end();
    await doomed.shows("✓ fs.write", 0, 60_000);
  } finally {
    doomed.child.kill("SIGKILL");
  }
  await doomed.exited;
  await leaseLapsed(workspace.dir, "crash");
  const after = scripted(workspace, "crash-after", ["<response>done</response>"]);
  const resumed = await runSpool(["resume", "crash"], { cwd: workspace.dir, env: after });
  if (resumed.code !== 0)
    throw new Error(`spool resume exited ${resumed.code}: ${resumed.stdout}${resumed.stderr}`);
  return "crash";
}

/** The file the hook of `writeHookWithTool` appends to. */
export const HOOK_FILE = "hooked.txt";

/**
 * Continuity `hook-tool`: a project hook on `thread.started` whose action is the `fs.write` tool
 * (append). Write it in a workspace of its own: the hook fires on every continuity of its space.
 */
export async function writeHookWithTool(workspace: Workspace): Promise<string> {
  writeItem(
    workspace,
    ".ai/hooks/stamp.yaml",
    `- id: stamp
  event: thread.started
  action:
    item_type: tool
    item_id: fs.write
    params: { path: ${HOOK_FILE}, content: "hooked\\n", mode: append }
`,
  );
  const env = scripted(workspace, "hook-tool", ["<response>done</response>"]);
  await run(
    workspace,
    ["assistant", "--agent", "assistant", "--continuity", "hook-tool", "--prompt", "go"],
    env,
  );
  return "hook-tool";
}
