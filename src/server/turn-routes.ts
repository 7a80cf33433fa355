import { Hono } from "hono";
import { z } from "zod";
import { requireRole } from "./access-control.js";
import type { AcceptedTurn } from "./agent-host.js";
import { continuityId, jsonBody, paramOf } from "./request-input.js";
import type { ServerEnv, ServerServices } from "./server-env.js";
import { errorAnswer } from "./server-error.js";

/** The most characters one turn's text may have (the catalog's limit on `turn.added`). */
export const MAX_TURN_CHARS = 1_000_000;

const turnText = z
  .string()
  .max(MAX_TURN_CHARS)
  .refine((text) => text.trim() !== "", { message: "must not be blank" });
const turnBody = z.strictObject({ text: turnText });
const broadcastBody = z.strictObject({
  text: turnText,
  continuities: z.array(continuityId).min(1).max(100),
});

/** What a turn route answers for each turn it appended. */
function turnView(continuity: string, accepted: AcceptedTurn) {
  return {
    continuity,
    turn: { id: accepted.event.id, seq: accepted.event.seq },
    /** `here` when this server runs it, `elsewhere` when another process owns the continuity. */
    runs: accepted.run !== undefined ? "here" : "elsewhere",
  };
}

/**
 * The routes that add input: a turn (its actor is the token's, never the body's), the cancel of
 * the run going on, and one actor message broadcast to several continuities.
 */
export function turnRoutes(services: ServerServices): Hono<ServerEnv> {
  const { host, rosters } = services;
  const app = new Hono<ServerEnv>();

  app.post("/continuities/:id/turns", async (c) => {
    const id = paramOf(c, "id", continuityId);
    const token = c.get("token");
    await requireRole(token, id, "writer", rosters);
    const { text } = await jsonBody(c, turnBody);
    const accepted = await host.submit(id, { text, actor: token.actor, origin: "http" });
    accepted.run?.catch(() => undefined);
    return c.json(turnView(id, accepted), 202);
  });

  app.post("/continuities/:id/cancel", async (c) => {
    const id = paramOf(c, "id", continuityId);
    await requireRole(c.get("token"), id, "writer", rosters);
    const cancelled = await host.cancel(id);
    return c.json({ cancelled });
  });

  /**
   * Broadcast: every continuity is checked first (all must be writable by the token, else
   * nothing is appended: 404/403 as for one turn), then the message is appended to each in
   * order; a continuity that then refuses it (its policy rejects mid-run) is reported in
   * `failed`, the others keep theirs.
   */
  app.post("/broadcast", async (c) => {
    const token = c.get("token");
    const body = await jsonBody(c, broadcastBody);
    const targets = [...new Set(body.continuities)];
    for (const id of targets) await requireRole(token, id, "writer", rosters);
    const turns = [];
    const failed = [];
    for (const id of targets) {
      try {
        const accepted = await host.submit(id, {
          text: body.text,
          actor: token.actor,
          origin: "http",
        });
        accepted.run?.catch(() => undefined);
        turns.push(turnView(id, accepted));
      } catch (error) {
        failed.push({ continuity: id, ...errorAnswer(error).body });
      }
    }
    return c.json({ turns, failed }, turns.length > 0 ? 202 : 409);
  });

  return app;
}
