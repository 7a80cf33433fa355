import { Hono } from "hono";
import { ulid } from "ulid";
import { z } from "zod";
import { identifier } from "../spec/index.js";
import { requireGlobalRole, requireRole } from "./access-control.js";
import { unknownAgent } from "./continuity-routes.js";
import { continuityId, jsonBody, paramOf } from "./request-input.js";
import type { ServerEnv, ServerServices } from "./server-env.js";
import { ServerError } from "./server-error.js";
import { followTurn } from "./turn-output.js";
import { UI_STREAM_HEADERS, UiStreamBuffer, uiChunks, uiFrame } from "./ui-message-stream.js";

const part = z.looseObject({
  type: z.string().max(200),
  text: z.string().max(1_000_000).optional(),
});
const message = z.looseObject({
  id: z.string().max(200).optional(),
  role: z.enum(["system", "user", "assistant"]),
  parts: z.array(part).max(10_000),
});
const chatBody = z.looseObject({
  /** The chat's id: the continuity it is (created on first use). */
  id: continuityId,
  messages: z.array(message).min(1).max(10_000),
  /** The agent manifest a new chat runs (default: the workspace's `assistant`). */
  agent: identifier.optional(),
  trigger: z.string().max(100).optional(),
  messageId: z.string().max(200).optional(),
});

/**
 * The AI SDK chat routes, for `useChat` from `@ai-sdk/react` unchanged: `POST /api/chat` takes
 * the chat's messages, appends only the newest user message as a turn (the continuity holds the
 * rest) and answers with the turn's run as a UI message stream; `GET /api/chat/:id/stream`
 * (`resume: true`) answers the stream of the turn still running on that chat from its first
 * chunk, or 204 when none runs. A client that goes away does not stop the run.
 */
export function chatRoutes(services: ServerServices): Hono<ServerEnv> {
  const { store, host, rosters } = services;
  const active = new Map<string, UiStreamBuffer>();
  const app = new Hono<ServerEnv>();

  app.post("/", async (c) => {
    const token = c.get("token");
    const body = await jsonBody(c, chatBody);
    const last = body.messages.at(-1);
    const text = (last?.parts ?? [])
      .filter((item) => item.type === "text" && typeof item.text === "string")
      .map((item) => item.text)
      .join("");
    if (last?.role !== "user" || text.trim() === "") {
      throw new ServerError(
        400,
        "request.invalid",
        "the newest message must be a user message with text",
        {
          hint: "Send the chat's messages with the user's new message last",
        },
      );
    }
    if (!(await store.continuity(body.id))) {
      requireGlobalRole(token, "writer");
      if (body.agent !== undefined && !host.hasAgent(body.agent)) throw unknownAgent(body.agent);
      await store.append({
        continuity: body.id,
        type: "continuity.created",
        actor: token.actor,
        origin: "http",
        data: {
          labels: { kind: "chat", ...(body.agent !== undefined ? { agent: body.agent } : {}) },
        },
      });
    }
    await requireRole(token, body.id, "writer", rosters);
    const buffer = new UiStreamBuffer();
    const messageId = `msg-${ulid().toLowerCase()}`;
    buffer.push(uiFrame({ type: "start", messageId }));
    await followTurn(host, body.id, { text, actor: token.actor, origin: "http" }, (turnPart) => {
      for (const chunk of uiChunks(turnPart)) buffer.push(uiFrame(chunk));
      if (turnPart.type === "end") {
        buffer.push(uiFrame("[DONE]"), true);
        if (active.get(body.id) === buffer) active.delete(body.id);
      }
    });
    if (!buffer.done) active.set(body.id, buffer);
    return new Response(buffer.stream(), { headers: UI_STREAM_HEADERS });
  });

  app.get("/:id/stream", async (c) => {
    const id = paramOf(c, "id", continuityId);
    await requireRole(c.get("token"), id, "reader", rosters);
    const buffer = active.get(id);
    if (!buffer) return c.body(null, 204);
    return new Response(buffer.stream(), { headers: UI_STREAM_HEADERS });
  });

  return app;
}
