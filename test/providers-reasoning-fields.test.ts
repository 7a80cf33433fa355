import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventStore } from "../src/log/index.js";
import { createOpenAIChatProvider } from "../src/providers/index.js";
import { createAgentRuntime } from "../src/runtime/index.js";
import { runSpool } from "./support/cli.js";
import {
  fixtureBytes,
  PROVIDER_FIXTURES,
  type ReplayServer,
  randomChunks,
  startReplayServer,
} from "./support/replay-server.js";
import {
  agentSpec,
  chatToolCalls,
  dataOf,
  expectKeyNeverLogged,
  ofType,
  recordingTool,
  replay,
} from "./support/runtime-e2e.js";
import { readAll, tempStore } from "./support/transcripts.js";

// Chat Completions servers stream reasoning as `reasoning_content` (DeepSeek, xAI, Alibaba,
// DeepSeek on Azure) or `reasoning` (Groq, Cerebras, OpenRouter, Ollama). Whatever flavour a
// server is reached through, neither is dropped: recorded streams of both, decoded through the
// real `openai` SDK by `spool providers decode` and by a run.

/** The recorded streams with reasoning, and the field each one uses. */
const STREAMS = {
  "openai-compatible/xai-text.sse": "reasoning_content",
  "deepseek/deepseek-reasoning.sse": "reasoning_content",
  "groq/groq-reasoning.sse": "reasoning",
} as const;

/** The reasoning of a recorded stream, read from its `data:` lines apart from the adapter. */
function reasoningOf(path: string, field: string): string {
  let text = "";
  for (const line of fixtureBytes(path).toString("utf8").split("\n")) {
    if (!line.startsWith("data:") || line.includes("[DONE]")) continue;
    const chunk = JSON.parse(line.slice(5)) as { choices?: { delta?: Record<string, unknown> }[] };
    const value = chunk.choices?.[0]?.delta?.[field];
    if (typeof value === "string") text += value;
  }
  return text;
}

describe("spool providers decode keeps reasoning whatever the flavour", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "spool-reasoning-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  for (const [path, field] of Object.entries(STREAMS)) {
    it(`${path} (${field}): the same reasoning under every flavour, and without one`, async () => {
      const expected = reasoningOf(path, field);
      expect(expected.length).toBeGreaterThan(20);
      for (const flavour of [undefined, "openai", "deepseek", "groq", "mistral", "compatible"]) {
        const args = ["providers", "decode", "--format", "openai-chat"];
        if (flavour) args.push("--flavour", flavour);
        const { code, stdout } = await runSpool([...args, `${PROVIDER_FIXTURES}${path}`], {
          cwd: dir,
        });
        expect(code, `--flavour ${flavour}`).toBe(0);
        const content = (JSON.parse(stdout) as { content: { type: string; text?: string }[] })
          .content;
        const reasoning = content.filter((block) => block.type === "reasoning");
        expect(reasoning, `--flavour ${flavour}`).toEqual([
          expect.objectContaining({ text: expected }),
        ]);
      }
    });
  }
});

describe("a run through the openai flavour keeps the reasoning of an OpenAI-compatible server", () => {
  const KEY = "sk-test-reasoning-key-0123456789abcdef";
  let store: EventStore;
  let cleanup: () => Promise<void>;
  let server: ReplayServer;
  beforeEach(async () => {
    ({ store, cleanup } = await tempStore("spool-reasoning-run-"));
    server = await startReplayServer();
  });
  afterEach(async () => {
    await server.close();
    await cleanup();
  });

  it("xAI reasoning_content with a tool call, then reasoning with the answer: both logged, replay identical", async () => {
    const first = "openai-compatible/xai-tool-call.sse";
    const second = "openai-compatible/xai-text.sse";
    const [call] = chatToolCalls(first);
    const weather = recordingTool(call!.name, () => ({ celsius: 18 }));
    const agent = agentSpec("grok-4", [weather.tool]);
    server.respond(
      ...[first, second].map((path, index) => ({
        chunks: randomChunks(fixtureBytes(path), 11 + index, 400),
      })),
    );
    const provider = createOpenAIChatProvider({
      apiKey: KEY,
      baseURL: `${server.url}/v1`,
      flavour: "openai",
      env: {},
      transport: { maxAttempts: 1 },
    });
    const runtime = createAgentRuntime({ store, provider, agent });
    const result = await runtime.submit("home", { text: "Weather?", actor: "ada", origin: "t" });
    await runtime.close();
    expect(result).toMatchObject({ status: "completed", steps: 2 });
    expect(weather.calls).toEqual([call!.input]);

    const events = await readAll(store, "home");
    const messages = ofType(events, "message.completed").map(
      (event) => dataOf(event).content as { type: string; text?: string }[],
    );
    expect(
      messages.map((content) => content.filter((block) => block.type === "reasoning")),
    ).toEqual([
      [expect.objectContaining({ text: reasoningOf(first, "reasoning_content") })],
      [expect.objectContaining({ text: reasoningOf(second, "reasoning_content") })],
    ]);
    expectKeyNeverLogged(server.requests, events, KEY);

    const requests = server.requests.length;
    const report = await replay(store, "home", agent);
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
    expect(server.requests.length).toBe(requests);
  });
});
