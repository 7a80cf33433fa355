import type {
  ChatCompletionContentPart,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import type { ContentBlock } from "../assembled-message.js";
import type {
  ProviderMessage,
  ProviderRequest,
  ToolResult,
  ToolSpec,
  UserPart,
} from "../provider.js";
import { OPENAI_FLAVOURS, type OpenAIFlavourName } from "./flavours.js";

/**
 * Translates a `ProviderRequest` into a streaming Chat Completions body for `flavour`. Pure.
 *
 * - `system` becomes the first message (`role: "system"`).
 * - User images become `image_url` parts with `data:` URLs.
 * - Assistant messages keep their text, refusal and client tool calls (`tool_calls`); server tool
 *   calls and provider blocks are dropped, and reasoning is dropped too, except for flavours with
 *   `echoReasoning` (Moonshot), which get it back as `reasoning_content`.
 * - Tool results become one `role: "tool"` message each (text only: the API takes no images
 *   there). Results with images are followed, after every tool message answering the same
 *   assistant message, by one `role: "user"` message holding them: per result, a text part
 *   `Images returned by tool call <id>:` and its `image_url` parts with `data:` URLs. Consecutive
 *   `tool` messages are joined first, so no user message falls between two tool messages.
 * - `maxOutputTokens` goes to the flavour's `maxTokensField`; `reasoning.effort` becomes
 *   `reasoning_effort` only where the flavour takes it; `stream_options.include_usage` is asked for
 *   where the flavour accepts it.
 * - `providerOptions` is merged last, so it can override any field.
 */
export function toChatRequest(
  request: ProviderRequest,
  flavourName: OpenAIFlavourName = "openai",
): ChatCompletionCreateParamsStreaming {
  const flavour = OPENAI_FLAVOURS[flavourName];
  const messages: ChatCompletionMessageParam[] = [];
  if (request.system) messages.push({ role: "system", content: request.system });
  for (const message of joinToolMessages(request.messages)) {
    messages.push(...toChatMessages(message, flavourName));
  }

  const body: Record<string, unknown> = { model: request.model, messages, stream: true };
  if (flavour.includeUsage) body.stream_options = { include_usage: true };
  if (request.tools && request.tools.length > 0) body.tools = request.tools.map(toChatTool);
  if (request.maxOutputTokens !== undefined) {
    body[flavour.maxTokensField] = request.maxOutputTokens;
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.stopSequences && request.stopSequences.length > 0) body.stop = request.stopSequences;
  if (flavour.reasoningEffort && request.reasoning?.effort) {
    body.reasoning_effort = request.reasoning.effort;
  }
  Object.assign(body, request.providerOptions);
  return body as unknown as ChatCompletionCreateParamsStreaming;
}

/**
 * One `ProviderMessage` as Chat Completions messages: tool results give one message each, then
 * one user message with the images they returned, if any (see `toChatRequest`).
 */
export function toChatMessages(
  message: ProviderMessage,
  flavourName: OpenAIFlavourName = "openai",
): ChatCompletionMessageParam[] {
  switch (message.role) {
    case "user":
      return [
        {
          role: "user",
          content:
            typeof message.content === "string"
              ? message.content
              : message.content.map(toChatUserPart),
        },
      ];
    case "assistant":
      return [toChatAssistant(message.content, OPENAI_FLAVOURS[flavourName].echoReasoning)];
    case "tool": {
      const out: ChatCompletionMessageParam[] = message.results.map((result) => ({
        role: "tool",
        tool_call_id: result.toolCallId,
        content: result.output,
      }));
      const images = toolImagesMessage(message.results);
      if (images) out.push(images);
      return out;
    }
  }
}

/** Runs of consecutive `tool` messages as one, so their images can follow all of them. */
function joinToolMessages(messages: readonly ProviderMessage[]): ProviderMessage[] {
  const out: ProviderMessage[] = [];
  for (const message of messages) {
    const last = out.at(-1);
    if (message.role === "tool" && last?.role === "tool") {
      out[out.length - 1] = { role: "tool", results: [...last.results, ...message.results] };
    } else out.push(message);
  }
  return out;
}

/** The user message carrying the images of `results`, each group named by its tool call id. */
function toolImagesMessage(results: readonly ToolResult[]): ChatCompletionMessageParam | undefined {
  const parts: ChatCompletionContentPart[] = [];
  for (const result of results) {
    if (!result.images || result.images.length === 0) continue;
    parts.push({ type: "text", text: `Images returned by tool call ${result.toolCallId}:` });
    for (const image of result.images) parts.push(toChatUserPart(image));
  }
  return parts.length === 0 ? undefined : { role: "user", content: parts };
}

function toChatUserPart(part: UserPart): ChatCompletionContentPart {
  if (part.type === "text") return { type: "text", text: part.text };
  return { type: "image_url", image_url: { url: `data:${part.mediaType};base64,${part.data}` } };
}

function toChatAssistant(
  content: string | ContentBlock[],
  echoReasoning: boolean,
): ChatCompletionMessageParam {
  if (typeof content === "string") return { role: "assistant", content };
  let text = "";
  let refusal = "";
  let reasoning = "";
  const toolCalls: {
    id: string;
    type: "function";
    function: { name: string; arguments: string };
  }[] = [];
  for (const block of content) {
    if (block.type === "text") text += block.text;
    else if (block.type === "refusal") refusal += block.text;
    else if (block.type === "reasoning") reasoning += block.text;
    else if (block.type === "tool-call" && !block.server) {
      toolCalls.push({
        id: block.id,
        type: "function",
        function: { name: block.name, arguments: toolArguments(block) },
      });
    }
  }
  const message: Record<string, unknown> = {
    role: "assistant",
    content: text === "" && (toolCalls.length > 0 || refusal !== "") ? null : text,
  };
  if (refusal !== "") message.refusal = refusal;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (echoReasoning && reasoning !== "") message.reasoning_content = reasoning;
  return message as unknown as ChatCompletionMessageParam;
}

/** The arguments text to send back for a tool call: as streamed, or the parsed input, or `{}`. */
export function toolArguments(block: Extract<ContentBlock, { type: "tool-call" }>): string {
  if (block.inputText.trim() !== "") return block.inputText;
  return block.input === undefined ? "{}" : JSON.stringify(block.input);
}

function toChatTool(tool: ToolSpec): ChatCompletionTool {
  const fn: { name: string; description?: string; parameters: Record<string, unknown> } = {
    name: tool.name,
    parameters: tool.inputSchema,
  };
  if (tool.description !== undefined) fn.description = tool.description;
  return { type: "function", function: fn };
}
