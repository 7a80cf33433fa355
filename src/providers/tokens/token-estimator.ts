import { createRequire } from "node:module";
import type { ContentBlock } from "../assembled-message.js";
import { createModelCatalogue, type ModelCatalogue, type Tokenizer } from "../models/index.js";
import type { ProviderMessage, ToolSpec, UserPart } from "../provider.js";
import {
  applyObservation,
  type CalibrationObservation,
  type CalibrationOptions,
  type CalibrationState,
  correctionFactor,
  DEFAULT_CALIBRATION,
} from "./calibration.js";
import { imageTokens } from "./image-tokens.js";

/** The parts of a request that count toward its input tokens. */
export interface EstimateRequest {
  system?: string;
  messages?: readonly ProviderMessage[];
  tools?: readonly ToolSpec[];
}

/** Text, or a request (a `ProviderRequest` will do). */
export type EstimateInput = string | EstimateRequest;

/**
 * Counts and estimates input tokens per model.
 *
 * Contract: nothing here calls a provider or throws for an unknown model (it falls back to
 * `DEFAULT_CHARS_PER_TOKEN`). Estimates are for before a call; once a provider reports usage, that
 * is the truth, and `observe` lets it correct later estimates.
 */
export interface TokenEstimator {
  /**
   * Tokens in `text` without calibration: exact for models with a real tokenizer (`o200k_base`,
   * `cl100k_base`; special-token text counts as plain text), else characters ÷ the maker's ratio.
   */
  count(model: string, text: string): number;
  /**
   * Calibrated input tokens of `input`: for a request, the system prompt, each message's text plus
   * `MESSAGE_OVERHEAD_TOKENS`, each image (a user's or a tool result's) by its maker's formula
   * when its size is known (`imageTokens`), else `IMAGE_TOKENS`, and each tool's JSON, times the
   * model's correction factor, rounded up.
   */
  estimate(model: string, input: EstimateInput): number;
  /**
   * What `estimate` counts before the correction factor: `estimate` is `ceil(raw × factor)`.
   * Lets a caller cache the raw count of text that does not change (a thread's old messages).
   */
  raw(model: string, input: EstimateInput): number;
  /**
   * Teaches the estimator: `estimatedInputTokens` is what `estimate` returned before the call,
   * `reportedInputTokens` the provider's `usage.inputTokens` for it. Call in the order of the
   * estimates.
   */
  observe(model: string, estimatedInputTokens: number, reportedInputTokens: number): void;
  /** Applies logged observations in order (to rebuild calibration after a restart). */
  replay(observations: Iterable<CalibrationObservation>): void;
  /** The current correction factor of `model` (1 when uncalibrated). */
  factor(model: string): number;
  /** The calibration so far, keyed by catalogue id: plain JSON, to keep and pass back later. */
  calibration(): CalibrationState;
}

/** Options of `createTokenEstimator`. */
export interface TokenEstimatorOptions {
  /** Where models' tokenizers and makers come from; the built-in catalogue by default. */
  catalogue?: ModelCatalogue;
  /** Calibration to start from (what `calibration()` returned earlier). */
  calibration?: CalibrationState;
  calibrationOptions?: CalibrationOptions;
}

/** Characters per token for a model with no tokenizer whose maker has no ratio of its own. */
export const DEFAULT_CHARS_PER_TOKEN = 3.5;

/** Starting characters-per-token by maker, before calibration. */
export const CHARS_PER_TOKEN: Readonly<Record<string, number>> = Object.freeze({
  anthropic: 3.5,
  openai: 4,
  google: 4,
  meta: 4,
  mistral: 3.5,
  deepseek: 3.8,
  qwen: 3.8,
  moonshot: 3.8,
});

/** Tokens each message costs beyond its text (role markers, separators). */
export const MESSAGE_OVERHEAD_TOKENS = 4;
/** Tokens every request costs beyond its messages (the reply's priming). */
export const REQUEST_OVERHEAD_TOKENS = 3;
/**
 * Tokens an image of unknown size is assumed to cost (a large image on Anthropic; OpenAI high
 * detail is similar). An image whose size is known counts by its maker's formula (`imageTokens`).
 */
export const IMAGE_TOKENS = 1_600;

interface Encoding {
  countTokens(text: string, options?: { disallowedSpecial?: Set<string> }): number;
}

const requireCjs = createRequire(import.meta.url);
const encodings = new Map<Exclude<Tokenizer, "estimate">, Encoding>();

/** Loads a BPE encoding on first use: its tables are megabytes, so startup does not pay for them. */
function encoding(name: Exclude<Tokenizer, "estimate">): Encoding {
  let found = encodings.get(name);
  if (!found) {
    found = requireCjs(`gpt-tokenizer/encoding/${name}`) as Encoding;
    encodings.set(name, found);
  }
  return found;
}

const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** A token estimator over `catalogue`, calibrating itself from observed usage. */
export function createTokenEstimator(options: TokenEstimatorOptions = {}): TokenEstimator {
  const catalogue = options.catalogue ?? createModelCatalogue();
  const calibrationOptions = options.calibrationOptions ?? DEFAULT_CALIBRATION;
  let state: CalibrationState = { ...options.calibration };

  // Both are asked for on every estimate; the catalogue's lookup is not free, so remember them.
  const keys = new Map<string, string>();
  const key = (model: string) => {
    let found = keys.get(model);
    if (found === undefined) {
      found = catalogue.lookup(model)?.id ?? model.trim().toLowerCase();
      keys.set(model, found);
    }
    return found;
  };
  const counters = new Map<string, Counter>();
  const counter = (model: string): Counter => {
    let found = counters.get(model);
    if (!found) {
      const maker = catalogue.lookup(model)?.provider;
      found = Object.assign(makeCounter(model), {
        image: (size: ImageSizeLike) => imageTokens(maker, size, IMAGE_TOKENS),
        known: new WeakMap<object, number>(),
      });
      counters.set(model, found);
    }
    return found;
  };
  const makeCounter = (model: string): ((text: string) => number) => {
    const info = catalogue.lookup(model);
    if (info && info.tokenizer !== "estimate") {
      const encoder = encoding(info.tokenizer);
      return (text) => (text === "" ? 0 : encoder.countTokens(text, PLAIN_TEXT));
    }
    const ratio = (info && CHARS_PER_TOKEN[info.provider]) ?? DEFAULT_CHARS_PER_TOKEN;
    return (text) => Math.ceil(text.length / ratio);
  };

  const observe = (model: string, estimate: number, reported: number) => {
    state = applyObservation(state, { model: key(model), estimate, reported }, calibrationOptions);
  };

  return {
    count: (model, text) => counter(model)(text),
    estimate(model, input) {
      const count = counter(model);
      const raw = typeof input === "string" ? count(input) : countRequest(input, count);
      return Math.ceil(raw * correctionFactor(state, key(model)));
    },
    raw(model, input) {
      const count = counter(model);
      return typeof input === "string" ? count(input) : countRequest(input, count);
    },
    observe,
    replay(observations) {
      for (const o of observations) observe(o.model, o.estimate, o.reported);
    },
    factor: (model) => correctionFactor(state, key(model)),
    calibration: () => state,
  };
}

/** An image part's size, when it carries one. */
interface ImageSizeLike {
  width?: number;
  height?: number;
}

/**
 * Counts a model's text, and its images by the model's maker. `known` remembers the count of
 * each message and tool counted (a request's messages and tools are values that never change:
 * a thread's next request holds the same ones and a few more).
 */
type Counter = ((text: string) => number) & {
  image: (size: ImageSizeLike) => number;
  known: WeakMap<object, number>;
};

/** `compute()` for `key`, once per counter. */
function once(count: Counter, key: object, compute: () => number): number {
  let found = count.known.get(key);
  if (found === undefined) {
    found = compute();
    count.known.set(key, found);
  }
  return found;
}

function countRequest(request: EstimateRequest, count: Counter): number {
  let tokens = REQUEST_OVERHEAD_TOKENS;
  if (request.system) tokens += count(request.system) + MESSAGE_OVERHEAD_TOKENS;
  for (const message of request.messages ?? []) {
    tokens += MESSAGE_OVERHEAD_TOKENS + once(count, message, () => countMessage(message, count));
  }
  for (const tool of request.tools ?? []) {
    const { name, description, inputSchema } = tool;
    tokens +=
      MESSAGE_OVERHEAD_TOKENS +
      once(count, tool, () => count(JSON.stringify({ name, description, inputSchema })));
  }
  return tokens;
}

function countMessage(message: ProviderMessage, count: Counter): number {
  if (message.role === "tool") {
    let tokens = 0;
    for (const result of message.results) {
      tokens += count(result.output) + count(result.toolCallId) + MESSAGE_OVERHEAD_TOKENS;
      for (const image of result.images ?? []) tokens += count.image(image);
    }
    return tokens;
  }
  if (typeof message.content === "string") return count(message.content);
  let tokens = 0;
  for (const part of message.content) tokens += countPart(part, count);
  return tokens;
}

/** Reasoning counts too: an overestimate where a provider drops earlier turns' reasoning. */
function countPart(part: ContentBlock | UserPart, count: Counter): number {
  switch (part.type) {
    case "text":
    case "reasoning":
    case "refusal":
      return count(part.text);
    case "image":
      return count.image(part);
    case "tool-call":
      return count(part.name) + count(part.inputText) + MESSAGE_OVERHEAD_TOKENS;
    case "redacted-reasoning":
      return count(part.data);
    case "provider":
      return count(JSON.stringify(part.data) ?? "");
  }
}
