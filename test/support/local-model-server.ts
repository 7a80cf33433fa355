import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** What a local model server (Ollama, vLLM, llama.cpp) answers about its model. */
export interface LocalServerOptions {
  /** Which server it plays: the routes it answers besides chat completions. */
  kind: "ollama" | "vllm" | "llamacpp" | "plain";
  /** The model it serves (the id `/v1/models` lists). */
  model: string;
  /** The window it reports: Ollama's `num_ctx` (or its arch context length), vLLM's `max_model_len`, llama.cpp's `n_ctx`. */
  window?: number;
  /** Ollama: report the window as `<arch>.context_length` instead of `num_ctx`. */
  archOnly?: boolean;
  /**
   * The answer to a chat completion request, by its body: a text (streamed as one SSE answer
   * with `inputTokens` of usage), or an error `{ status, body }` sent as JSON.
   */
  answer: (
    body: string,
  ) => { text: string; inputTokens: number } | { status: number; body: unknown };
}

/** A request the server received. */
export interface LocalRequest {
  method: string;
  path: string;
  body: string;
}

/** A loopback OpenAI-compatible server playing an Ollama, vLLM or llama.cpp server. */
export interface LocalModelServer {
  /** `http://127.0.0.1:<port>/v1` */
  readonly baseURL: string;
  readonly requests: LocalRequest[];
  close(): Promise<void>;
}

/** Starts a `LocalModelServer` on a free loopback port. */
export async function startLocalModelServer(
  options: LocalServerOptions,
): Promise<LocalModelServer> {
  const requests: LocalRequest[] = [];
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const path = (req.url ?? "").split("?")[0] ?? "";
    requests.push({ method: req.method ?? "", path, body });
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    const discovered = discoveryAnswer(options, req.method ?? "", path);
    if (discovered !== undefined) return json(200, discovered);
    if (req.method === "POST" && path === "/v1/chat/completions") {
      const answer = options.answer(body);
      if ("status" in answer) return json(answer.status, answer.body);
      res.writeHead(200, { "content-type": "text/event-stream" });
      return res.end(chatStream(options.model, answer.text, answer.inputTokens));
    }
    json(404, { error: "not found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function discoveryAnswer(options: LocalServerOptions, method: string, path: string): unknown {
  const { kind, model, window } = options;
  if (window === undefined) return undefined;
  if (kind === "vllm" && method === "GET" && path === "/v1/models") {
    return { object: "list", data: [{ id: model, object: "model", max_model_len: window }] };
  }
  if (kind === "ollama" && method === "POST" && path === "/api/show") {
    return options.archOnly
      ? {
          parameters: 'stop "<|im_end|>"',
          model_info: { "general.architecture": "qwen3", "qwen3.context_length": window },
        }
      : {
          parameters: `num_ctx ${window}\nstop "<|im_end|>"`,
          model_info: { "general.architecture": "qwen3", "qwen3.context_length": 40_960 },
        };
  }
  if (kind === "llamacpp" && method === "GET" && path === "/props") {
    return { default_generation_settings: { n_ctx: window }, total_slots: 1 };
  }
  return undefined;
}

/** An OpenAI chat completion stream answering `text`, reporting `inputTokens` of input. */
export function chatStream(model: string, text: string, inputTokens: number): string {
  const chunk = (choices: unknown[], extra: object = {}) =>
    `data: ${JSON.stringify({ id: "chatcmpl-local", object: "chat.completion.chunk", created: 1, model, choices, ...extra })}\n\n`;
  return [
    chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]),
    chunk([{ index: 0, delta: { content: text }, finish_reason: null }]),
    chunk([{ index: 0, delta: {}, finish_reason: "stop" }]),
    chunk([], {
      usage: { prompt_tokens: inputTokens, completion_tokens: 5, total_tokens: inputTokens + 5 },
    }),
    "data: [DONE]\n\n",
  ].join("");
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of req) parts.push(chunk as Buffer);
  return Buffer.concat(parts).toString("utf8");
}
