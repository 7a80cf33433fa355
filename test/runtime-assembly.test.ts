import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assembleAgent } from "../src/app/index.js";
import type { EventStore } from "../src/log/index.js";
import { createAgentRuntime } from "../src/runtime/index.js";
import { ConfigError } from "../src/spec/index.js";
import { readAll, tempStore } from "./support/transcripts.js";

let store: EventStore;
let cleanup: () => Promise<void>;
let workspace: string;
let home: string;

beforeEach(async () => {
  ({ store, cleanup } = await tempStore("spool-assembly-"));
  workspace = mkdtempSync(join(tmpdir(), "spool-assembly-ws-"));
  home = mkdtempSync(join(tmpdir(), "spool-assembly-home-"));
  writeFileSync(join(workspace, "notes.md"), "TODO: test the demo\n");
});
afterEach(async () => {
  await cleanup();
  rmSync(workspace, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

const assemble = (env: Record<string, string | undefined>, extra: object = {}) =>
  assembleAgent({ workspace, home, store, continuity: "home", env, ...extra });

describe("assembling an agent", () => {
  it("runs the demo agent on the scripted provider when no key is set, and records its manifest", async () => {
    const assembled = assemble({});
    expect(assembled).toMatchObject({ demo: true, providerName: "scripted" });
    expect(assembled.demoReason).toMatch(/demo agent on the scripted provider/);
    expect(assembled.options.agent.tools.map((tool) => tool.name).sort()).toEqual([
      "clock.now",
      "fs.list",
      "fs.read",
      "fs.search",
    ]);
    const runtime = createAgentRuntime({ store, ...assembled.options });
    const result = await runtime.submit("home", { text: "hi", actor: "ada", origin: "test" });
    await runtime.close();
    await assembled.close();
    expect(result.status).toBe("completed");
    expect(result.result).toContain("Searched 1 files; lines with TODO: 1");
    const started = (await readAll(store, "home")).find((event) => event.type === "thread.started");
    expect(started?.data).toMatchObject({ directive: "demo", agent: "demo" });
  });

  it("maps the directive's tier to the provider's model and enables the manifest's tools only", async () => {
    const assembled = assemble({ ANTHROPIC_API_KEY: "sk-ant-test-assembly-0123456789" });
    expect(assembled).toMatchObject({
      demo: false,
      providerName: "anthropic",
      model: "claude-sonnet-5-5",
    });
    const names = assembled.options.agent.tools.map((tool) => tool.name);
    expect(names).toContain("fs.write");
    expect(names).not.toContain("shell.run");
    expect(names).not.toContain("http.fetch");
    expect(assembled.options.agent.permits("tool", "shell.run")).toBe(false);
    expect(assembled.options.agent.permits("internal", "set_variable")).toBe(true);
    await assembled.close();
  });

  it("takes SPOOL_MODEL over the tier's model", async () => {
    const assembled = assemble({
      ANTHROPIC_API_KEY: "sk-ant-test-assembly-0123456789",
      SPOOL_MODEL: "claude-haiku-4-5",
    });
    expect(assembled.model).toBe("claude-haiku-4-5");
    await assembled.close();
  });

  it("applies a project directive's limits and typed inputs", async () => {
    mkdirSync(join(workspace, ".ai", "directives"), { recursive: true });
    writeFileSync(
      join(workspace, ".ai", "directives", "brief.md"),
      `# Brief

\`\`\`xml
<directive name="brief" version="1.0.0">
  <metadata>
    <description>Short answers.</description>
    <model tier="fast" />
    <limits max_turns="3" max_wall_seconds="30" />
  </metadata>
  <inputs>
    <input name="count" type="integer" required="true">How many.</input>
  </inputs>
</directive>
\`\`\`

Answer in $count words.
`,
    );
    const assembled = assemble({}, { directive: "brief", inputs: { count: "7" } });
    expect(assembled.options.agent.limits).toEqual({ maxTurns: 3, maxWallMs: 30_000 });
    expect(assembled.options.agent.instructions).toContain("Answer in 7 words.");
    expect(assembled.options.agent.inputs).toEqual({ count: 7 });
    await assembled.close();
    expect(() => assemble({}, { directive: "brief", inputs: { count: "seven" } })).toThrow(
      ConfigError,
    );
    expect(() => assemble({}, { directive: "nope" })).toThrow(/nope/);
  });
});

describe("relics from config.yaml", () => {
  it("offers an http relic configured in the project's config, and refuses a bad entry with file, line and field", async () => {
    mkdirSync(join(workspace, ".ai"), { recursive: true });
    writeFileSync(
      join(workspace, ".ai", "config.yaml"),
      "relics:\n  - id: weather\n    type: http\n    base_url: http://127.0.0.1:9/v1\n",
    );
    const assembled = assemble({});
    const relics = assembled.options.executors?.find((executor) => executor.type === "relic");
    expect(relics?.canRun?.("weather.request")).toBe(true);
    expect(relics?.canRun?.("kv.get")).toBe(true);
    await assembled.close();
    writeFileSync(
      join(workspace, ".ai", "config.yaml"),
      "relics:\n  - id: weather\n    type: http\n    base_url: not a url\n",
    );
    expect(() => assemble({})).toThrow(/config\.yaml:4.*base_url/s);
  });
});
