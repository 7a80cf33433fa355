/**
 * The client under test for `@modelcontextprotocol/conformance`'s client scenarios: Spool's own
 * MCP client code (`openMcpConnection`, `createMcpRelic` through a relic host) against the
 * scenario's server URL (the last argument). Scenario in `MCP_CONFORMANCE_SCENARIO`. It
 * initializes, lists the tools and calls each one with arguments made from its schema.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openEventStore } from "../../src/log/index.js";
import { createMcpRelic } from "../../src/mcp/index.js";
import { createRelicHost } from "../../src/relics/index.js";

const url = process.argv.at(-1)!;
const dir = mkdtempSync(join(tmpdir(), "spool-conformance-"));
const store = await openEventStore({ db: join(dir, "store"), durability: "fast" });
const relic = createMcpRelic({
  name: "conformance",
  file: "conformance",
  transport: "http",
  url,
  headers: {},
  timeoutSeconds: 20,
  fingerprint: "conformance",
});
const host = createRelicHost({ store, continuity: "conformance", relics: [relic] });
let code = 0;
try {
  const { tools } = (await host.call(relic.name, "list_tools", {})) as {
    tools: { name: string; inputSchema: Record<string, unknown> }[];
  };
  for (const tool of tools) {
    try {
      await host.call(relic.name, "call_tool", {
        tool: tool.name,
        arguments: example(tool.inputSchema),
      });
    } catch (error) {
      process.stderr.write(`${tool.name}: ${(error as Error).message}\n`);
    }
  }
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  code = 1;
} finally {
  await host.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);

/** Arguments a schema accepts: each required property given a value of its type. */
function example(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set((schema.required ?? []) as string[]);
  const out: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) {
    if (!required.has(name)) continue;
    out[name] =
      property.default ??
      (property.type === "number" || property.type === "integer"
        ? 1
        : property.type === "boolean"
          ? true
          : property.type === "array"
            ? []
            : property.type === "object"
              ? {}
              : "test");
  }
  return out;
}
