/**
 * The local-server recipes of docs/providers.md, run as written: each recipe's command line is read
 * from the document, its environment given to `spool run` (only the port changed, to a loopback
 * server imitating that server), and the answer must reach the screen, with protocol tags in plain
 * text and with native tool calls alike.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runSpool } from "./support/cli.js";
import { createWorkspace, type Workspace } from "./support/cli-e2e.js";
import {
  type AnswerStyle,
  answerMarker,
  type LocalServer,
  type LocalServerKind,
  startLocalServer,
} from "./support/local-server.js";

const DOC = fileURLToPath(new URL("../docs/providers.md", import.meta.url));

/** Each recipe's heading and the default address it must use (the server's own). */
const RECIPES: { kind: LocalServerKind; heading: string; origin: string }[] = [
  { kind: "ollama", heading: "### Ollama", origin: "http://localhost:11434" },
  { kind: "vllm", heading: "### vLLM", origin: "http://localhost:8000" },
  { kind: "llamacpp", heading: "### llama.cpp (`llama-server`)", origin: "http://localhost:8080" },
  { kind: "lmstudio", heading: "### LM Studio", origin: "http://localhost:1234" },
];

/** A recipe's command line: its variables and spool's arguments. */
interface Recipe {
  env: Record<string, string>;
  args: string[];
}

/** The `spool run` line of the recipe under `heading`, parsed as a shell would. */
function readRecipe(heading: string): Recipe {
  const text = readFileSync(DOC, "utf8");
  const start = text.indexOf(`\n${heading}\n`);
  expect(start, `docs/providers.md has the section ${heading}`).toBeGreaterThan(0);
  const end = text.indexOf("\n#", start + heading.length + 2);
  const section = text.slice(start, end === -1 ? undefined : end);
  const lines = [...section.matchAll(/```sh\n([^`]*?)```/g)].flatMap((m) => m[1]!.split("\n"));
  const commands = lines.filter((line) => /\bspool run\b/.test(line));
  expect(commands, `one spool run line under ${heading}`).toHaveLength(1);
  const words = [...commands[0]!.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
  const env: Record<string, string> = {};
  while (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? "")) {
    const word = words.shift()!;
    env[word.slice(0, word.indexOf("="))] = word.slice(word.indexOf("=") + 1);
  }
  expect(words.slice(0, 2)).toEqual(["spool", "run"]);
  return { env, args: words.slice(1) };
}

describe("the local-server recipes of docs/providers.md", { timeout: 120_000 }, () => {
  let workspace: Workspace;
  let server: LocalServer | undefined;
  beforeEach(() => {
    workspace = createWorkspace("spool-recipes-");
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    workspace.remove();
  });

  /** Runs `recipe` against the imitation of `kind`; the recipe's origin becomes the server's. */
  async function runRecipe(
    kind: LocalServerKind,
    origin: string,
    recipe: Recipe,
    style: AnswerStyle,
  ) {
    const model = recipe.env.SPOOL_MODEL ?? "gguf/model.gguf";
    server = await startLocalServer(kind, model, style);
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(recipe.env)) {
      env[name] = value.includes(origin) ? value.replace(origin, server.origin) : value;
    }
    const args = [...recipe.args, "--continuity", `recipe-${kind}`];
    return runSpool(args, { cwd: workspace.dir, env: workspace.env(env) });
  }

  for (const { kind, heading, origin } of RECIPES) {
    it(`${heading.slice(4)}: the recipe names the server's own address and no key`, () => {
      const { env } = readRecipe(heading);
      const urls = Object.entries(env).filter(([name]) => name.endsWith("_BASE_URL"));
      expect(urls).toEqual([["OPENAI_BASE_URL", `${origin}/v1`]]);
      expect(Object.keys(env).some((name) => name.endsWith("_KEY"))).toBe(false);
    });

    it(`${heading.slice(4)}: protocol tags in plain text run their action and the answer reaches the screen`, async () => {
      const result = await runRecipe(kind, origin, readRecipe(heading), "protocol-tags");
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).not.toContain("demo");
      expect(result.stdout).toContain("clock.now");
      expect(result.stdout).toMatch(
        new RegExp(
          `${answerMarker(kind)} on a (Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\\.`,
        ),
      );
      const chats = server!.requests.filter((r) => r.path === "/v1/chat/completions");
      expect(chats).toHaveLength(1);
      expect(chats[0]!.body.model).toBe(readRecipe(heading).env.SPOOL_MODEL ?? "default");
      expect(chats[0]!.body.stream).toBe(true);
      // No key anywhere: the SDK's header carries the harmless placeholder.
      expect(chats[0]!.headers.authorization).toBe("Bearer no-key");
    });

    it(`${heading.slice(4)}: a native tool call runs, its result goes back, and the answer reaches the screen`, async () => {
      const result = await runRecipe(kind, origin, readRecipe(heading), "native-tools");
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toContain("clock.now");
      expect(result.stdout).toContain(`${answerMarker(kind)}, after the clock tool ran.`);
      const chats = server!.requests.filter((r) => r.path === "/v1/chat/completions");
      expect(chats).toHaveLength(2);
      const offered = (chats[0]!.body.tools as { function: { name: string } }[]).map(
        (tool) => tool.function.name,
      );
      expect(offered).toContain("clock_now");
      const messages = chats[1]!.body.messages as { role: string; tool_call_id?: string }[];
      expect(messages.find((message) => message.role === "tool")?.tool_call_id).toBe("call_clock");
    });
  }

  it("the issue's one-liner: OPENAI_BASE_URL and SPOOL_MODEL reach Ollama with a key for another provider set", async () => {
    const recipe: Recipe = {
      env: {
        OPENAI_BASE_URL: "http://localhost:11434/v1",
        SPOOL_MODEL: "llama3.2",
        ANTHROPIC_API_KEY: "sk-ant-api03-notforollama-notforollama-QQQQ",
      },
      args: ["run", "assistant"],
    };
    const result = await runRecipe("ollama", "http://localhost:11434", recipe, "protocol-tags");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(answerMarker("ollama"));
    const chat = server!.requests.find((r) => r.path === "/v1/chat/completions")!;
    expect(chat.headers.authorization).toBe("Bearer no-key");
    expect(JSON.stringify(server!.requests)).not.toContain("notforollama");
  });
});
