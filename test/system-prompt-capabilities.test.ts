/**
 * The model is told what it can call: the system prompt a run compiles lists the agents, relic
 * methods and workflows the directive's permissions match (and nothing they do not), read back
 * from the run's `context.compiled` artifact.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assembleAgent } from "../src/app/index.js";
import type { EventStore } from "../src/log/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import { createAgentRuntime } from "../src/runtime/index.js";
import { isEvent } from "../src/spec/index.js";
import { tempStore } from "./support/transcripts.js";

let store: EventStore;
let cleanup: () => Promise<void>;
let workspace: string;

beforeEach(async () => {
  ({ store, cleanup } = await tempStore("spool-capabilities-"));
  workspace = mkdtempSync(join(tmpdir(), "spool-capabilities-ws-"));
});
afterEach(async () => {
  await cleanup();
  rmSync(workspace, { recursive: true, force: true });
});

function write(path: string, text: string): void {
  mkdirSync(dirname(join(workspace, path)), { recursive: true });
  writeFileSync(join(workspace, path), text);
}

function directive(name: string, description: string, execute = ""): string {
  const base = name.split("/").at(-1)!;
  return `# ${base}

\`\`\`xml
<directive name="${base}" version="1.0.0">
  <metadata>
    <description>${description}</description>
    <model tier="fast" />
    <permissions><execute>${execute}</execute></permissions>
  </metadata>
</directive>
\`\`\`

Do the work.
`;
}

/** The system prompt of the first model call a turn on `directive` makes. */
async function compiledPrompt(name: string, continuity: string): Promise<string> {
  const assembled = assembleAgent({
    workspace,
    home: workspace,
    store,
    continuity,
    env: {},
    directive: name,
    provider: createScriptedProvider({ model: "scripted", script: ["<response>ok</response>"] }),
  });
  const runtime = createAgentRuntime({ store, ...assembled.options });
  try {
    const result = await runtime.submit(continuity, { text: "hi", actor: "ada", origin: "test" });
    expect(result.status).toBe("completed");
  } finally {
    await runtime.close();
    await assembled.close();
  }
  for await (const event of store.read({ continuity, types: ["context.compiled"] })) {
    if (isEvent(event, "context.compiled") && event.data.system !== undefined) {
      return (await store.artifacts.get(event.data.system)).toString("utf8");
    }
  }
  throw new Error("no context.compiled with a system prompt");
}

describe("the compiled system prompt", () => {
  it("lists the agents, relic methods and workflows the directive's permissions match", async () => {
    write(
      ".ai/directives/lead.md",
      directive(
        "lead",
        "Leads the work.",
        "<agent>research/*</agent><agent>lead</agent><relic>kv.get</relic><relic>kv.set</relic><workflow>deploy*</workflow>",
      ),
    );
    write(".ai/directives/research/web.md", directive("research/web", "Searches the web."));
    write(".ai/directives/research/papers.md", directive("research/papers", "Reads\n  papers."));
    write(".ai/directives/writer.md", directive("writer", "Writes prose."));
    write(".ai/workflows/deploy.yaml", "name: deploy\n");
    write(".ai/workflows/deploy-canary.yaml", "name: deploy-canary\n");
    write(".ai/workflows/cleanup.yaml", "name: cleanup\n");

    const prompt = await compiledPrompt("lead", "lead-run");
    const others = prompt.slice(prompt.indexOf("# Other actions\n"));
    expect(prompt).toContain("# Other actions\n");
    expect(others).toContain(
      ["- research/papers: Reads papers.", "- research/web: Searches the web."].join("\n"),
    );
    expect(others).toMatch(/- kv\.get: .+\n- kv\.set: .+/);
    expect(others).toContain("- deploy\n- deploy-canary");
    // Not permitted, or the directive itself: not offered.
    expect(others).not.toContain("writer");
    expect(others).not.toContain("- lead");
    expect(others).not.toContain("cleanup");
    expect(others).not.toMatch(/kv\.(delete|list|cas)/);
    expect(others).not.toContain("thread_summary");
  });

  it("has no Other actions section when the directive may use none", async () => {
    write(".ai/directives/solo.md", directive("solo", "Works alone.", "<tool>fs.read</tool>"));
    write(".ai/workflows/deploy.yaml", "name: deploy\n");
    const prompt = await compiledPrompt("solo", "solo-run");
    expect(prompt).toContain('You are running the directive "solo".');
    expect(prompt).not.toContain("# Other actions");
  });
});
