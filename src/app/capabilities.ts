import { type Directive, type ItemSpace, permits } from "../directives/index.js";
import type { RelicHost } from "../relics/index.js";

/** What `describeCapabilities` lists from. */
export interface CapabilitySources {
  space: ItemSpace;
  relics: RelicHost;
  /** The project's workflow names. */
  workflows: () => readonly string[];
  /**
   * Relic methods the agent also has as tools (the browser's): the prompt lists them once, among
   * the tools, not again as relic actions.
   */
  shadowed?: ReadonlySet<string>;
}

/** The longest description shown for one entry: the prompt is sent with every call. */
const DESCRIPTION_MAX = 200;

/**
 * The `agent`, `relic` and `workflow` actions `directive` may use, described for its system
 * prompt (`SystemPromptParts.capabilities`): the active directives its `<agent>` permissions
 * match (with their descriptions; never itself), the relic methods its `<relic>` permissions
 * match, and the workflows its `<workflow>` permissions match, each sorted by name. Empty when
 * it may use none. Deterministic for the same items, so a replay compiles the same prompt; a
 * directive that does not load is listed by name alone.
 */
export function describeCapabilities(
  directive: Pick<Directive, "permissions">,
  self: string,
  sources: CapabilitySources,
): string {
  const sections: string[] = [];
  const agents = sources.space
    .list({ kind: "directive" })
    .filter((item) => item.active && item.name !== self)
    .map((item) => item.name)
    .filter((name) => permits(directive.permissions, "agent", name))
    .sort();
  if (agents.length > 0) {
    sections.push(
      `Agents (type "agent": "name" is the directive, "parameters" its inputs; it runs as a child thread and returns its final response):\n${agents
        .map((name) => entry(name, agentDescription(sources.space, name)))
        .join("\n")}`,
    );
  }
  const relicMethods = sources.relics
    .methods()
    .filter((name) => permits(directive.permissions, "relic", name))
    .filter((name) => !sources.shadowed?.has(name))
    .sort();
  if (relicMethods.length > 0) {
    sections.push(
      `Relics (type "relic": "name" is <relic>.<method>):\n${relicMethods
        .map((name) => entry(name, relicDescription(sources.relics, name)))
        .join("\n")}`,
    );
  }
  const workflows = sources
    .workflows()
    .filter((name) => permits(directive.permissions, "workflow", name))
    .sort();
  if (workflows.length > 0) {
    sections.push(
      `Workflows (type "workflow": "name" is the workflow, "parameters" its inputs):\n${workflows
        .map((name) => entry(name, undefined))
        .join("\n")}`,
    );
  }
  return sections.join("\n\n");
}

function entry(name: string, description: string | undefined): string {
  const text = description?.replace(/\s+/g, " ").trim() ?? "";
  if (text === "") return `- ${name}`;
  const shown = text.length > DESCRIPTION_MAX ? `${text.slice(0, DESCRIPTION_MAX - 1)}…` : text;
  return `- ${name}: ${shown}`;
}

function agentDescription(space: ItemSpace, name: string): string | undefined {
  try {
    return space.directive(name).description;
  } catch {
    // A directive that does not load is still offered by name: running it reports why it fails.
    return undefined;
  }
}

function relicDescription(relics: RelicHost, name: string): string | undefined {
  const dot = name.indexOf(".");
  return relics.describe(name.slice(0, dot))?.methods[name.slice(dot + 1)]?.description;
}
