import { createHash } from "node:crypto";
import { Hono } from "hono";
import { ulid } from "ulid";
import { z } from "zod";
import { IDENTIFIER_MAX, identifier } from "../spec/index.js";
import { requireGlobalRole, requireRole } from "./access-control.js";
import { unknownAgent } from "./continuity-routes.js";
import { jsonBody } from "./request-input.js";
import type { ServerEnv, ServerServices } from "./server-env.js";
import { ServerError } from "./server-error.js";
import { followTurn, type TurnPart } from "./turn-output.js";

const content = z.union([
  z.string().max(1_000_000),
  z
    .array(z.looseObject({ type: z.string().max(100), text: z.string().max(1_000_000).optional() }))
    .max(1000),
  z.null(),
]);
const completionBody = z.looseObject({
  /** The agent manifest to talk to. */
  model: identifier,
  messages: z
    .array(z.looseObject({ role: z.string().max(50), content: content.optional() }))
    .min(1)
    .max(10_000),
  stream: z.boolean().nullish(),
});

/** The continuity an actor talks to an agent on, over the OpenAI-compatible route. */
export function openaiContinuity(agent: string, actor: string): string {
  const id = `openai:${agent}:${actor}`;
  if (id.length <= IDENTIFIER_MAX) return id;
  return `openai:${createHash("sha256").update(`${agent}\n${actor}`).digest("hex").slice(0, 48)}`;
}

/**
 * The OpenAI-compatible routes, so any OpenAI client talks to a Spool agent: `POST
 * /v1/chat/completions` (streaming or not), where `model` names the agent manifest and the token
 * names the actor; the conversation goes on on that actor's continuity with that agent (created on
 * first use), and only the newest user message is a new turn. `GET /v1/models` lists the agents.
 */
export function openaiRoutes(services: ServerServices): Hono<ServerEnv> {
  const { store, host, rosters } = services;
  const app = new Hono<ServerEnv>();

  app.get("/models", (c) =>
    c.json({
      object: "list",
      data: host.agents().map((id) => ({ id, object: "model", created: 0, owned_by: "spool" })),
    }),
  );

  app.post("/chat/completions", async (c) => {
    const token = c.get("token");
    const body = await jsonBody(c, completionBody);
    const last = body.messages.at(-1);
    const text = textOf(last?.content);
    if (last?.role !== "user" || text.trim() === "") {
      throw new ServerError(
        400,
        "request.invalid",
        "the last message must be a user message with text",
        {
          hint: "The continuity keeps the conversation: send the new user message last",
        },
      );
    }
    if (!host.hasAgent(body.model)) throw unknownAgent(body.model);
    const continuity = openaiContinuity(body.model, token.actor);
    if (!(await store.continuity(continuity))) {
      requireGlobalRole(token, "writer");
      await store.append({
        continuity,
        type: "continuity.created",
        actor: token.actor,
        origin: "http",
        data: {
          title: `${token.actor} with ${body.model}`,
          labels: { kind: "openai", agent: body.model },
        },
      });
    }
    await requireRole(token, continuity, "writer", rosters);
    const created = Math.floor(Date.now() / 1000);
    const input = { text, actor: token.actor, origin: "openai" };
    if (!body.stream) {
      let end: Extract<TurnPart, { type: "end" }> | undefined;
      let ended!: () => void;
      const finished = new Promise<void>((resolve) => {
        ended = resolve;
      });
      await followTurn(host, continuity, input, (part) => {
        if (part.type !== "end") return;
        end = part;
        ended();
      });
      await finished;
      if (!end || end.status === "failed") {
        throw new ServerError(502, "run.failed", end?.error?.message ?? "the agent's run failed");
      }
      return c.json({
        id: `chatcmpl-${ulid().toLowerCase()}`,
        object: "chat.completion",
        created,
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: end.result ?? "" },
            finish_reason: end.status === "limit" ? "length" : "stop",
          },
        ],
      });
    }
    return streamCompletion(host, continuity, input, body.model, created);
  });

  return app;
}

async function streamCompletion(
  host: ServerServices["host"],
  continuity: string,
  input: { text: string; actor: string; origin: string },
  model: string,
  created: number,
): Promise<Response> {
  const encoder = new TextEncoder();
  let push!: (frame: string, last?: boolean) => void;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true;
      push = (frame, last = false) => {
        if (!open) return;
        try {
          controller.enqueue(encoder.encode(frame));
          if (last) {
            open = false;
            controller.close();
          }
        } catch {
          open = false;
        }
      };
    },
  });
  const id = `chatcmpl-${ulid().toLowerCase()}`;
  const chunk = (delta: object, finish: string | null) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  push(chunk({ role: "assistant", content: "" }, null));
  await followTurn(host, continuity, input, (part) => {
    if (part.type === "text-delta") push(chunk({ content: part.delta }, null));
    else if (part.type === "end") {
      if (part.status === "failed") {
        const message = part.error?.message ?? "the agent's run failed";
        push(
          `data: ${JSON.stringify({ error: { message, type: "run_failed", code: part.error?.code ?? "run.failed" } })}\n\n`,
        );
      } else {
        push(chunk({}, part.status === "limit" ? "length" : "stop"));
      }
      push("data: [DONE]\n\n", true);
    }
  });
  return new Response(stream, {
    headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" },
  });
}

function textOf(value: z.infer<typeof content> | undefined): string {
  if (typeof value === "string") return value;
  if (!value) return "";
  return value
    .filter((item) => item.type === "text" && typeof item.text === "string")
    .map((item) => item.text)
    .join("");
}
