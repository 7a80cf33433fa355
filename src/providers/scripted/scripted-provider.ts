import { messageText } from "../assembled-message.js";
import { isRetryableCode } from "../classify-error.js";
import type { Provider, ProviderMessage, ProviderRequest } from "../provider.js";
import { ProviderError } from "../provider-error.js";
import { abortableSleep, createSdkProvider, type TransportOptions } from "../sdk-provider.js";
import type { StreamPart, Usage } from "../stream-part.js";
import { type ScriptedTurn, scriptedTurnSchema } from "./scripted-script.js";

/** How scripted text is cut into tokens. */
export type ScriptedTokens = "word" | "char" | number;

/** Options of `createScriptedProvider`. */
export interface ScriptedProviderOptions {
  /** The responses to play, one per call, in order (turns with `when` wait for a matching input). */
  script: readonly ScriptedTurn[];
  /** The model name it reports (default `scripted`). */
  model?: string;
  name?: string;
  /** `word` (default: each word with its leading whitespace), `char`, or a number of characters. */
  tokens?: ScriptedTokens;
  /** Delay before the first token and between tokens, in ms (default 0: as fast as possible). */
  timing?: { firstTokenMs?: number; tokenMs?: number };
  /** Start again from the first turn when the script runs out (default false: the call fails). */
  loop?: boolean;
  /** Waits (default: a timer the call's signal cancels); inject a fake to run timing tests instantly. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Retry and idle-timeout settings, as for the real providers. */
  transport?: TransportOptions;
  /**
   * The context window it says it has when asked (`describeModel`), as a server would; absent,
   * it is not asked and a run measures against what the catalogue knows of its model.
   */
  contextWindow?: number;
}

/** A scripted provider plus what a test may want to know about it. */
export interface ScriptedProvider extends Provider {
  /** The requests it received, in order. */
  readonly requests: readonly ProviderRequest[];
  /** Turns not yet played. */
  remaining(): number;
}

/**
 * A provider that plays a script of outputs token by token, for tests and for demos without a key.
 * It goes through the same transport as the real providers, so scripted errors are retried (before
 * the first token) or end the stream (after it) exactly as an SDK error would.
 */
export function createScriptedProvider(options: ScriptedProviderOptions): ScriptedProvider {
  const turns = options.script.map((turn, index) => {
    const parsed = scriptedTurnSchema.safeParse(turn);
    if (!parsed.success) {
      throw new TypeError(
        `scripted turn ${index}: ${parsed.error.issues.map((i) => `${i.path.join(".")} ${i.message}`).join("; ")}`,
      );
    }
    return typeof parsed.data === "string" ? { text: parsed.data } : parsed.data;
  });
  const name = options.name ?? "scripted";
  const model = options.model ?? "scripted";
  const requests: ProviderRequest[] = [];
  const failures = new Map<number, number>();
  let next = 0;
  const sleep = options.sleep ?? abortableSleep;

  const pick = (request: ProviderRequest): number => {
    const input = lastUserText(request.messages);
    for (let offset = 0; offset < turns.length; offset++) {
      const index = next + offset;
      if (index >= turns.length && !options.loop) break;
      const turn = turns[index % turns.length]!;
      if (turn.when === undefined || input.includes(turn.when)) return index % turns.length;
    }
    throw new ProviderError({
      code: "provider.bad-request",
      message: `${name}: the script has no turn left for this call (${turns.length} turns, ${requests.length} calls); add turns or set loop`,
      retryable: false,
    });
  };

  const provider = createSdkProvider<StreamPart>(
    {
      name,
      format: "scripted",
      async open(request, signal) {
        requests.push(request);
        const index = pick(request);
        const turn = turns[index]!;
        const failed = failures.get(index) ?? 0;
        const failing = turn.error && (turn.error.times === undefined || failed < turn.error.times);
        if (failing && turn.error!.afterTokens === undefined) {
          failures.set(index, failed + 1);
          throw scriptedError(name, turn.error!.code, turn.error!.message);
        }
        next = index + 1;
        if (failing) failures.set(index, failed + 1);
        const parts = playTurn(turn, failing ? turn.error!.afterTokens : undefined, request, {
          model,
          name,
          tokens: options.tokens ?? "word",
        });
        return paced(parts, options.timing ?? {}, sleep, signal);
      },
      decode: (parts) => parts,
    },
    { maxAttempts: 4, ...options.transport },
  );
  const { contextWindow } = options;
  return {
    ...provider,
    requests,
    remaining: () => Math.max(0, turns.length - next),
    ...(contextWindow !== undefined
      ? {
          describeModel: async () => ({ contextWindow, detail: "the scripted provider's own" }),
        }
      : {}),
  };
}

/** Spaces parts out in time (the first content part after `firstTokenMs`, later ones after `tokenMs`). */
async function* paced(
  parts: AsyncIterable<StreamPart>,
  timing: { firstTokenMs?: number; tokenMs?: number },
  sleep: (ms: number, signal: AbortSignal) => Promise<void>,
  signal: AbortSignal,
): AsyncGenerator<StreamPart> {
  let first = true;
  for await (const part of parts) {
    if (part.type !== "start") {
      const delay = first ? timing.firstTokenMs : timing.tokenMs;
      first = false;
      if (delay) await sleep(delay, signal);
    }
    // Like a closed HTTP request: nothing more arrives once the call is cancelled.
    signal.throwIfAborted();
    yield part;
  }
}

type Turn = Exclude<ScriptedTurn, string>;

async function* playTurn(
  turn: Turn,
  failAfter: number | undefined,
  request: ProviderRequest,
  settings: { model: string; name: string; tokens: ScriptedTokens },
): AsyncGenerator<StreamPart> {
  let tokens = 0;
  const fail = () => {
    if (failAfter !== undefined && tokens >= failAfter) {
      const error = turn.error!;
      throw scriptedError(settings.name, error.code, error.message);
    }
  };
  yield { type: "start", responseId: `scripted_${request.messages.length}`, model: settings.model };
  let block = 0;
  if (turn.reasoning) {
    for (const piece of splitTokens(turn.reasoning, settings.tokens)) {
      fail();
      tokens++;
      yield { type: "reasoning", block, text: piece };
    }
    block++;
  }
  if (turn.text) {
    for (const piece of splitTokens(turn.text, settings.tokens)) {
      fail();
      tokens++;
      yield { type: "text", block, text: piece };
    }
    block++;
  }
  for (const [index, call] of (turn.toolCalls ?? []).entries()) {
    const id = call.id ?? `call_${request.messages.length}_${index}`;
    const inputText = JSON.stringify(call.input ?? {});
    yield { type: "tool-call-start", block, id, name: call.name };
    for (const piece of splitTokens(inputText, 8)) {
      fail();
      tokens++;
      yield { type: "tool-call-delta", block, id, inputText: piece };
    }
    yield { type: "tool-call-end", block, id, inputText, input: call.input ?? {} };
    block++;
  }
  fail();
  const usage: Usage = {
    inputTokens: turn.usage?.inputTokens ?? Math.ceil(requestChars(request) / 4),
    outputTokens: turn.usage?.outputTokens ?? tokens,
    cacheReadTokens: turn.usage?.cacheReadTokens ?? 0,
    cacheWriteTokens: turn.usage?.cacheWriteTokens ?? 0,
  };
  yield { type: "usage", usage };
  const reason = turn.stopReason ?? (turn.toolCalls?.length ? "tool-use" : "end");
  yield { type: "stop", reason, providerReason: reason };
}

/** Cuts `text` into tokens: words with their leading whitespace, code points, or fixed-size pieces. */
export function splitTokens(text: string, mode: ScriptedTokens): string[] {
  if (mode === "word") return text.match(/\s*\S+|\s+/gu) ?? [];
  const points = Array.from(text);
  const size = mode === "char" ? 1 : Math.max(1, Math.floor(mode));
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(""));
  return out;
}

function scriptedError(
  name: string,
  code: ProviderError["info"]["code"],
  message?: string,
): ProviderError {
  return new ProviderError({
    code,
    message: `${name}: ${message ?? `scripted ${code}`}`,
    retryable: isRetryableCode(code),
  });
}

function lastUserText(messages: readonly ProviderMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== "user") continue;
    if (typeof message.content === "string") return message.content;
    return message.content.map((part) => (part.type === "text" ? part.text : "")).join("");
  }
  return "";
}

function requestChars(request: ProviderRequest): number {
  let chars = request.system?.length ?? 0;
  for (const message of request.messages) {
    if (message.role === "tool")
      for (const result of message.results) {
        chars += result.output.length + (result.images?.length ?? 0) * 1000;
      }
    else if (typeof message.content === "string") chars += message.content.length;
    else if (message.role === "assistant")
      chars += messageText({ content: message.content }).length;
    else
      for (const part of message.content) chars += part.type === "text" ? part.text.length : 1000;
  }
  return chars;
}
