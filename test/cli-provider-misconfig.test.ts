/**
 * Misconfiguration is an error, not the demo: `spool run` and `spool chat` with a provider setting
 * that does not resolve print one line naming the setting, what it accepts and the nearest valid
 * value, and exit 2; only the complete absence of provider variables runs the demo.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runSpool } from "./support/cli.js";
import { createWorkspace, type Workspace } from "./support/cli-e2e.js";

const KEY = "sk-ant-api03-misconfigmisconfig-ZZZZ";

describe("a provider misconfiguration through the CLI", { timeout: 60_000 }, () => {
  let workspace: Workspace;
  beforeEach(() => {
    workspace = createWorkspace("spool-misconfig-");
  });
  afterEach(() => workspace.remove());

  const spool = (args: string[], env: Record<string, string>) =>
    runSpool(args, { cwd: workspace.dir, env: workspace.env(env) });

  const CASES: { name: string; env: Record<string, string>; says: string[] }[] = [
    {
      name: "a misspelt provider",
      env: { SPOOL_PROVIDER: "antropic", ANTHROPIC_API_KEY: KEY },
      says: [
        'Unknown provider "antropic" from SPOOL_PROVIDER (did you mean anthropic?)',
        "Set SPOOL_PROVIDER to one of: anthropic, openai, openai-responses, ollama, vllm, llamacpp,",
      ],
    },
    {
      name: "a provider that does not exist",
      env: { SPOOL_PROVIDER: "nope" },
      says: ['Unknown provider "nope" from SPOOL_PROVIDER.', "Set SPOOL_PROVIDER to one of:"],
    },
    {
      name: "a base URL without a scheme",
      env: { OPENAI_BASE_URL: "localhost:11434/v1", SPOOL_MODEL: "llama3.2" },
      says: [
        'The base URL from OPENAI_BASE_URL has no scheme, not http(s): "localhost:11434/v1" (did you mean "http://localhost:11434/v1"?)',
        "Set OPENAI_BASE_URL to the server's http:// or https:// address",
      ],
    },
    {
      name: "a base URL of another protocol",
      env: {
        SPOOL_PROVIDER: "ollama",
        SPOOL_BASE_URL: "ws://localhost:11434/v1",
        SPOOL_MODEL: "m",
      },
      says: [
        "The base URL from SPOOL_BASE_URL uses ws, not http(s)",
        '"http://localhost:11434/v1"',
      ],
    },
    {
      name: "a local server's base URL without /v1",
      env: {
        SPOOL_PROVIDER: "ollama",
        OPENAI_BASE_URL: "http://localhost:11434",
        SPOOL_MODEL: "m",
      },
      says: [
        'The base URL from OPENAI_BASE_URL has no path: "http://localhost:11434" (did you mean "http://localhost:11434/v1"?)',
        "ollama serves the OpenAI API under /v1",
      ],
    },
    {
      name: "a provider with no model",
      env: { SPOOL_PROVIDER: "vllm" },
      says: [
        "No model named for provider vllm (chosen by SPOOL_PROVIDER)",
        "Set SPOOL_MODEL (or the `model` option) to the model vLLM serves",
        "`curl http://127.0.0.1:8000/v1/models` lists them",
      ],
    },
    {
      name: "a model and no provider",
      env: { SPOOL_MODEL: "llama3.2" },
      says: [
        'No model provider is configured: SPOOL_MODEL names model "llama3.2"',
        "or OPENAI_BASE_URL alone for a local server",
      ],
    },
    {
      name: "a key under a misspelt variable",
      env: { SPOOL_PROVIDER: "anthropic", ANTROPIC_API_KEY: KEY },
      says: [
        "No API key for provider anthropic (ANTROPIC_API_KEY is set: did you mean ANTHROPIC_API_KEY?)",
      ],
    },
    {
      name: "a misspelt SPOOL_ variable",
      env: { SPOOL_PROVDER: "ollama" },
      says: [
        "No model provider is configured (SPOOL_PROVDER is set: did you mean SPOOL_PROVIDER?)",
      ],
    },
  ];

  for (const { name, env, says } of CASES) {
    it(`${name} exits 2 with the setting, what it accepts and the nearest value, and runs no demo`, async () => {
      const result = await spool(["run", "assistant", "--continuity", "misconfigured"], env);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      const lines = result.stderr.trimEnd().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]!.startsWith("spool: ")).toBe(true);
      for (const text of says) expect(lines[0]).toContain(text);
      expect(result.stderr).not.toContain("built-in demo");
      expect(result.stderr).not.toContain(KEY);
    });
  }

  it("spool chat refuses the same way", async () => {
    const result = await spool(["chat", "--new"], { SPOOL_PROVIDER: "antropic" });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("(did you mean anthropic?)");
    expect(result.stdout).not.toContain("built-in demo");
  });

  it("no provider variable at all runs the demo and exits 0", async () => {
    const result = await spool(["run", "demo", "--continuity", "demo"], { SPOOL_DB: ".spool" });
    expect(result.code).toBe(0);
    expect(result.stdout.split("\n")[0]).toMatch(
      /^No model provider is configured: running Spool's built-in demo agent on the scripted provider\. Set ANTHROPIC_API_KEY or OPENAI_API_KEY, or OPENAI_BASE_URL alone for a local server/,
    );
  });
});
