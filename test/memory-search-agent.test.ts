/**
 * `memory.search` reaches an agent: assembled with the store's memory index, the built-in
 * assistant (whose permissions grant every tool) is offered the tool, and a run whose model
 * (scripted) calls it gets the hit of another continuity back in its result, through the action
 * path (dispatched, succeeded in the log). Without an index there is no such tool.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assembleAgent } from "../src/app/index.js";
import { openMemoryIndex } from "../src/memory/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import { createAgentRuntime } from "../src/runtime/index.js";
import { continuityStart, pinEvent, write } from "./support/memory-log.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const temp = useTempStore("spool-memory-tool-");
let workspace: string;
beforeAll(() => {
  workspace = mkdtempSync(join(tmpdir(), "spool-memory-tool-ws-"));
});
afterAll(() => {
  rmSync(workspace, { recursive: true, force: true });
});

const FACT = "The billing service deploys only from the release branch.";
const CALL = `<action type="tool" mode="sync" id="m1">${JSON.stringify({
  name: "memory.search",
  parameters: { query: "which branch does billing deploy from?", limit: 3 },
})}</action>`;

describe("memory.search given to an agent", () => {
  it("is offered with an index, and a model's call returns another continuity's fact", async () => {
    const store = temp.store;
    await write(store, [...continuityStart("past", "ada"), pinEvent("past", "p-branch", FACT)]);
    const index = await openMemoryIndex({ store, db: join(temp.dir, "store"), env: {} });
    try {
      const provider = createScriptedProvider({
        model: "scripted",
        script: [
          { when: "billing", text: CALL },
          { when: "<result id=", text: "<response>From the release branch.</response>" },
        ],
      });
      const base = { workspace, home: workspace, store, continuity: "now", env: {}, provider };
      const without = assembleAgent(base);
      expect(without.options.agent.tools.map((tool) => tool.name)).not.toContain("memory.search");
      await without.close();

      const assembled = assembleAgent({ ...base, memoryIndex: index });
      expect(assembled.options.agent.tools.map((tool) => tool.name)).toContain("memory.search");
      const runtime = createAgentRuntime({ store, ...assembled.options });
      const result = await runtime.submit("now", {
        text: "Which branch does billing deploy from?",
        actor: "ada",
        origin: "test",
      });
      await runtime.close();
      await assembled.close();
      expect(result.status).toBe("completed");

      const events = await readAll(store, "now");
      const intent = events.find((event) => event.type === "action.dispatched");
      expect(intent?.data).toMatchObject({ name: "memory.search" });
      const completed = events.find((event) => event.type === "action.succeeded");
      const found = JSON.stringify(completed?.data);
      expect(found).toContain(FACT);
      expect(found).toContain('"continuity":"past"');
    } finally {
      await index.close();
    }
  });
});
