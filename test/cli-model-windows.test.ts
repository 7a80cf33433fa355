/**
 * Through `spool run` (in-process, real SDK, loopback servers shaped like Ollama and a plain
 * OpenAI-compatible server): the window a run measures its context against is asked of the
 * server once and logged (`model.described`), so `spool replay --verify` asks it nothing; an
 * unknown window is assumed small and said once, with the config.yaml line to add;
 * SPOOL_CONTEXT_WINDOW and config.yaml's `model_info` win over the server; every step shows its
 * context %.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runSpool } from "./support/cli.js";
import { createWorkspace, eventsOf, readEvents, type Workspace } from "./support/cli-e2e.js";
import { type LocalModelServer, startLocalModelServer } from "./support/local-model-server.js";

const TIMEOUT = 60_000;

describe("model windows through spool run", { timeout: TIMEOUT }, () => {
  let workspace: Workspace;
  let local: LocalModelServer | undefined;

  beforeEach(() => {
    workspace = createWorkspace("spool-model-windows-");
  });
  afterEach(async () => {
    await local?.close();
    local = undefined;
    workspace.remove();
  });

  const spool = (args: string[], env: Record<string, string> = {}) =>
    runSpool(args, { cwd: workspace.dir, env: workspace.env(env) });
  const ollamaEnv = (model: string) => ({
    SPOOL_PROVIDER: "ollama",
    SPOOL_BASE_URL: local!.baseURL,
    SPOOL_MODEL: model,
  });
  const questions = () => local!.requests.filter((request) => request.path === "/api/show");

  it("asks an Ollama server its window once, logs it, shows context % and replays without asking", async () => {
    local = await startLocalModelServer({
      kind: "ollama",
      model: "qwen3:8b",
      window: 8_192,
      answer: () => ({ text: "<response>hello there</response>", inputTokens: 1_000 }),
    });
    const result = await spool(
      ["run", "assistant", "--continuity", "asked", "--prompt", "hi"],
      ollamaEnv("qwen3:8b"),
    );
    expect(result.code, result.stdout + result.stderr).toBe(0);
    // 1,000 of 8,192 tokens: the step line shows it for a model the catalogue does not know.
    expect(result.stdout).toContain("context 12%");
    expect(result.stdout).not.toContain("is unknown");
    expect(questions()).toHaveLength(1);

    const events = await readEvents(workspace.dir, "asked");
    const described = eventsOf(events, "model.described");
    expect(described.map((event) => event.data)).toEqual([
      {
        model: "qwen3:8b",
        context_window: 8_192,
        max_output_tokens: 2_048,
        source: "server",
        detail: "POST /api/show parameters num_ctx",
      },
    ]);
    // It comes before the run it measures, on the run's thread.
    const thread = eventsOf(events, "run.started")[0]!.stream.id;
    expect(described[0]!.stream).toEqual({ kind: "thread", id: thread });
    expect(eventsOf(events, "context.compiled")[0]!.data.budget).toBe(8_192 - 2_048);

    const requests = local.requests.length;
    const replayed = await spool(["replay", "asked", "--verify", "--json"]);
    expect(JSON.parse(replayed.stdout), replayed.stdout + replayed.stderr).toMatchObject({
      identical: true,
      reached: [],
    });
    expect(local.requests.length, "replay asks the server nothing").toBe(requests);
  });

  it("assumes a small window for a model nothing knows and says so once, with the line to add", async () => {
    let calls = 0;
    local = await startLocalModelServer({
      kind: "plain",
      model: "mystery-7b",
      answer: () => {
        calls += 1;
        return calls === 1
          ? { text: '<response final="false">working</response>', inputTokens: 2_000 }
          : { text: "<response>done</response>", inputTokens: 2_100 };
      },
    });
    const result = await spool(["run", "assistant", "--continuity", "assumed", "--prompt", "hi"], {
      SPOOL_PROVIDER: "compatible",
      SPOOL_BASE_URL: local.baseURL,
      SPOOL_MODEL: "mystery-7b",
    });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const line =
      'model_info: { "mystery-7b": { context_window: <tokens> } } (or set SPOOL_CONTEXT_WINDOW)';
    expect(result.stdout.split(line)).toHaveLength(2);
    expect(result.stdout).toContain("assuming 8192 tokens");
    expect(result.stdout).toContain("context 24%");
    expect(result.stdout).toContain("context 26%");
    const described = eventsOf(await readEvents(workspace.dir, "assumed"), "model.described");
    expect(described.map((event) => event.data.source)).toEqual(["default"]);
  });

  it("takes SPOOL_CONTEXT_WINDOW, then config.yaml's model_info, over the server's answer", async () => {
    local = await startLocalModelServer({
      kind: "ollama",
      model: "qwen3:8b",
      window: 4_096,
      answer: () => ({ text: "<response>ok</response>", inputTokens: 100 }),
    });
    const byEnv = await spool(["run", "assistant", "--continuity", "env", "--prompt", "hi"], {
      ...ollamaEnv("qwen3:8b"),
      SPOOL_CONTEXT_WINDOW: "16384",
    });
    expect(byEnv.code, byEnv.stdout + byEnv.stderr).toBe(0);
    mkdirSync(join(workspace.dir, ".ai"), { recursive: true });
    writeFileSync(
      join(workspace.dir, ".ai", "config.yaml"),
      'model_info:\n  "qwen3:8b": { context_window: 32768, max_output_tokens: 2048 }\n',
    );
    const byConfig = await spool(
      ["run", "assistant", "--continuity", "config", "--prompt", "hi"],
      ollamaEnv("qwen3:8b"),
    );
    expect(byConfig.code, byConfig.stdout + byConfig.stderr).toBe(0);
    expect(questions(), "neither run asks the server").toHaveLength(0);
    const sourceOf = async (continuity: string) =>
      eventsOf(await readEvents(workspace.dir, continuity), "model.described").map((event) => ({
        window: event.data.context_window,
        output: event.data.max_output_tokens,
        source: event.data.source,
      }));
    expect(await sourceOf("env")).toEqual([{ window: 16_384, output: 2_048, source: "env" }]);
    expect(await sourceOf("config")).toEqual([{ window: 32_768, output: 2_048, source: "config" }]);
    // The environment is outside the run: replay without SPOOL_CONTEXT_WINDOW takes it from the log.
    const replayed = await spool(["replay", "env", "--verify", "--json"]);
    expect(JSON.parse(replayed.stdout), replayed.stdout + replayed.stderr).toMatchObject({
      identical: true,
    });
  });

  it("the demo's scripted provider says its own window: no notice about an unknown one", async () => {
    const result = await spool(["run", "demo", "--continuity", "demo", "--prompt", "hello"]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).not.toContain("is unknown");
    const described = eventsOf(await readEvents(workspace.dir, "demo"), "model.described");
    expect(described.map((event) => [event.data.source, event.data.context_window])).toEqual([
      ["server", 200_000],
    ]);
  });

  it("refuses a SPOOL_CONTEXT_WINDOW that is not a number of tokens, naming it", async () => {
    const result = await spool(["run", "assistant", "--prompt", "hi"], {
      SPOOL_PROVIDER: "compatible",
      SPOOL_BASE_URL: "http://127.0.0.1:9/v1",
      SPOOL_MODEL: "m",
      SPOOL_CONTEXT_WINDOW: "8k",
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("SPOOL_CONTEXT_WINDOW must be a whole number of tokens");
  });
});
