// biome-ignore-all lint/suspicious/noTemplateCurlyInString: mcp.json's own ${env:X} syntax
/**
 * The client under test for `@modelcontextprotocol/conformance`'s client scenarios: Spool's own
 * MCP client (`loadMcpConfig` reading an `.ai/mcp.json`, `createMcpRelic` through a relic host)
 * against the scenario's server URL (the last argument). The scenario is in
 * `MCP_CONFORMANCE_SCENARIO`; what a user would configure for it (a pre-registered client, client
 * credentials) comes in `MCP_CONFORMANCE_CONTEXT` and is written to `mcp.json` as a user would,
 * its secrets as `${env:…}` references. It initializes, lists the tools and calls each one with
 * arguments made from its schema; elicitation is answered by the default policy, OAuth by
 * Spool's provider with its credentials file in a temporary config folder.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openEventStore } from "../../src/log/index.js";
import { createMcpRelic, loadMcpConfig } from "../../src/mcp/index.js";
import { createRelicHost } from "../../src/relics/index.js";

const url = process.argv.at(-1)!;
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}") as {
  client_id?: string;
  client_secret?: string;
  private_key_pem?: string;
  signing_algorithm?: string;
};
const dir = mkdtempSync(join(tmpdir(), "spool-conformance-"));
const env: Record<string, string> = { SPOOL_CONFIG_DIR: join(dir, "config") };
const oauth: Record<string, unknown> = {
  // Where an authorization server supports client metadata documents (SEP-991), Spool names
  // its document's URL as its client id instead of registering.
  clientMetadataUrl: "https://conformance-test.local/client-metadata.json",
};
if (context.client_id) oauth.clientId = context.client_id;
if (context.client_secret) {
  env.CONFORMANCE_CLIENT_SECRET = context.client_secret;
  oauth.clientSecret = "${env:CONFORMANCE_CLIENT_SECRET}";
}
if (context.private_key_pem) {
  env.CONFORMANCE_PRIVATE_KEY = context.private_key_pem;
  oauth.privateKey = "${env:CONFORMANCE_PRIVATE_KEY}";
  oauth.signingAlgorithm = context.signing_algorithm;
}
if (scenario.startsWith("auth/client-credentials")) oauth.grantType = "client_credentials";
mkdirSync(join(dir, ".ai"));
writeFileSync(
  join(dir, ".ai", "mcp.json"),
  JSON.stringify({ servers: { conformance: { type: "http", url, timeout: 20, oauth } } }),
);
const [server] = loadMcpConfig({ workspace: dir, home: dir, env });
const store = await openEventStore({ db: join(dir, "store"), durability: "fast" });
const relic = createMcpRelic(server!);
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
