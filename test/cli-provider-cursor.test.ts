import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runSpool } from "./support/cli.js";
import { createWorkspace, eventsOf, readEvents, type Workspace } from "./support/cli-e2e.js";
import { ResponsesServer } from "./support/responses-server.js";

// `spool run` on OpenAI Responses as a user meets it: each turn continues the provider's
// conversation (`previous_response_id`, only the new message); when the server has forgotten it,
// the turn is sent whole and goes on; `spool replay --verify` reproduces it all without a call.

const KEY = "sk-test-cli-cursor-0123456789abcdefABCD";
let workspace: Workspace;
let server: ResponsesServer;

beforeEach(async () => {
  workspace = createWorkspace("spool-cli-cursor-");
  server = new ResponsesServer();
  await server.start();
});
afterEach(async () => {
  await server.close();
  workspace.remove();
});

describe("spool run on OpenAI Responses", () => {
  it("continues each turn from the provider cursor, rebuilds when it is gone, and replays", async () => {
    const env = workspace.env({
      SPOOL_PROVIDER: "openai-responses",
      OPENAI_API_KEY: KEY,
      OPENAI_BASE_URL: server.url,
    });
    const turn = async (prompt: string) => {
      const args = ["run", "assistant", "--continuity", "c", "--prompt", prompt];
      const result = await runSpool(args, { cwd: workspace.dir, env });
      expect(result.code, result.stdout + result.stderr).toBe(0);
      return result.stdout;
    };
    server.answer(
      { text: "<response>Hello, Ada.</response>" },
      { text: "<response>Again, hello.</response>" },
      { text: "<response>Still here.</response>" },
    );
    expect(await turn("hello")).toContain("Hello, Ada.");
    expect(await turn("again")).toContain("Again, hello.");
    server.forget();
    expect(await turn("still there?")).toContain("Still here.");

    const sent = server.requests.map((request) => ({
      previous: request.previous_response_id,
      input: request.input.length,
    }));
    expect(sent).toEqual([
      { previous: undefined, input: 1 },
      { previous: "resp_1", input: 1 },
      { previous: "resp_2", input: 1 },
      { previous: undefined, input: 5 },
    ]);
    expect(server.requests[1]!.input[0]).toMatchObject({ role: "user" });
    expect(JSON.stringify(server.requests[1]!.input)).toContain("again");
    const events = await readEvents(workspace.dir, "c");
    expect(eventsOf(events, "provider.cursor-rotated").map((event) => event.data)).toEqual([
      expect.objectContaining({ previous_response_id: "resp_2", reason: "expired" }),
    ]);
    for (const event of events) expect(JSON.stringify(event)).not.toContain(KEY);

    const calls = server.requests.length;
    const replayed = await runSpool(["replay", "c", "--verify"], { cwd: workspace.dir, env });
    expect(replayed.code, replayed.stdout + replayed.stderr).toBe(0);
    expect(server.requests).toHaveLength(calls);
  });
});
