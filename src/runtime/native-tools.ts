import type { AnyTool } from "../actions/index.js";
import type { ToolSpec } from "../providers/index.js";
import { toolCatalogue } from "../tools/index.js";

/** Longest tool name the providers accept (Anthropic and OpenAI: 64). */
const NATIVE_NAME_MAX = 64;

/**
 * The name a tool goes by in a provider's native tool list: providers take only letters,
 * digits, `_` and `-` (`^[a-zA-Z0-9_-]{1,64}$`), so `fs.read` is offered as `fs_read`.
 * Deterministic: the same name always maps to the same native name.
 */
export function nativeToolName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, NATIVE_NAME_MAX);
  return cleaned === "" ? "tool" : cleaned;
}

/** The tools as a provider's native tool list, and the way back from a native name. */
export interface NativeTools {
  specs: ToolSpec[];
  /** Native name → the tool's own name. */
  names: ReadonlyMap<string, string>;
}

/**
 * `tools` offered natively (Anthropic `tools`, OpenAI `tools`/functions): a model may call them
 * with its provider's own tool calls as well as with `<action>` tags; both go through the same
 * scheduler. Names are made provider-safe (`nativeToolName`); two that would collide keep the
 * first and give the second a numbered suffix.
 */
export function nativeTools(tools: readonly AnyTool[]): NativeTools {
  const names = new Map<string, string>();
  const specs: ToolSpec[] = [];
  for (const entry of toolCatalogue(tools)) {
    let native = nativeToolName(entry.name);
    for (let n = 2; names.has(native); n++) {
      native = `${nativeToolName(entry.name).slice(0, NATIVE_NAME_MAX - 4)}_${n}`;
    }
    names.set(native, entry.name);
    specs.push({ name: native, description: entry.description, inputSchema: entry.parameters });
  }
  return { specs, names };
}
