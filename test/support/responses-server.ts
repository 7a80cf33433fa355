import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { ReceivedRequest } from "./replay-server.js";

// A loopback OpenAI Responses server with state, as OpenAI keeps it: every response it issues
// gets an id it remembers, and a request whose `previous_response_id` it does not know is refused
// with OpenAI's 400 `previous_response_not_found`. Answers are scripted (text or one function
// call); the real `openai` SDK talks to it.

/** One item of a request body `input`. */
export type Item = Record<string, unknown>;
/** What the server read from a request body. */
export interface Received {
  previous_response_id?: string;
  input: Item[];
  instructions?: string;
}
/** A scripted answer: a text message, or one function call. */
export type Answer = { text: string } | { call: { id: string; name: string; args: string } };

/** A Responses server that keeps the response ids it issued and refuses unknown ones. */
export class ResponsesServer {
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
export function responsesSse(id: string, answer: Answer): string {
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
