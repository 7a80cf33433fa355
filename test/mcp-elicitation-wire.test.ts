/**
 * Elicitation requests as a server really sends them, malformed ones included: the faulty test
 * server (a stdio MCP server built on the SDK) forwards whatever `params` it is given as
 * `elicitation/create`. Spool declines garbage with the reason, accepts a form of defaults, and
 * logs each answer as `mcp.elicitation-answered` before the server sees it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventStore } from "../src/log/index.js";
import { createMcpRelic } from "../src/mcp/index.js";
import { createRelicHost, type RelicHost } from "../src/relics/index.js";
import type { EventData } from "../src/spec/index.js";
import { FAULTY } from "./support/mcp-servers.js";
import { readAll, tempStore } from "./support/transcripts.js";

let store: EventStore;
let cleanup: () => Promise<void>;
let host: RelicHost;
const relic = createMcpRelic({
  name: "faulty",
  file: ".ai/mcp.json",
  timeoutSeconds: 30,
  fingerprint: "test",
  transport: "stdio",
  command: process.execPath,
  args: [FAULTY],
  env: {},
});

beforeAll(async () => {
  ({ store, cleanup } = await tempStore("spool-mcp-elicit-wire-"));
  host = createRelicHost({ store, continuity: "elicit", relics: [relic] });
});
afterAll(async () => {
  await host.close();
  await cleanup();
});

/** What the server got back for `params`, and the answer Spool logged. */
async function elicit(params: unknown) {
  const before = (await readAll(store, "elicit")).length;
  const result = (await host.call(relic.name, "call_tool", {
    tool: "elicit",
    arguments: { params },
  })) as { content: { text: string }[] };
  const logged = (await readAll(store, "elicit"))
    .slice(before)
    .filter((event) => event.type === "mcp.elicitation-answered")
    .map((event) => event.data as EventData<"mcp.elicitation-answered">);
  return { sent: JSON.parse(result.content[0]!.text) as unknown, logged };
}

describe("elicitation over the wire", () => {
  it("accepts a form of defaults, sending and logging the values", async () => {
    const { sent, logged } = await elicit({
      message: "Confirm",
      requestedSchema: {
        type: "object",
        properties: {
          count: { type: "integer", default: 3 },
          apiKey: { type: "string", default: "k" },
        },
      },
    });
    expect(sent).toEqual({ action: "accept", content: { count: 3, apiKey: "k" } });
    expect(logged).toEqual([
      {
        server: "faulty",
        mode: "form",
        message: "Confirm",
        fields: ["count", "apiKey"],
        action: "accept",
        content: { count: 3, apiKey: "[redacted]" },
      },
    ]);
  });

  it.each([
    [
      "a schema that is no object schema",
      { message: "m", requestedSchema: "nonsense" },
      'requestedSchema must be {"type": "object", "properties": {…}}',
    ],
    [
      "a default of the wrong type",
      {
        message: "m",
        requestedSchema: { type: "object", properties: { n: { type: "integer", default: "x" } } },
      },
      'field "n": default: Invalid input: expected number, received string',
    ],
    [
      "no message",
      { requestedSchema: { type: "object", properties: {} } },
      "the request has no message string",
    ],
  ])("declines %s with the reason, logged", async (_what, params, message) => {
    const { sent, logged } = await elicit(params);
    expect(sent).toEqual({ action: "decline" });
    expect(logged).toEqual([
      expect.objectContaining({
        action: "decline",
        reason: { code: "elicitation.invalid-request", message },
      }),
    ]);
  });
});
