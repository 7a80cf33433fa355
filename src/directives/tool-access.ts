import type { AgentManifest } from "./agent-manifest.js";
import { deepMerge } from "./deep-merge.js";
import type { Directive } from "./directive.js";
import { deniedMessage, matchesGlob, permits } from "./permissions.js";
import type { SpaceConfig } from "./space-config.js";

/** Whether an agent may call a tool, and with which options. */
export type ToolAccess =
  | { allowed: true; options: Record<string, unknown> }
  | { allowed: false; reason: string };

/** What `resolveToolAccess` weighs: the directive, the agent's manifest (if any), the config. */
export interface ToolAccessContext {
  directive: Pick<Directive, "name" | "permissions">;
  manifest?: Pick<AgentManifest, "name" | "tools">;
  config: Pick<SpaceConfig, "tools">;
}

/**
 * Whether tool `name` may run, combining three layers, each of which can only narrow:
 *
 * 1. the directive's `<permissions>` must grant it (`permits`);
 * 2. with a manifest, some `tools` entry must match it, and the last matching entry decides
 *    `enabled`; a tool the config switches off (`enabled: false`) is enabled only by an entry
 *    that names it exactly, never by a glob. Without a manifest, the config's `enabled` decides;
 * 3. options are the config's defaults for the tool, overridden by every matching manifest entry
 *    in file order (`deepMerge`).
 *
 * Pure; never throws. A refusal's `reason` says what to change.
 */
export function resolveToolAccess(name: string, context: ToolAccessContext): ToolAccess {
  const { directive, manifest, config } = context;
  if (!permits(directive.permissions, "tool", name)) {
    return { allowed: false, reason: deniedMessage(directive.name, "tool", name) };
  }
  const defaults = config.tools[name];
  if (!manifest) {
    if (defaults?.enabled === false) {
      return {
        allowed: false,
        reason: `tool "${name}" is switched off in config.yaml (tools: id ${name}, enabled: false); enable it there or in an agent manifest`,
      };
    }
    return { allowed: true, options: { ...defaults?.options } };
  }
  const matching = manifest.tools.filter((entry) => matchesGlob(entry.pattern, name));
  const last = matching.at(-1);
  const file = `agents/${manifest.name}.yaml`;
  if (!last) {
    return {
      allowed: false,
      reason: `agent "${manifest.name}" does not enable tool "${name}": add "${name}" to tools in ${file}`,
    };
  }
  if (!last.enabled) {
    return {
      allowed: false,
      reason: `tool "${name}" is switched off for agent "${manifest.name}" (enabled: false in ${file})`,
    };
  }
  if (
    defaults?.enabled === false &&
    !matching.some((entry) => entry.pattern === name && entry.enabled)
  ) {
    return {
      allowed: false,
      reason: `tool "${name}" is off by default in config.yaml; a glob does not switch it on: list "${name}" by name in tools in ${file}`,
    };
  }
  let options: unknown = { ...defaults?.options };
  for (const entry of matching) options = deepMerge(options, entry.options);
  return { allowed: true, options: options as Record<string, unknown> };
}
