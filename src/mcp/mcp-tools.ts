import { z } from "zod";
import { type AnyTool, defineTool } from "../actions/index.js";
import type { RelicCallOptions } from "../relics/index.js";
import { describeError } from "../spec/index.js";
import type { McpToolInfo } from "./mcp-relic.js";

/** MCP tool names Spool takes: what the spec allows (letters, digits, `_`, `-`, `.`), 1–128. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** Calls one method of a server's relic through its host (`RelicHost.call`). */
export type McpRelicCall = (
  method: string,
  parameters: unknown,
  options: RelicCallOptions,
) => Promise<unknown>;

/** A tool of a server that Spool would not offer, and why. */
export interface McpRefusedTool {
  tool: string;
  reason: string;
}

/** A server's tools made Spool tools, and the ones refused. */
export interface McpServerTools {
  tools: AnyTool[];
  refused: McpRefusedTool[];
}

/** The Spool name of tool `tool` of server `server`: `mcp.<server>.<tool>`. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp.${server}.${tool}`;
}

/**
 * The tools of `server` (as listed) as Spool tools named `mcp.<server>.<tool>`, each with its
 * JSON Schema made a zod schema (`z.fromJSONSchema`) that checks the model's arguments before
 * the server sees them, and calling the server's relic (`call_tool`) through `call`, so its host
 * starts the server on first use, logs the call and restarts it after a crash. Progress
 * notifications become the action's progress (`action.progress`).
 *
 * A tool whose name is not a valid MCP name, or whose schema is not an object schema zod can
 * read, is refused (in `refused`, with the reason) and the rest are kept. A tool the server
 * marks `readOnlyHint` has no side effects; `idempotentHint` (or read-only) makes it idempotent;
 * every other tool is side-effecting and not idempotent. When the server was found gone before
 * the call reached it, the tool calls once more (the host restarts it) and says so in `notice`.
 */
export function mcpServerTools(
  server: string,
  listed: readonly McpToolInfo[],
  call: McpRelicCall,
): McpServerTools {
  const tools: AnyTool[] = [];
  const refused: McpRefusedTool[] = [];
  const seen = new Set<string>();
  for (const info of listed) {
    const problem = toolProblem(info, seen);
    if (typeof problem === "string") {
      refused.push({ tool: info.name.slice(0, 200) || "(unnamed)", reason: problem });
      continue;
    }
    seen.add(info.name);
    const readOnly = info.annotations?.readOnlyHint === true;
    tools.push(
      defineTool({
        name: mcpToolName(server, info.name),
        description: info.description || `The "${info.name}" tool of MCP server "${server}".`,
        parameters: problem.schema,
        sideEffects: !readOnly,
        idempotent: readOnly || info.annotations?.idempotentHint === true,
        async execute(parameters, context) {
          const options = {
            signal: context.signal,
            actionId: context.actionId,
            progress: context.progress,
          };
          const request = { tool: info.name, arguments: parameters ?? {} };
          try {
            return await call("call_tool", request, options);
          } catch (error) {
            if (!foundGone(error)) throw error;
            const notice = `MCP server "${server}" had gone away before this call; it was restarted`;
            const result = (await call("call_tool", request, options)) as Record<string, unknown>;
            return { ...result, notice };
          }
        },
      }),
    );
  }
  return { tools, refused };
}

function toolProblem(info: McpToolInfo, seen: ReadonlySet<string>): string | { schema: z.ZodType } {
  if (!TOOL_NAME.test(info.name)) {
    return "its name is not 1 to 128 letters, digits, _, - or . (the MCP rule for tool names)";
  }
  if (seen.has(info.name)) return "the server lists two tools of this name";
  const schema = info.inputSchema;
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    return "its inputSchema is not a JSON object";
  }
  if (schema.type !== "object") {
    return `its inputSchema has type ${JSON.stringify(schema.type ?? null)}; MCP tools take an object ("type": "object")`;
  }
  try {
    const parsed = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
    // The model is shown the schema through zod: it must also go back to JSON Schema.
    z.toJSONSchema(parsed, { io: "input", unrepresentable: "any" });
    return { schema: parsed };
  } catch (error) {
    return `its inputSchema cannot be used: ${describeError(error).slice(0, 300)}`;
  }
}

function foundGone(error: unknown): boolean {
  const candidate = error as { code?: unknown; details?: { during_call?: unknown } };
  return candidate?.code === "relic.mcp.crashed" && candidate.details?.during_call === false;
}
