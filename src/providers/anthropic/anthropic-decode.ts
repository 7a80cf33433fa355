import type { RawMessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";
import { parseToolInput } from "../assembled-message.js";
import { ProviderError } from "../provider-error.js";
import type { StreamPart, Usage } from "../stream-part.js";
import { mapAnthropicStopReason } from "./anthropic-stop-reason.js";

/**
 * Turns the raw events of one Anthropic Messages stream, as the SDK yields them
 * (`client.messages.create({ stream: true })`), into Spool stream parts. This is the adapter's
 * `decode`.
 *
 * - `message_start` → `start` (`responseId` = the message id, `usage` with input tokens counting
 *   cached ones); content the message already carries (programmatic tool calls) is decoded as
 *   whole blocks.
 * - blocks keep Anthropic's `index` as `block`. `text` → `text` parts, `thinking` →
 *   `reasoning` and `reasoning-signature`, `redacted_thinking` → `redacted-reasoning`,
 *   `tool_use` / `server_tool_use` → `tool-call-start`, `-delta`, `-end` (server calls marked
 *   `server`); any other block type → one `provider-block` with the block's JSON, emitted when
 *   the block is complete (its deltas applied: `compaction_delta` content, `input_json_delta`
 *   input, citations).
 * - `message_delta` → `usage`; `message_stop` → `stop` with the mapped reason. Blocks still open
 *   at `message_stop` (a tool input cut by `max_tokens`) are closed first.
 * - `ping` and event or delta types it does not know are skipped; it never throws for them.
 * - A repeated `message_start` for the same message is ignored; one for another message while
 *   the first is open (two responses spliced together) throws `provider.bad-stream`, as does
 *   content before any `message_start`.
 *
 * Ends after `message_stop`. Errors the SDK throws (an `event: error`, a cut connection) pass
 * through for the transport to report.
 */
export async function* decodeAnthropicEvents(
  events: AsyncIterable<RawMessageStreamEvent>,
  options: AnthropicDecodeOptions = {},
): AsyncGenerator<StreamPart> {
  const decoder = new AnthropicDecoder(options.provider ?? "anthropic");
  for await (const event of events) {
    // A plain loop: `yield*` over an array costs extra promise hops per part.
    for (const part of decoder.push(event)) yield part;
    if (decoder.done) return;
  }
}

/** Options of `decodeAnthropicEvents`. */
export interface AnthropicDecodeOptions {
  /** The provider's name, for error messages (default `anthropic`). */
  provider?: string;
}

type JsonObject = Record<string, unknown>;

/** What is kept of an open content block until its `content_block_stop`. */
type BlockState =
  | { kind: "text" }
  | { kind: "reasoning"; signature: string }
  | { kind: "redacted" }
  | { kind: "tool"; id: string; pieces: string[]; startInput: unknown }
  | { kind: "provider"; data: JsonObject; inputPieces: string[] | undefined };

const NONE: readonly StreamPart[] = [];

class AnthropicDecoder {
  done = false;
  readonly #provider: string;
  #started = false;
  #messageId: string | null = null;
  readonly #blocks = new Map<number, BlockState>();
  #stopReason: string | null = null;
  #inputTokens = 0;
  #cacheReadTokens = 0;
  #cacheWriteTokens = 0;

  constructor(provider: string) {
    this.#provider = provider;
  }

  push(event: unknown): readonly StreamPart[] {
    const record = asObject(event);
    const type = record.type;
    if (type === "message_start") return this.#messageStart(asObject(record.message));
    if (!isContentEvent(type)) return NONE;
    if (!this.#started)
      throw badStream(this.#provider, `received ${String(type)} before message_start`);
    switch (type) {
      case "content_block_start":
        return this.#blockStart(blockIndex(this.#provider, record), asObject(record.content_block));
      case "content_block_delta":
        return this.#blockDelta(blockIndex(this.#provider, record), asObject(record.delta));
      case "content_block_stop":
        return this.#blockStop(blockIndex(this.#provider, record));
      case "message_delta":
        return this.#messageDelta(asObject(record.delta), asObject(record.usage));
      default:
        return this.#messageStop();
    }
  }

  #messageStart(message: JsonObject): readonly StreamPart[] {
    const id = typeof message.id === "string" ? message.id : null;
    if (this.#started) {
      if (id === this.#messageId) return NONE;
      throw badStream(
        this.#provider,
        `received message_start for ${JSON.stringify(id)} while message ${JSON.stringify(this.#messageId)} was still open: two responses were spliced into one stream`,
        "A proxy or gateway in between mixed two responses; send the request again",
      );
    }
    this.#started = true;
    this.#messageId = id;
    const out: StreamPart[] = [
      {
        type: "start",
        responseId: id,
        model: typeof message.model === "string" ? message.model : "",
        usage: this.#usage(asObject(message.usage)),
      },
    ];
    // A message can arrive whole in `message_start` (programmatic tool calling): its blocks
    // are decoded as if each had streamed, start and stop.
    const content = Array.isArray(message.content) ? message.content : [];
    for (const [index, block] of content.entries()) {
      out.push(...this.#blockStart(index, asObject(block)), ...this.#blockStop(index));
    }
    if (typeof message.stop_reason === "string") this.#stopReason = message.stop_reason;
    return out;
  }

  #blockStart(block: number, content: JsonObject): readonly StreamPart[] {
    switch (content.type) {
      case "text":
        this.#blocks.set(block, { kind: "text" });
        return [{ type: "text", block, text: stringField(content, "text") }];
      case "thinking": {
        const signature = stringField(content, "signature");
        this.#blocks.set(block, { kind: "reasoning", signature });
        const text: StreamPart = {
          type: "reasoning",
          block,
          text: stringField(content, "thinking"),
        };
        return signature ? [text, { type: "reasoning-signature", block, signature }] : [text];
      }
      case "redacted_thinking":
        this.#blocks.set(block, { kind: "redacted" });
        return [{ type: "redacted-reasoning", block, data: stringField(content, "data") }];
      case "tool_use":
      case "server_tool_use": {
        const id = stringField(content, "id");
        this.#blocks.set(block, { kind: "tool", id, pieces: [], startInput: content.input });
        const start: StreamPart = {
          type: "tool-call-start",
          block,
          id,
          name: stringField(content, "name"),
        };
        if (content.type === "server_tool_use") start.server = true;
        return [start];
      }
      default:
        this.#blocks.set(block, { kind: "provider", data: { ...content }, inputPieces: undefined });
        return NONE;
    }
  }

  #blockDelta(block: number, delta: JsonObject): readonly StreamPart[] {
    const state = this.#blocks.get(block);
    if (state?.kind === "provider") {
      applyProviderDelta(state, delta);
      return NONE;
    }
    switch (delta.type) {
      case "text_delta": {
        const text = stringField(delta, "text");
        return text ? [{ type: "text", block, text }] : NONE;
      }
      case "thinking_delta": {
        const text = stringField(delta, "thinking");
        return text ? [{ type: "reasoning", block, text }] : NONE;
      }
      case "signature_delta": {
        // Anthropic sends the whole signature in one delta; should it ever come in pieces, the
        // part carries the signature so far (the assembler keeps the last one).
        let signature = stringField(delta, "signature");
        if (state?.kind === "reasoning") {
          state.signature += signature;
          signature = state.signature;
        }
        return signature ? [{ type: "reasoning-signature", block, signature }] : NONE;
      }
      case "input_json_delta": {
        const inputText = stringField(delta, "partial_json");
        if (state?.kind !== "tool" || inputText === "") return NONE;
        state.pieces.push(inputText);
        return [{ type: "tool-call-delta", block, id: state.id, inputText }];
      }
      default:
        // `citations_delta` on a text block: a text block has no place for citations in
        // Spool's vocabulary, and the search results they point into are kept whole as the
        // `web_search_tool_result` provider block; the text is complete without them. Delta
        // types newer than this adapter are skipped for the same reason: nowhere to keep them.
        return NONE;
    }
  }

  #blockStop(block: number): readonly StreamPart[] {
    const state = this.#blocks.get(block);
    if (!state) return NONE;
    this.#blocks.delete(block);
    if (state.kind === "tool") {
      const inputText =
        state.pieces.length > 0 ? state.pieces.join("") : inputJson(state.startInput);
      return [
        { type: "tool-call-end", block, id: state.id, inputText, ...parseToolInput(inputText) },
      ];
    }
    if (state.kind === "provider") {
      if (state.inputPieces) {
        const parsed = parseToolInput(state.inputPieces.join(""));
        if (parsed.inputError === undefined) state.data.input = parsed.input;
      }
      const kind = typeof state.data.type === "string" ? state.data.type : "unknown";
      return [{ type: "provider-block", block, kind, data: state.data }];
    }
    return NONE;
  }

  #messageDelta(delta: JsonObject, usage: JsonObject): readonly StreamPart[] {
    if (typeof delta.stop_reason === "string") this.#stopReason = delta.stop_reason;
    const read = this.#usage(usage);
    return Object.keys(read).length > 0 ? [{ type: "usage", usage: read }] : NONE;
  }

  #messageStop(): readonly StreamPart[] {
    const out: StreamPart[] = [];
    for (const block of [...this.#blocks.keys()].sort((a, b) => a - b)) {
      out.push(...this.#blockStop(block));
    }
    out.push({
      type: "stop",
      reason: mapAnthropicStopReason(this.#stopReason),
      providerReason: this.#stopReason,
    });
    this.done = true;
    return out;
  }

  /**
   * Usage from `message_start` or `message_delta`. Anthropic's counts are cumulative, and a
   * `message_delta` may repeat (or, from compatible servers, first give) the input counts, so
   * each field is remembered and `inputTokens` is recomputed whenever one of them comes.
   */
  #usage(usage: JsonObject): Partial<Usage> {
    const out: Partial<Usage> = {};
    const input = count(usage.input_tokens);
    const cacheRead = count(usage.cache_read_input_tokens);
    const cacheWrite = count(usage.cache_creation_input_tokens);
    if (input !== undefined) this.#inputTokens = input;
    if (cacheRead !== undefined) this.#cacheReadTokens = cacheRead;
    if (cacheWrite !== undefined) this.#cacheWriteTokens = cacheWrite;
    if (input !== undefined || cacheRead !== undefined || cacheWrite !== undefined) {
      out.inputTokens = this.#inputTokens + this.#cacheReadTokens + this.#cacheWriteTokens;
      out.cacheReadTokens = this.#cacheReadTokens;
      out.cacheWriteTokens = this.#cacheWriteTokens;
    }
    const output = count(usage.output_tokens);
    if (output !== undefined) out.outputTokens = output;
    const thinking = count(asObject(usage.output_tokens_details).thinking_tokens);
    if (thinking !== undefined) out.reasoningTokens = thinking;
    return out;
  }
}

/**
 * Folds a delta into a provider block's JSON: `input_json_delta` builds its `input` (MCP tool
 * use), `citations_delta` appends to `citations`, and any other delta (`compaction_delta`, and
 * kinds newer than this adapter) extends the fields it names: strings are appended, other
 * values replace.
 */
function applyProviderDelta(
  state: Extract<BlockState, { kind: "provider" }>,
  delta: JsonObject,
): void {
  if (delta.type === "input_json_delta") {
    state.inputPieces ??= [];
    state.inputPieces.push(stringField(delta, "partial_json"));
    return;
  }
  if (delta.type === "citations_delta") {
    const citations = Array.isArray(state.data.citations) ? state.data.citations : [];
    state.data.citations = [...citations, delta.citation];
    return;
  }
  for (const [key, value] of Object.entries(delta)) {
    if (key === "type") continue;
    const previous = state.data[key];
    state.data[key] =
      typeof value === "string" && (previous == null || typeof previous === "string")
        ? (previous ?? "") + value
        : value;
  }
}

function isContentEvent(type: unknown): boolean {
  return (
    type === "content_block_start" ||
    type === "content_block_delta" ||
    type === "content_block_stop" ||
    type === "message_delta" ||
    type === "message_stop"
  );
}

/** A tool input that came whole (in `message_start`, or a start with no deltas) as JSON text. */
function inputJson(input: unknown): string {
  if (input === undefined || input === null) return "";
  if (typeof input === "object" && Object.keys(input).length === 0) return "";
  return JSON.stringify(input);
}

function blockIndex(provider: string, event: JsonObject): number {
  const index = event.index;
  if (typeof index === "number" && Number.isInteger(index) && index >= 0) return index;
  throw badStream(
    provider,
    `${String(event.type)} without a valid block index (${JSON.stringify(index)})`,
  );
}

function badStream(
  provider: string,
  what: string,
  advice = "The response is not a well-formed Messages stream; check the base URL and any proxy in between",
): ProviderError {
  return new ProviderError({
    code: "provider.bad-stream",
    message: `${provider}: ${what}. ${advice}`,
    retryable: false,
  });
}

function asObject(value: unknown): JsonObject {
  return value !== null && typeof value === "object" ? (value as JsonObject) : {};
}

function stringField(record: JsonObject, key: string): string {
  const value = record[key];
  return typeof value === "string" ? value : "";
}

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}
