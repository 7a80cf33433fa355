import OpenAI from "openai";
import { MemoryError } from "./memory-error.js";

/** Turns texts into vectors: the provider's embedding API. */
export interface Embedder {
  /** The embedding model: vectors of different models are never compared. */
  readonly model: string;
  /** One vector per text, in order. Rejects with `MemoryError` `memory.embedding-failed`. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** Options of `createOpenAiEmbedder`. */
export interface OpenAiEmbedderOptions {
  model: string;
  /** An OpenAI-compatible server's base URL (default OpenAI's). */
  baseURL?: string;
  /** The API key; a local server needs none. Never appears in errors. */
  apiKey?: string;
  /** Injected in tests (default `globalThis.fetch`). */
  fetch?: typeof fetch;
}

/** The most characters of one text sent to be embedded (about 2,000 tokens). */
const TEXT_MAX = 8000;

/**
 * An embedder over an OpenAI-compatible `/embeddings` endpoint (OpenAI, Ollama, vLLM, llama.cpp,
 * LM Studio) through the official `openai` SDK. Texts longer than 8,000 characters are embedded by
 * their start. A failure (refused, unreachable, a malformed answer) rejects with
 * `memory.embedding-failed`, its message free of the key.
 */
export function createOpenAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  const apiKey = options.apiKey ?? "not-needed";
  const client = new OpenAI({
    apiKey,
    ...(options.baseURL ? { baseURL: options.baseURL } : {}),
    maxRetries: 1,
    timeout: 30_000,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const hide = (text: string) => (options.apiKey ? text.replaceAll(options.apiKey, "…") : text);
  return {
    model: options.model,
    async embed(texts) {
      if (texts.length === 0) return [];
      let response: Awaited<ReturnType<typeof client.embeddings.create>>;
      try {
        response = await client.embeddings.create({
          model: options.model,
          input: texts.map((text) => text.slice(0, TEXT_MAX)),
          encoding_format: "float",
        });
      } catch (error) {
        throw new MemoryError(
          "memory.embedding-failed",
          `the embedding API refused or failed: ${hide((error as Error).message ?? String(error))}`,
          {
            cause: error,
            retryable: true,
            hint: "Check SPOOL_EMBEDDING_MODEL and the server at SPOOL_EMBEDDING_BASE_URL; searches use full text alone meanwhile",
          },
        );
      }
      const data = Array.isArray(response?.data) ? response.data : [];
      const vectors = new Array<Float32Array | undefined>(texts.length);
      for (const [position, item] of data.entries()) {
        const index = typeof item?.index === "number" ? item.index : position;
        if (Array.isArray(item?.embedding) && index >= 0 && index < texts.length) {
          vectors[index] = Float32Array.from(item.embedding as number[]);
        }
      }
      if (vectors.some((vector) => vector === undefined || vector.length === 0)) {
        throw new MemoryError(
          "memory.embedding-failed",
          `the embedding API answered ${data.length} vectors for ${texts.length} texts`,
          { retryable: true, hint: "Check that SPOOL_EMBEDDING_MODEL names an embedding model" },
        );
      }
      return vectors as Float32Array[];
    },
  };
}

/**
 * The embedder the environment configures, or `undefined` when `SPOOL_EMBEDDING_MODEL` is unset
 * (full-text search alone): the server at `SPOOL_EMBEDDING_BASE_URL`, else `OPENAI_BASE_URL`,
 * else OpenAI's; the key `SPOOL_EMBEDDING_API_KEY`, else `OPENAI_API_KEY` (a local server needs
 * none). Throws `memory.embedding-config` for OpenAI's own server without a key.
 */
export function embedderFromEnv(
  env: Record<string, string | undefined>,
  fetchImpl?: typeof fetch,
): Embedder | undefined {
  const model = env.SPOOL_EMBEDDING_MODEL?.trim();
  if (!model) return undefined;
  const baseURL = env.SPOOL_EMBEDDING_BASE_URL?.trim() || env.OPENAI_BASE_URL?.trim() || undefined;
  const apiKey = env.SPOOL_EMBEDDING_API_KEY?.trim() || env.OPENAI_API_KEY?.trim() || undefined;
  if (!baseURL && !apiKey) {
    throw new MemoryError(
      "memory.embedding-config",
      `SPOOL_EMBEDDING_MODEL=${model} names an OpenAI embedding model, but no API key is set`,
      {
        hint: "Set OPENAI_API_KEY (or SPOOL_EMBEDDING_API_KEY), or SPOOL_EMBEDDING_BASE_URL for a local server, or unset SPOOL_EMBEDDING_MODEL for full-text search alone",
      },
    );
  }
  return createOpenAiEmbedder({
    model,
    ...(baseURL ? { baseURL } : {}),
    ...(apiKey ? { apiKey } : {}),
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
}
