import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventStore } from "../src/log/index.js";
import { createOpenAIResponsesProvider } from "../src/providers/index.js";
import { createAgentRuntime } from "../src/runtime/index.js";
import type { ReceivedRequest } from "./support/replay-server.js";
import {
  agentSpec,
  dataOf,
  expectKeyNeverLogged,
  ofType,
  recordingTool,
  replay,
} from "./support/runtime-e2e.js";
import { readAll, tempStore } from "./support/transcripts.js";

// The runtime continues an OpenAI Responses conversation from the thread's provider cursor
// (`previous_response_id`, only the new input), and rebuilds the whole context from the log when
// the server no longer knows the id. The server below is a real HTTP server on loopback that keeps
// the ids it issued, as OpenAI does, and refuses an id it does not know; the real `openai` SDK
// talks to it.

const KEY = "sk-test-cursor-key-0123456789abcdefABCD";
const continuity = "home";

type Item = Record<string, unknown>;
interface Received {
  previous_response_id?: string;
  input: Item[];
  instructions?: string;
}
type Answer = { text: string } | { call: { id: string; name: string; args: string } };

/** A Responses server that keeps the response ids it issued and refuses unknown ones. */
class ResponsesServer {
  readonly requests: Received[] = [];
  /** Every request as received, headers included (for the key check). */
  readonly received: ReceivedRequest[] = [];
  readonly #known = new Set<string>();
  readonly #answers: Answer[] = [];
  #issued = 0;
  #server: Server | undefined;
  url = "";

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => {
        body += chunk.toString("utf8");
      });
      req.on("end", () => {
        const request = JSON.parse(body) as Received;
        this.requests.push(request);
        this.received.push({
          method: req.method ?? "",
          url: req.url ?? "",
          headers: req.headers,
          body,
        });
        const previous = request.previous_response_id;
        if (previous !== undefined && !this.#known.has(previous)) {
          res.writeHead(400, { "content-type": "application/json" });
          res.end(
            JSON.stringify({
              error: {
                message: `Previous response with id '${previous}' not found.`,
                type: "invalid_request_error",
                param: "previous_response_id",
                code: "previous_response_not_found",
              },
            }),
          );
          return;
        }
        const answer = this.#answers.shift();
        if (!answer) {
          res.writeHead(500, { "content-type": "application/json" });
          res.end(
            JSON.stringify({ error: { message: "no answer scripted", type: "server_error" } }),
          );
          return;
        }
        const id = `resp_${++this.#issued}`;
        this.#known.add(id);
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(responsesSse(id, answer));
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.#server!.address() as AddressInfo).port}/v1`;
  }

  answer(...answers: Answer[]): void {
    this.#answers.push(...answers);
  }

  /** Forgets every response id issued so far (stored responses expire). */
  forget(): void {
    this.#known.clear();
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server!.close(() => resolve()));
  }
}

/** The SSE body of one response: a text message or one function call. */
function responsesSse(id: string, answer: Answer): string {
  let seq = 0;
  const event = (type: string, data: object) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
  const response = (status: string, output: unknown[], usage: unknown) => ({
    id,
    object: "response",
    created_at: 1,
    status,
    model: "gpt-4.1",
    output,
    usage,
  });
  const usage = { input_tokens: 50, output_tokens: 5, total_tokens: 55 };
  const out: string[] = [
    event("response.created", { response: response("in_progress", [], null) }),
  ];
  let done: Item;
  if ("text" in answer) {
    const item = { id: `msg_${id}`, type: "message", role: "assistant", status: "in_progress" };
    done = {
      ...item,
      status: "completed",
      content: [{ type: "output_text", text: answer.text, annotations: [] }],
    };
    out.push(
      event("response.output_item.added", { output_index: 0, item: { ...item, content: [] } }),
      event("response.output_text.delta", {
        item_id: item.id,
        output_index: 0,
        content_index: 0,
        delta: answer.text,
      }),
    );
  } else {
    const { call } = answer;
    const item = {
      id: `fc_${id}`,
      type: "function_call",
      call_id: call.id,
      name: call.name,
      arguments: "",
      status: "in_progress",
    };
    done = { ...item, arguments: call.args, status: "completed" };
    out.push(
      event("response.output_item.added", { output_index: 0, item }),
      event("response.function_call_arguments.delta", {
        item_id: item.id,
        output_index: 0,
        delta: call.args,
      }),
      event("response.function_call_arguments.done", {
        item_id: item.id,
        output_index: 0,
        arguments: call.args,
      }),
    );
  }
  out.push(
    event("response.output_item.done", { output_index: 0, item: done }),
    event("response.completed", { response: response("completed", [done], usage) }),
  );
  return out.join("");
}

const FINAL = (text: string) => `<response>${text}</response>`;

let store: EventStore;
let cleanup: () => Promise<void>;
let server: ResponsesServer;

beforeEach(async () => {
  ({ store, cleanup } = await tempStore("spool-cursor-"));
  server = new ResponsesServer();
  await server.start();
});
afterEach(async () => {
  await server.close();
  await cleanup();
});

describe("provider cursors on OpenAI Responses", () => {
  it("continues with previous_response_id and only the new input; an unknown id rebuilds from the log", async () => {
    const weather = recordingTool("weather", () => ({ celsius: 18 }));
    const agent = agentSpec("gpt-4.1", [weather.tool]);
    const provider = createOpenAIResponsesProvider({
      apiKey: KEY,
      baseURL: server.url,
      env: {},
      transport: { maxAttempts: 1 },
    });
    server.answer(
      { call: { id: "call_w1", name: "weather", args: '{"city":"Oslo"}' } },
      { text: FINAL("It is 18 °C in Oslo.") },
      { text: FINAL("Bergen is rainy.") },
      { text: FINAL("You asked about Oslo and Bergen.") },
    );
    const runtime = createAgentRuntime({ store, provider, agent });
    const first = await runtime.submit(continuity, { text: "Oslo?", actor: "ada", origin: "t" });
    expect(first).toMatchObject({ status: "completed", steps: 2 });
    expect(weather.calls).toEqual([{ city: "Oslo" }]);

    // Step 1 sends the whole context; step 2 continues from resp_1 with the tool output only.
    const [whole1, continued1] = server.requests;
    expect(whole1!.previous_response_id).toBeUndefined();
    expect(whole1!.input).toEqual([expect.objectContaining({ role: "user" })]);
    expect(continued1!.previous_response_id).toBe("resp_1");
    expect(continued1!.input).toEqual([
      expect.objectContaining({ type: "function_call_output", call_id: "call_w1" }),
    ]);
    expect(continued1!.instructions).toBe(whole1!.instructions);

    // A new turn continues from the run's last response with the new user message only.
    const second = await runtime.submit(continuity, { text: "Bergen?", actor: "ada", origin: "t" });
    expect(second).toMatchObject({ status: "completed", result: "Bergen is rainy." });
    expect(server.requests[2]!.previous_response_id).toBe("resp_2");
    expect(server.requests[2]!.input).toEqual([
      expect.objectContaining({ role: "user", content: expect.stringContaining("Bergen?") }),
    ]);

    // The server forgets its responses: the continued call is refused, and the runtime sends
    // the whole context rebuilt from the log, without the id, and goes on.
    server.forget();
    const third = await runtime.submit(continuity, { text: "Recap?", actor: "ada", origin: "t" });
    await runtime.close();
    expect(third).toMatchObject({
      status: "completed",
      result: "You asked about Oslo and Bergen.",
    });
    const [refused, rebuilt] = server.requests.slice(3);
    expect(refused!.previous_response_id).toBe("resp_3");
    expect(refused!.input).toHaveLength(1);
    expect(rebuilt!.previous_response_id).toBeUndefined();
    const roles = rebuilt!.input.map((item) => item.role ?? item.type);
    expect(roles).toEqual([
      "user",
      "function_call",
      "function_call_output",
      "assistant",
      "user",
      "assistant",
      "user",
    ]);
    expect(rebuilt!.input.at(-1)).toMatchObject({
      role: "user",
      content: expect.stringContaining("Recap?"),
    });
    expect(server.requests).toHaveLength(5);

    const events = await readAll(store, continuity);
    // The log says what happened: which calls continued, and the rotation of the expired cursor.
    const compiled = ofType(events, "context.compiled").map((event) => dataOf(event).cursor);
    expect(compiled).toEqual([
      undefined,
      expect.objectContaining({ previous_response_id: "resp_1", messages: 1 }),
      expect.objectContaining({ previous_response_id: "resp_2", messages: 1 }),
      expect.objectContaining({ previous_response_id: "resp_3", messages: 1 }),
    ]);
    // A continued step's input is estimated from its whole context (the provider counts it all).
    const estimates = ofType(events, "step.started").map(
      (event) => dataOf(event).estimated_input_tokens,
    );
    expect(estimates).toHaveLength(4);
    for (const estimate of estimates) expect(estimate).toBeGreaterThan(0);
    const rotations = ofType(events, "provider.cursor-rotated").map(dataOf);
    expect(rotations).toEqual([
      {
        previous_response_id: "resp_3",
        reason: "expired",
        step: expect.any(String),
        rebuilt_messages: 7,
      },
    ]);
    expect(ofType(events, "message.failed")).toEqual([]);
    expectKeyNeverLogged(server.received, events, KEY);

    // Replay sends the same requests (continued ones included) to the log, never to the server.
    const report = await replay(store, continuity, agent);
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
    expect(server.requests).toHaveLength(5);
    expect(weather.calls).toHaveLength(1);
  });
});
