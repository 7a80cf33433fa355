import type {
  FunctionTool,
  ResponseCreateParamsStreaming,
  ResponseFunctionCallOutputItemList,
  ResponseInputContent,
  ResponseInputImage,
  ResponseInputItem,
} from "openai/resources/responses/responses";
import { z } from "zod";
import type { ContentBlock } from "../assembled-message.js";
import type {
  ImagePart,
  ProviderMessage,
  ProviderRequest,
  ToolResult,
  ToolSpec,
  UserPart,
} from "../provider.js";
import { toolArguments } from "./chat-request.js";

/**
 * Translates a `ProviderRequest` into a streaming Responses API body. Pure.
 *
 * - `system` becomes `instructions` (sent on every call: instructions do not carry over a
 *   `previous_response_id`).
 * - Messages become `input` items: user `input_text` / `input_image`, assistant `output_text` and
 *   `refusal` parts, `function_call` items for client tool calls, `function_call_output` items for
 *   tool results, in the order given. A result with images has a list `output`: an `input_text`
 *   part with the output (left out when empty), then one `input_image` part (a `data:` URL) each.
 * - A reasoning block is sent back as its reasoning item only when its signature holds one with
 *   encrypted content (see `decodeResponsesStream`); a `compaction` provider block is sent back as
 *   its item. Other reasoning, server tool calls and provider blocks are dropped: their ids may
 *   no longer resolve.
 * - `previousResponseId` becomes `previous_response_id`; the messages are sent as given (the caller
 *   sends only the new ones).
 * - `maxOutputTokens` → `max_output_tokens`; `reasoning.effort` → `reasoning: {effort, summary:
 *   "auto"}`; `store` defaults to true. The Responses API has no stop sequences: `stopSequences` is
 *   not sent.
 * - `providerOptions` is merged last, so it can override any field.
 */
export function toResponsesRequest(request: ProviderRequest): ResponseCreateParamsStreaming {
  const input: ResponseInputItem[] = [];
  for (const message of request.messages) input.push(...toResponsesItems(message));
  const body: Record<string, unknown> = { model: request.model, input, stream: true, store: true };
  if (request.system) body.instructions = request.system;
  if (request.tools && request.tools.length > 0) body.tools = request.tools.map(toFunctionTool);
  if (request.maxOutputTokens !== undefined) body.max_output_tokens = request.maxOutputTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.reasoning?.effort) {
    body.reasoning = { effort: request.reasoning.effort, summary: "auto" };
  }
  if (request.previousResponseId) body.previous_response_id = request.previousResponseId;
  Object.assign(body, request.providerOptions);
  return body as unknown as ResponseCreateParamsStreaming;
}

/** One `ProviderMessage` as Responses input items. */
export function toResponsesItems(message: ProviderMessage): ResponseInputItem[] {
  switch (message.role) {
    case "user":
      return [
        {
          role: "user",
          content:
            typeof message.content === "string"
              ? message.content
              : message.content.map(toInputContent),
        },
      ];
    case "assistant":
      return typeof message.content === "string"
        ? [assistantMessage([{ type: "output_text", text: message.content }])]
        : assistantItems(message.content);
    case "tool":
      return message.results.map((result) => ({
        type: "function_call_output",
        call_id: result.toolCallId,
        output: functionOutput(result),
      }));
  }
}

/** A result's `output`: its text, or a list of its text and images when it has images. */
function functionOutput(result: ToolResult): string | ResponseFunctionCallOutputItemList {
  if (!result.images || result.images.length === 0) return result.output;
  return [
    ...(result.output === "" ? [] : [{ type: "input_text" as const, text: result.output }]),
    ...result.images.map(inputImage),
  ];
}

function toInputContent(part: UserPart): ResponseInputContent {
  return part.type === "text" ? { type: "input_text", text: part.text } : inputImage(part);
}

function inputImage(part: ImagePart): ResponseInputImage {
  return {
    type: "input_image",
    image_url: `data:${part.mediaType};base64,${part.data}`,
    detail: "auto",
  };
}

type OutputPart = { type: "output_text"; text: string } | { type: "refusal"; refusal: string };

function assistantMessage(content: OutputPart[]): ResponseInputItem {
  return { type: "message", role: "assistant", content } as unknown as ResponseInputItem;
}

function assistantItems(blocks: ContentBlock[]): ResponseInputItem[] {
  const items: ResponseInputItem[] = [];
  let parts: OutputPart[] = [];
  const flush = () => {
    if (parts.length > 0) items.push(assistantMessage(parts));
    parts = [];
  };
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        if (block.text !== "") parts.push({ type: "output_text", text: block.text });
        break;
      case "refusal":
        parts.push({ type: "refusal", refusal: block.text });
        break;
      case "reasoning": {
        const item = block.signature ? reasoningItem(block.signature) : undefined;
        if (item) {
          flush();
          items.push(item);
        }
        break;
      }
      case "tool-call":
        if (block.server) break;
        flush();
        items.push({
          type: "function_call",
          call_id: block.id,
          name: block.name,
          arguments: toolArguments(block),
        });
        break;
      case "provider": {
        const item = block.kind === "compaction" ? compactionItem(block.data) : undefined;
        if (item) {
          flush();
          items.push(item);
        }
        break;
      }
      case "redacted-reasoning":
        break;
    }
  }
  flush();
  return items;
}

const reasoningItemSchema = z.object({
  type: z.literal("reasoning"),
  id: z.string(),
  summary: z.array(z.object({ type: z.literal("summary_text"), text: z.string() })),
  encrypted_content: z.string().min(1),
});

/** The reasoning item a signature carries, when it is one with encrypted content. */
function reasoningItem(signature: string): ResponseInputItem | undefined {
  let value: unknown;
  try {
    value = JSON.parse(signature);
  } catch {
    return undefined;
  }
  const parsed = reasoningItemSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

const compactionSchema = z.object({
  type: z.literal("compaction"),
  id: z.string().nullish(),
  encrypted_content: z.string().min(1),
});

function compactionItem(data: unknown): ResponseInputItem | undefined {
  const parsed = compactionSchema.safeParse(data);
  if (!parsed.success) return undefined;
  const item: ResponseInputItem = {
    type: "compaction",
    encrypted_content: parsed.data.encrypted_content,
  };
  if (parsed.data.id) item.id = parsed.data.id;
  return item;
}

function toFunctionTool(tool: ToolSpec): FunctionTool {
  const fn: FunctionTool = {
    type: "function",
    name: tool.name,
    parameters: tool.inputSchema,
    strict: false,
  };
  if (tool.description !== undefined) fn.description = tool.description;
  return fn;
}
