import { ConfigError } from "../spec/index.js";
import type { ToolDefinition } from "./tool-definition.js";

/** Any tool, whatever its schema. */
// biome-ignore lint/suspicious/noExplicitAny: a registry holds tools of every parameter type.
export type AnyTool = ToolDefinition<any>;

/**
 * The tools one agent can call, by name.
 *
 * Contract: names are unique (registering a second tool of one name is a `ConfigError`); `list`
 * and `names` keep registration order.
 */
export interface ToolRegistry {
  register(tool: AnyTool): void;
  get(name: string): AnyTool | undefined;
  names(): string[];
  list(): AnyTool[];
}

/** A registry holding `tools`. Throws `ConfigError` on a duplicate or empty name. */
export function createToolRegistry(tools: readonly AnyTool[] = []): ToolRegistry {
  const byName = new Map<string, AnyTool>();
  const registry: ToolRegistry = {
    register(tool) {
      if (tool.name.trim() === "") {
        throw new ConfigError("config.tool", "a tool has an empty name", {
          hint: "Give every tool a name the model can write",
        });
      }
      if (byName.has(tool.name)) {
        throw new ConfigError("config.tool", `two tools are named "${tool.name}"`, {
          hint: "Give every tool its own name",
        });
      }
      byName.set(tool.name, tool);
    },
    get: (name) => byName.get(name),
    names: () => [...byName.keys()],
    list: () => [...byName.values()],
  };
  for (const tool of tools) registry.register(tool);
  return registry;
}
