/**
 * A loopback server imitating a local OpenAI-compatible model server (Ollama, vLLM, llama.cpp's
 * llama-server, LM Studio) for the recipes of docs/providers.md: `GET /v1/models` and streaming
 * `POST /v1/chat/completions` as each of them answers, on a free port instead of its own.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Which server to imitate. */
export type LocalServerKind = "ollama" | "vllm" | "llamacpp" | "lmstudio";

/** How the imitated model answers a request that carries no tool result yet. */
export type AnswerStyle =
  /** A native tool call of `clock_now`, then (once its result is sent back) plain text. */
  | "native-tools"
  /** Protocol tags in plain text: a `clock.now` action and a response that uses its output. */
  | "protocol-tags";

/** A request the server received. */
export interface LocalRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** A running imitation. */
export interface LocalServer {
  /** `http://127.0.0.1:<port>` (no path). */
  readonly origin: string;
  readonly port: number;
  readonly requests: LocalRequest[];
  close(): Promise<void>;
}

/** What the imitated servers differ in, as far as a client can tell. */
const KINDS: Record<
  LocalServerKind,
  { owner: string; extra: Record<string, unknown>; loaded?: string; strictModel: boolean }
> = {
  // Ollama tags its chunks with its own fingerprint and serves any model it has pulled.
  ollama: { owner: "library", extra: { system_fingerprint: "fp_ollama" }, strictModel: false },
  // vLLM serves exactly the model it was started with and refuses any other name with a 404.
  vllm: { owner: "vllm", extra: {}, strictModel: true },
  // llama-server answers with the model it loaded, whatever the request names.
  llamacpp: { owner: "llamacpp", extra: {}, loaded: "gguf/model.gguf", strictModel: false },
  lmstudio: { owner: "organization_owner", extra: {}, strictModel: false },
};

/** The marker every imitated answer carries, so a test can find it on the screen. */
export function answerMarker(kind: LocalServerKind): string {
  return `Answered by the ${kind} server`;
}

/**
 * Starts the imitation of `kind` serving `model`; each first request of a turn is answered in
 * `style`. It checks nothing itself: tests read `requests`.
 */
export async function startLocalServer(
  kind: LocalServerKind,
  model: string,
  style: AnswerStyle,
): Promise<LocalServer> {
  const requests: LocalRequest[] = [];
  const traits = KINDS[kind];
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      raw += chunk;
    });
    req.on("end", () => {
      const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      const path = req.url ?? "";
      requests.push({ method: req.method ?? "", path, headers: req.headers, body });
      if (req.method === "GET" && path === "/v1/models") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            object: "list",
            data: [{ id: model, object: "model", owned_by: traits.owner }],
          }),
        );
        return;
      }
      if (req.method !== "POST" || path !== "/v1/chat/completions") {
        res.writeHead(404, { "content-type": "text/plain" });
        res.end("404 page not found");
        return;
      }
      if (traits.strictModel && body.model !== model) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            object: "error",
            message: `The model \`${String(body.model)}\` does not exist.`,
            type: "NotFoundError",
            code: 404,
          }),
        );
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const answered = traits.loaded ?? String(body.model);
      for (const frame of framesFor(kind, style, body, answered, traits.extra)) res.write(frame);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The SSE frames answering one chat request. */
function framesFor(
  kind: LocalServerKind,
  style: AnswerStyle,
  body: Record<string, unknown>,
  model: string,
  extra: Record<string, unknown>,
): string[] {
  const messages = Array.isArray(body.messages) ? (body.messages as { role?: string }[]) : [];
  const hasResult = messages.some((message) => message.role === "tool");
  const chunk = (choices: unknown[], more: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: `chatcmpl-${kind}`, object: "chat.completion.chunk", created: 1_770_000_000, model, choices, ...extra, ...more })}\n\n`;
  const delta = (d: Record<string, unknown>, finish: string | null = null) =>
    chunk([{ index: 0, delta: d, finish_reason: finish }]);
  const usage = chunk([], {
    usage: { prompt_tokens: 40, completion_tokens: 12, total_tokens: 52 },
  });
  const frames = [delta({ role: "assistant", content: "" })];
  if (style === "native-tools" && !hasResult) {
    frames.push(
      delta({
        tool_calls: [
          {
            index: 0,
            id: "call_clock",
            type: "function",
            function: { name: "clock_now", arguments: "" },
          },
        ],
      }),
      delta({ tool_calls: [{ index: 0, function: { arguments: "{}" } }] }),
      delta({}, "tool_calls"),
    );
  } else if (style === "native-tools") {
    for (const piece of [answerMarker(kind), ", after the clock ", "tool ran."]) {
      frames.push(delta({ content: piece }));
    }
    frames.push(delta({}, "stop"));
  } else {
    const text = `<action type="tool" mode="sync" id="t1">{"name": "clock.now", "parameters": {}, "output_key": "now"}</action><response>${answerMarker(kind)} on a $now.weekday.</response>`;
    for (let at = 0; at < text.length; at += 17)
      frames.push(delta({ content: text.slice(at, at + 17) }));
    frames.push(delta({}, "stop"));
  }
  return [...frames, usage, "data: [DONE]\n\n"];
}
