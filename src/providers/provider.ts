import type { ContentBlock } from "./assembled-message.js";
import type { ServerModelDescription } from "./models/index.js";
import type { ProviderFormat, StreamPart } from "./stream-part.js";

/** A tool the model may call natively (Anthropic `tools`, OpenAI `tools`/functions). */
export interface ToolSpec {
  name: string;
  description?: string;
  /** JSON Schema of the input object. */
  inputSchema: Record<string, unknown>;
}

/** A piece of user input. */
export type UserPart =
  | { type: "text"; text: string }
  | {
      type: "image";
      /** `image/png`, `image/jpeg`, `image/webp` or `image/gif`. */
      mediaType: string;
      /** The image bytes, base64 (empty while `artifact` names them and they are not read yet). */
      data: string;
      /**
       * The artifact that holds the bytes, when the image came from the log (a screenshot): a
       * compiled request refers to it by this hash, and the runtime reads the bytes into `data`
       * right before the call.
       */
      artifact?: string;
      /**
       * The image's size in pixels, when the code that built the part knows it (a frame, a
       * screenshot): the token estimate then uses the provider's own formula instead of a flat
       * guess. Never sent to the provider.
       */
      width?: number;
      height?: number;
    };

/** An image a message carries: a user's image part, or one a tool result returned. */
export type ImagePart = Extract<UserPart, { type: "image" }>;

/** One result of a tool call the model made, sent back to it. */
export interface ToolResult {
  toolCallId: string;
  /** The tool's name (OpenAI Responses and some compatible servers need it). */
  name?: string;
  output: string;
  isError?: boolean;
  /** Images the tool returned (a screenshot), sent with its output where the provider allows. */
  images?: ImagePart[];
}

/** One message of a conversation, in a form every adapter translates to its provider's. */
export type ProviderMessage =
  | { role: "user"; content: string | UserPart[] }
  | {
      role: "assistant";
      /** What the model said, as assembled (reasoning signatures included, to send back). */
      content: string | ContentBlock[];
    }
  | { role: "tool"; results: ToolResult[] };

/** What a model call needs: the compiled context and the call's settings. */
export interface ProviderRequest {
  model: string;
  system?: string;
  messages: ProviderMessage[];
  tools?: ToolSpec[];
  /**
   * The output limit. Without it Anthropic gets its adapter's default (4096; the API requires a
   * limit; `createProvider` sets it to the model catalogue's `maxOutputTokens` when it knows the
   * model) and OpenAI-format servers their own default.
   */
  maxOutputTokens?: number;
  temperature?: number;
  stopSequences?: string[];
  /**
   * Extended thinking / reasoning: a budget (Anthropic `thinking.budget_tokens`) or an effort
   * (OpenAI `reasoning.effort`). Adapters use the form their provider takes.
   */
  reasoning?: { budgetTokens?: number; effort?: "minimal" | "low" | "medium" | "high" };
  /**
   * OpenAI Responses: continue from this response, sending only the new messages. When the
   * provider no longer knows it, the stream ends with `provider.cursor-expired`.
   */
  previousResponseId?: string;
  /** Extra fields merged into the provider's request body as they are (escape hatch). */
  providerOptions?: Record<string, unknown>;
}

/** Per-call options of `Provider.stream`. */
export interface StreamOptions {
  /** Cancels the call: the HTTP request is closed and the stream ends with `provider.cancelled`. */
  signal?: AbortSignal;
  /** Emit a `raw` part for every SDK event (default false). */
  raw?: boolean;
}

/**
 * A model provider. `stream` starts one model call and yields its parts as they arrive.
 *
 * Contract: the iterator never throws. It yields `retry` parts for attempts that failed before the
 * first byte, then `start`, content parts, and exactly one terminal `stop` or `error` part. A
 * failure after output began is an `error` part (the caller decides whether to retry the step).
 */
export interface Provider {
  /** A name for logs and errors: `anthropic`, `openai-chat`, `ollama`, `scripted`, … */
  readonly name: string;
  readonly format: ProviderFormat;
  stream(request: ProviderRequest, options?: StreamOptions): AsyncIterable<StreamPart>;
  /**
   * What the server says of `model`'s context window, where it can tell (vLLM, Ollama,
   * llama.cpp); absent on providers whose windows the catalogue knows. Never throws: no answer
   * within a short timeout is `undefined`. The runtime asks once per run and logs the answer
   * (`model.described`), so a replay answers from the log.
   */
  describeModel?(
    model: string,
    options?: { signal?: AbortSignal },
  ): Promise<ServerModelDescription | undefined>;
}
