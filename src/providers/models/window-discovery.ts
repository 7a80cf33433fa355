import { z } from "zod";
import type { ServerModelDescription } from "./model-window.js";

/** How long one question to a server may take before Spool goes on without its answer. */
export const DISCOVERY_TIMEOUT_MS = 3_000;
/** The most bytes of an answer read (Ollama's `/api/show` carries the model's template). */
const MAX_ANSWER_CHARS = 2_000_000;

/** Which questions a server answers: vLLM, Ollama, llama.cpp, or try each (`any`). */
export type DiscoveryKind = "vllm" | "ollama" | "llamacpp" | "any";

/** What `discoverModelWindow` needs. */
export interface DiscoveryOptions {
  /** The OpenAI-compatible base URL (`http://127.0.0.1:11434/v1`). */
  baseURL: string;
  model: string;
  kind: DiscoveryKind;
  /** Sent as a bearer token where the server asks for one (vLLM `--api-key`); never logged. */
  apiKey?: string;
  fetch?: typeof globalThis.fetch;
  /** Default `DISCOVERY_TIMEOUT_MS`, for all questions together. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Asks an OpenAI-compatible server how large `model`'s context window is: vLLM `GET /v1/models`
 * (`max_model_len`), Ollama `POST /api/show` (`num_ctx` in its parameters when set, else
 * `model_info["<arch>.context_length"]`), llama.cpp `GET /props`
 * (`default_generation_settings.n_ctx`). `any` tries them in that order and takes the first
 * answer. Never throws: a server that does not answer, answers late (past `timeoutMs`) or answers
 * something else gives `undefined`.
 */
export async function discoverModelWindow(
  options: DiscoveryOptions,
): Promise<ServerModelDescription | undefined> {
  const timeout = AbortSignal.timeout(options.timeoutMs ?? DISCOVERY_TIMEOUT_MS);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const probes: Record<Exclude<DiscoveryKind, "any">, Probe> = {
    vllm: askVllm,
    ollama: askOllama,
    llamacpp: askLlamaCpp,
  };
  const order = options.kind === "any" ? (["vllm", "llamacpp", "ollama"] as const) : [options.kind];
  for (const kind of order) {
    if (signal.aborted) return undefined;
    try {
      const found = await probes[kind](options, signal);
      if (found) return found;
    } catch {
      // Not this kind of server, or not reachable: the next question, or no answer.
    }
  }
  return undefined;
}

type Probe = (
  options: DiscoveryOptions,
  signal: AbortSignal,
) => Promise<ServerModelDescription | undefined>;

const tokens = z.number().int().positive().max(100_000_000);

const vllmModels = z.object({
  data: z.array(z.object({ id: z.string(), max_model_len: tokens.nullish() })).nullish(),
});

const askVllm: Probe = async (options, signal) => {
  const body = vllmModels.parse(
    await getJson(options, `${trimmed(options.baseURL)}/models`, signal),
  );
  const models = body.data ?? [];
  const match =
    models.find((entry) => entry.id === options.model) ??
    (models.length === 1 ? models[0] : undefined);
  if (!match?.max_model_len) return undefined;
  return {
    contextWindow: match.max_model_len,
    detail: `GET /v1/models max_model_len of ${match.id}`,
  };
};

const ollamaShow = z.object({
  parameters: z.string().nullish(),
  model_info: z.record(z.string(), z.unknown()).nullish(),
});

const askOllama: Probe = async (options, signal) => {
  const body = ollamaShow.parse(
    await getJson(options, `${serverRoot(options.baseURL)}/api/show`, signal, {
      model: options.model,
    }),
  );
  const numCtx = /(?:^|\n)\s*num_ctx\s+(\d+)/.exec(body.parameters ?? "")?.[1];
  if (numCtx !== undefined) {
    const parsed = tokens.safeParse(Number(numCtx));
    if (parsed.success) {
      return { contextWindow: parsed.data, detail: "POST /api/show parameters num_ctx" };
    }
  }
  const info = body.model_info ?? {};
  const arch = info["general.architecture"];
  const key = typeof arch === "string" ? `${arch}.context_length` : undefined;
  const length = key !== undefined ? tokens.safeParse(info[key]) : undefined;
  if (!length?.success) return undefined;
  return { contextWindow: length.data, detail: `POST /api/show model_info["${key}"]` };
};

const llamaProps = z.object({
  default_generation_settings: z.object({ n_ctx: tokens.nullish() }).nullish(),
  n_ctx: tokens.nullish(),
});

const askLlamaCpp: Probe = async (options, signal) => {
  const body = llamaProps.parse(
    await getJson(options, `${serverRoot(options.baseURL)}/props`, signal),
  );
  const nCtx = body.default_generation_settings?.n_ctx ?? body.n_ctx;
  if (!nCtx) return undefined;
  return { contextWindow: nCtx, detail: "GET /props default_generation_settings.n_ctx" };
};

async function getJson(
  options: DiscoveryOptions,
  url: string,
  signal: AbortSignal,
  post?: unknown,
): Promise<unknown> {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  if (post !== undefined) headers["content-type"] = "application/json";
  const response = await fetchImpl(url, {
    method: post === undefined ? "GET" : "POST",
    headers,
    ...(post !== undefined ? { body: JSON.stringify(post) } : {}),
    signal,
  });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`status ${response.status}`);
  }
  const text = await response.text();
  if (text.length > MAX_ANSWER_CHARS) throw new Error("answer too large");
  return JSON.parse(text);
}

/** The base URL without a trailing slash. */
function trimmed(baseURL: string): string {
  return baseURL.replace(/\/+$/, "");
}

/** The server's root: the base URL without its `/v1` (Ollama's and llama.cpp's own routes). */
function serverRoot(baseURL: string): string {
  return trimmed(baseURL).replace(/\/v1$/, "");
}
