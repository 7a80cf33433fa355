import type { AnyTool } from "../actions/index.js";
import type { AgentManifest } from "../directives/index.js";
import type { RuntimeSources } from "../runtime/index.js";
import {
  parseSourceManifest,
  SOURCE_SCHEMES,
  type SourceAdapter,
  type SourceAdapters,
  type SourceDefinition,
  type SourceManifest,
} from "../sources/index.js";
import { ConfigError } from "../spec/index.js";

/**
 * The sources of an agent from its manifest (`sources`, `source_actions`), for
 * `AgentRuntimeOptions.sources`; `undefined` when it declares none and does not let the model add
 * any. The access policy admits the workspace, `source_actions`' allow lists, and each declared
 * source's own target (its path, or its URL's host), so what the manifest declares reads and what
 * the model adds is checked against the same lists; commands run only when the agent has
 * `shell.run`. A problem in the sections is the manifest's `ConfigError` (`config.agent`), each
 * issue at its line.
 */
export function agentSources(options: {
  manifest: AgentManifest;
  workspace: string;
  tools: readonly AnyTool[];
  adapters: SourceAdapters;
  /** Where `${NAME}` in sources' targets and options is read from. */
  env: Readonly<Record<string, string | undefined>>;
  /** The manifest file as messages name it. */
  manifestFile?: string;
  /** The page-event source of the agent's browser (`browser:`), declared beside the manifest's. */
  browser?: { entry: Readonly<Record<string, unknown>>; adapter: SourceAdapter };
}): RuntimeSources | undefined {
  const parsed = parseSections(options.manifest, options.browser?.entry);
  if (parsed.definitions.length === 0 && !parsed.actions.enabled) return undefined;
  const declared = parsed.definitions;
  return {
    manifest: parsed,
    access: {
      workspace: options.workspace,
      allowPaths: unique([...parsed.actions.allowPaths, ...declared.flatMap(declaredPath)]),
      allowHosts: unique([...parsed.actions.allowHosts, ...declared.flatMap(declaredHost)]),
      shell: options.tools.some((tool) => tool.name === "shell.run"),
    },
    adapters: options.browser
      ? { ...options.adapters, browser: options.browser.adapter }
      : options.adapters,
    env: options.env,
    ...(options.manifestFile !== undefined ? { manifestFile: options.manifestFile } : {}),
  };
}

function parseSections(manifest: AgentManifest, extra?: unknown): SourceManifest {
  const { source_actions } = manifest.sources;
  const declared = manifest.sources.sources;
  // The browser's source goes after the manifest's own, so their issues keep their indexes.
  const sources =
    extra === undefined ? declared : [...(Array.isArray(declared) ? declared : []), extra];
  try {
    return parseSourceManifest({ sources, source_actions });
  } catch (error) {
    if (!(error instanceof ConfigError) || error.code !== "config.sources") throw error;
    const listed = Array.isArray(error.details.issues) ? error.details.issues : [];
    throw manifest.sources.issues(
      listed.map((issue: { path?: unknown; message?: unknown; source?: unknown }) => ({
        path: String(issue.path ?? "sources"),
        message: `${String(issue.message)}${typeof issue.source === "string" ? ` (source "${issue.source}")` : ""}`,
      })),
    );
  }
}

function declaredPath(definition: SourceDefinition): string[] {
  return definition.kind === "file" || definition.kind === "dataset" ? [definition.target] : [];
}

function declaredHost(definition: SourceDefinition): string[] {
  if (SOURCE_SCHEMES[definition.kind] === undefined) return [];
  try {
    return [new URL(definition.target).host];
  } catch {
    return [];
  }
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
