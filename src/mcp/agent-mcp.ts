import type { AnyTool } from "../actions/index.js";
import {
  type AgentManifest,
  createItemSpace,
  displayPath,
  matchesGlob,
} from "../directives/index.js";
import type { EventStore } from "../log/index.js";
import type { RelicCallOptions } from "../relics/index.js";
import { type AnyNewEvent, ConfigError } from "../spec/index.js";
import { loadMcpConfig, type McpServerConfig } from "./mcp-config.js";
import { type McpListings, resolveMcpListings } from "./mcp-listing.js";
import { createMcpRelic, type McpRelic, mcpRelicName } from "./mcp-relic.js";
import { type McpRefusedTool, mcpServerTools } from "./mcp-tools.js";

/** The MCP servers an agent uses and the tools each offers, ready for assembly. */
export interface PreparedMcp {
  /** The servers the manifest selects, from `mcp.json`. */
  servers: readonly McpServerConfig[];
  /** Each server's tools (a server missing here offers none). */
  listings: McpListings;
  /** Servers that could not be listed, with why. */
  failed: ReadonlyMap<string, string>;
  /** Events recording newly listed tools, to append with `recordMcpListings`. */
  records: AnyNewEvent[];
  fetch?: typeof fetch;
}

/** Options of `prepareAgentMcp`. */
export interface PrepareMcpOptions {
  workspace: string;
  home?: string;
  env: Readonly<Record<string, string | undefined>>;
  store: EventStore;
  continuity: string;
  /** The agent manifest (default `assistant`); one without `mcp:` uses no server. */
  agent?: string;
  /** List servers the log has no tools of (see `resolveMcpListings`); false for replay. */
  discover: boolean;
  fetch?: typeof fetch;
}

/**
 * The MCP servers of the agent `agent` and their tools. Reads `mcp.json` only when the manifest
 * has an `mcp:` entry, so a broken `mcp.json` never stops an agent that uses no server; a
 * manifest that names a server `mcp.json` lacks is a `ConfigError` naming both files. Resolves
 * empty when the manifest does not exist (assembly reports that itself).
 */
export async function prepareAgentMcp(options: PrepareMcpOptions): Promise<PreparedMcp> {
  const space = createItemSpace({
    workspace: options.workspace,
    env: options.env,
    ...(options.home !== undefined ? { home: options.home } : {}),
  });
  let manifest: AgentManifest;
  try {
    manifest = space.manifest(options.agent ?? "assistant");
  } catch {
    return { servers: [], listings: new Map(), failed: new Map(), records: [] };
  }
  const servers = selectMcpServers(manifest, options);
  const { listings, failed, records } = await resolveMcpListings({
    servers,
    store: options.store,
    continuity: options.continuity,
    discover: options.discover,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return { servers, listings, failed, records, ...(options.fetch ? { fetch: options.fetch } : {}) };
}

/**
 * Appends the events of `prepared.records` (newly listed tools) to `store`, once: call it after
 * the continuity exists (`continuity.created`), before or after the agent runs.
 */
export async function recordMcpListings(store: EventStore, prepared: PreparedMcp): Promise<void> {
  const records = prepared.records.splice(0);
  for (const record of records) await store.append(record);
}

/**
 * The servers `manifest`'s `mcp:` entry selects from `mcp.json`: `all` (every server), a list of
 * server names, or `none`/absent (none). Throws `ConfigError` (`config.mcp`) for another shape or
 * a name that no `mcp.json` declares, listing the names that exist.
 */
export function selectMcpServers(
  manifest: Pick<AgentManifest, "name" | "mcp" | "source">,
  options: Pick<PrepareMcpOptions, "workspace" | "home" | "env">,
): McpServerConfig[] {
  const selection = manifest.mcp;
  if (selection === undefined || selection === "none" || selection === false) return [];
  const file = displayPath(manifest.source.path, options.workspace, options.home);
  const names = Array.isArray(selection) ? selection : undefined;
  if (selection !== "all" && (!names || names.some((name) => typeof name !== "string"))) {
    throw new ConfigError(
      "config.mcp",
      `${file}: "mcp" must be "all", "none" or a list of server names`,
      {
        hint: "Write mcp: all, or mcp: [filesystem, everything]",
        details: { file, field: "mcp" },
      },
    );
  }
  const all = loadMcpConfig(options);
  if (!names) return all;
  return (names as string[]).map((name) => {
    const server = all.find((candidate) => candidate.name === name);
    if (!server) {
      throw new ConfigError(
        "config.mcp",
        `${file}: "mcp" names server "${name}", which no mcp.json declares`,
        {
          hint: `Declare it in .ai/mcp.json or ~/.ai/mcp.json, or use one of: ${all.map((s) => s.name).join(", ") || "(none declared)"}`,
          details: { file, field: "mcp", server: name },
        },
      );
    }
    return server;
  });
}

/** What assembly adds for an agent's MCP servers. */
export interface AgentMcp {
  /** One relic per server (`mcp-<server>`), for the agent's relic host. */
  relics: McpRelic[];
  /** The `mcp.<server>.<tool>` tools over the host's `call`. */
  tools: AnyTool[];
  /** Tools refused (bad name or schema), by server. */
  refused: { server: string; refused: McpRefusedTool[] }[];
}

/** The relic host's `call`, as the tools reach it. */
export type HostCall = (
  relic: string,
  method: string,
  parameters: unknown,
  options: RelicCallOptions,
) => Promise<unknown>;

/**
 * The relics and tools of `prepared`, the tools calling the relics through `call` (the host
 * assembly makes). Tools that `manifest`'s `tools:` switch off (`enabled: false` in the last
 * entry matching their name) are left out. Throws `ConfigError` when two servers' names differ
 * only in case (their relic names would clash).
 */
export function agentMcp(
  prepared: PreparedMcp,
  call: HostCall,
  manifest?: Pick<AgentManifest, "tools">,
): AgentMcp {
  const relics: McpRelic[] = [];
  const tools: AnyTool[] = [];
  const refused: AgentMcp["refused"] = [];
  const relicNames = new Set<string>();
  for (const server of prepared.servers) {
    const relicName = mcpRelicName(server.name);
    if (relicNames.has(relicName)) {
      throw new ConfigError(
        "config.mcp",
        `two MCP servers are named "${server.name}" in different case`,
        {
          hint: "Give every server a name that differs in more than case",
          details: { server: server.name },
        },
      );
    }
    relicNames.add(relicName);
    relics.push(createMcpRelic(server, prepared.fetch ? { fetch: prepared.fetch } : {}));
    const listed = prepared.listings.get(server.name) ?? [];
    const made = mcpServerTools(server.name, listed, (method, parameters, options) =>
      call(relicName, method, parameters, options),
    );
    tools.push(...made.tools.filter((tool) => switchedOn(tool.name, manifest)));
    if (made.refused.length > 0) refused.push({ server: server.name, refused: made.refused });
  }
  return { relics, tools, refused };
}

function switchedOn(name: string, manifest: Pick<AgentManifest, "tools"> | undefined): boolean {
  const last = manifest?.tools.filter((entry) => matchesGlob(entry.pattern, name)).at(-1);
  return last === undefined || last.enabled;
}
