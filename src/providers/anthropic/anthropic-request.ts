import type {
  ContentBlockParam,
  ImageBlockParam,
  MessageCreateParamsBase,
  MessageParam,
  ServerToolUseBlockParam,
  Tool,
  ToolResultBlockParam,
} from "@anthropic-ai/sdk/resources/messages";
import type { ContentBlock } from "../assembled-message.js";
import type {
  ImagePart,
  ProviderMessage,
  ProviderRequest,
  ToolResult,
  ToolSpec,
  UserPart,
} from "../provider.js";

/**
 * The body of a Messages API call, less `stream` (the provider adds `stream: true`). SDK 1.12's
 * types no longer list `temperature` (the newest models refuse sampling parameters); it is still
 * sent when a request sets it, for the models that take it.
 */
export type AnthropicParams = Omit<MessageCreateParamsBase, "stream"> & { temperature?: number };

/** Settings of the provider that a request may leave out. */
export interface AnthropicRequestDefaults {
  /** `max_tokens` when the request has no `maxOutputTokens` (default 4096). */
  maxOutputTokens?: number;
}

/** `max_tokens` when neither the request nor the provider says (the API requires one). */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/**
 * Translates a Spool request into the body of an Anthropic Messages call. Pure: no I/O, the
 * request is not modified, and the same request gives the same body.
 *
 * - `system` → `system`; `tools` → `{ name, description, input_schema }`; `maxOutputTokens` →
 *   `max_tokens` (else `defaults.maxOutputTokens`, else 4096); `temperature`, `stopSequences` →
 *   `stop_sequences`; `reasoning.budgetTokens` → `thinking: { type: "enabled", budget_tokens }`.
 *   `reasoning.effort` and `previousResponseId` have no Anthropic form and are ignored (set
 *   `output_config` through `providerOptions` if wanted).
 * - user text and base64 images → `text` and `image` blocks; `tool` messages → a user message
 *   of `tool_result` blocks (`is_error` when the tool failed); a result with images has a list
 *   `content`: a `text` block with the output (left out when empty), then one `image` block each.
 * - assistant blocks: `reasoning` with a signature → `thinking` (without one it is dropped: the
 *   API refuses unsigned thinking); `redacted-reasoning` → `redacted_thinking`; `tool-call` →
 *   `tool_use`, or `server_tool_use` for server calls (an input that did not parse, or is not an
 *   object, is sent as `{}`); `refusal` → text; `provider` blocks → their data unchanged.
 * - empty text blocks, and messages left with no content, are dropped (the API refuses them);
 *   consecutive messages of the same role are merged into one, as the API requires.
 * - `providerOptions` is merged last, over everything above.
 */
export function toAnthropicParams(
  request: ProviderRequest,
  defaults: AnthropicRequestDefaults = {},
): AnthropicParams {
  const params: AnthropicParams = {
    model: request.model,
    max_tokens: request.maxOutputTokens ?? defaults.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
    messages: toAnthropicMessages(request.messages),
  };
  if (request.system) params.system = request.system;
  if (request.tools && request.tools.length > 0) params.tools = request.tools.map(toTool);
  if (request.temperature !== undefined) params.temperature = request.temperature;
  if (request.stopSequences && request.stopSequences.length > 0) {
    params.stop_sequences = [...request.stopSequences];
  }
  if (request.reasoning?.budgetTokens !== undefined) {
    params.thinking = { type: "enabled", budget_tokens: request.reasoning.budgetTokens };
  }
  if (!request.providerOptions) return params;
  return { ...params, ...request.providerOptions } as AnthropicParams;
}

/** Spool messages as Anthropic messages: alternating roles, tool results as user content. */
export function toAnthropicMessages(messages: readonly ProviderMessage[]): MessageParam[] {
  const out: { role: "user" | "assistant"; content: ContentBlockParam[] }[] = [];
  for (const message of messages) {
    const role = message.role === "assistant" ? "assistant" : "user";
    const content =
      message.role === "user"
        ? userContent(message.content)
        : message.role === "assistant"
          ? assistantContent(message.content)
          : message.results.map(toolResult);
    if (content.length === 0) continue;
    const last = out.at(-1);
    if (last?.role === role) last.content.push(...content);
    else out.push({ role, content });
  }
  return out;
}

function userContent(content: string | readonly UserPart[]): ContentBlockParam[] {
  if (typeof content === "string") return textBlock(content);
  return content.flatMap((part): ContentBlockParam[] =>
    part.type === "text" ? textBlock(part.text) : [imageBlock(part)],
  );
}

function imageBlock(part: ImagePart): ImageBlockParam {
  return {
    type: "image",
    source: {
      type: "base64",
      media_type: part.mediaType as "image/png" | "image/jpeg" | "image/webp" | "image/gif",
      data: part.data,
    },
  };
}

function assistantContent(content: string | readonly ContentBlock[]): ContentBlockParam[] {
  if (typeof content === "string") return textBlock(content);
  return content.flatMap(assistantBlock);
}

function assistantBlock(block: ContentBlock): ContentBlockParam[] {
  switch (block.type) {
    case "text":
    case "refusal":
      return textBlock(block.text);
    case "reasoning":
      return block.signature
        ? [{ type: "thinking", thinking: block.text, signature: block.signature }]
        : [];
    case "redacted-reasoning":
      return [{ type: "redacted_thinking", data: block.data }];
    case "tool-call": {
      const input = isPlainObject(block.input) ? block.input : {};
      if (block.server) {
        const name = block.name as ServerToolUseBlockParam["name"];
        return [{ type: "server_tool_use", id: block.id, name, input }];
      }
      return [{ type: "tool_use", id: block.id, name: block.name, input }];
    }
    case "provider":
      // The block as Anthropic sent it (server tool results, compaction, …); anything that is
      // not an Anthropic block (another provider's data) cannot be sent and is left out.
      return isPlainObject(block.data) && typeof block.data.type === "string"
        ? [block.data as unknown as ContentBlockParam]
        : [];
  }
}

/** A result with images gets a list: its output as a text block (when not empty), then the images. */
function toolResult(result: ToolResult): ToolResultBlockParam {
  const images = result.images ?? [];
  const block: ToolResultBlockParam = {
    type: "tool_result",
    tool_use_id: result.toolCallId,
    content:
      images.length === 0
        ? result.output
        : [
            ...(result.output === "" ? [] : [{ type: "text" as const, text: result.output }]),
            ...images.map(imageBlock),
          ],
  };
  if (result.isError) block.is_error = true;
  return block;
}

function toTool(tool: ToolSpec): Tool {
  const out: Tool = {
    name: tool.name,
    input_schema: tool.inputSchema as Tool["input_schema"],
  };
  if (tool.description !== undefined) out.description = tool.description;
  return out;
}

function textBlock(text: string): ContentBlockParam[] {
  return text === "" ? [] : [{ type: "text", text }];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
