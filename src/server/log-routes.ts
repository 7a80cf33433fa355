import { Hono } from "hono";
import { z } from "zod";
import { appendPin, contextReport, pinsInForce, removePin, ThreadRowsFold } from "../app/index.js";
import { isIdentifier } from "../spec/index.js";
import { requireRole, roleIn } from "./access-control.js";
import { liveEventsResponse } from "./live-events.js";
import { continuityId, jsonBody, paramOf, queryOf, seqParam } from "./request-input.js";
import type { ServerEnv, ServerServices } from "./server-env.js";
import { ServerError } from "./server-error.js";

/** The most events one page holds. */
export const MAX_PAGE = 1000;

const typesParam = z
  .string()
  .max(4000)
  .transform((value) => value.split(",").filter((type) => type !== ""))
  .pipe(
    z
      .array(z.string().regex(/^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+$/, "must be an event type"))
      .max(100),
  );
const pageQuery = z.strictObject({
  after: seqParam.optional(),
  limit: seqParam.pipe(z.number().int().min(1).max(MAX_PAGE)).optional(),
  types: typesParam.optional(),
});
const liveQuery = z.strictObject({
  after: seqParam.optional(),
  types: typesParam.optional(),
  access_token: z.string().max(200).optional(),
});
const contextQuery = z.strictObject({ step: z.string().min(1).max(300).optional() });
const pinBody = z.strictObject({
  text: z.string().min(1).max(4000),
  kind: z.enum(["rule", "fact"]).default("fact"),
});

/**
 * The routes that read a continuity's log (events by page and live, threads, a step's context)
 * and its pins (writers add and remove them).
 */
export function logRoutes(services: ServerServices): Hono<ServerEnv> {
  const { store, rosters, tokens } = services;
  const app = new Hono<ServerEnv>();

  app.get("/:id/events", async (c) => {
    const id = paramOf(c, "id", continuityId);
    await requireRole(c.get("token"), id, "reader", rosters);
    const query = queryOf(c, pageQuery);
    const limit = query.limit ?? 100;
    const events = [];
    for await (const event of store.read({
      continuity: id,
      after: query.after ?? 0,
      limit,
      ...(query.types ? { types: query.types } : {}),
    })) {
      events.push(event);
    }
    const last = events.at(-1)?.seq;
    return c.json({
      events,
      next: events.length === limit && last !== undefined ? { after: last } : null,
    });
  });

  app.get("/:id/events/live", async (c) => {
    const id = paramOf(c, "id", continuityId);
    const token = c.get("token");
    await requireRole(token, id, "reader", rosters);
    const query = queryOf(c, liveQuery);
    const lastEventId = c.req.header("Last-Event-ID");
    let after = query.after ?? 0;
    if (lastEventId !== undefined && lastEventId !== "") {
      if (!/^\d{1,15}$/.test(lastEventId)) {
        throw new ServerError(400, "request.invalid", "Last-Event-ID must be an event's seq");
      }
      after = Number(lastEventId);
    }
    return liveEventsResponse(c, {
      store,
      hub: services.live,
      continuity: id,
      after,
      ...(query.types ? { types: query.types } : {}),
      heartbeatMs: services.heartbeatMs,
      stillAllowed: async () => {
        await tokens.current();
        return tokens.isLive(token.id) && (await roleIn(token, id, rosters)) !== undefined;
      },
      onRevoked: (end) => tokens.onRevoked(token.id, end),
    });
  });

  app.get("/:id/threads", async (c) => {
    const id = paramOf(c, "id", continuityId);
    await requireRole(c.get("token"), id, "reader", rosters);
    const fold = new ThreadRowsFold();
    for await (const event of store.read({ continuity: id })) fold.push(event);
    return c.json({ threads: fold.rows() });
  });

  app.get("/:id/context", async (c) => {
    const id = paramOf(c, "id", continuityId);
    await requireRole(c.get("token"), id, "reader", rosters);
    const { step } = queryOf(c, contextQuery);
    return c.json({ context: await contextReport(store, id, step) });
  });

  app.get("/:id/pins", async (c) => {
    const id = paramOf(c, "id", continuityId);
    await requireRole(c.get("token"), id, "reader", rosters);
    return c.json({ pins: await pinsInForce(store, id) });
  });

  app.post("/:id/pins", async (c) => {
    const id = paramOf(c, "id", continuityId);
    const token = c.get("token");
    await requireRole(token, id, "writer", rosters);
    const body = await jsonBody(c, pinBody);
    if (body.text.trim() === "") {
      throw new ServerError(
        400,
        "request.invalid",
        "the body is not valid: text: must not be blank",
      );
    }
    const pin = await appendPin(store, id, { ...body, actor: token.actor, origin: "http" });
    return c.json({ pin }, 201);
  });

  app.delete("/:id/pins/:pin", async (c) => {
    const id = paramOf(c, "id", continuityId);
    const token = c.get("token");
    await requireRole(token, id, "writer", rosters);
    const pin = c.req.param("pin");
    const removed = isIdentifier(pin)
      ? await removePin(store, id, { id: pin, actor: token.actor, origin: "http" })
      : { ok: false };
    if (!removed.ok) {
      throw new ServerError(404, "pin.not-found", `no pin "${pin.slice(0, 100)}" is in force`, {
        hint: `GET /api/continuities/${id}/pins lists them`,
      });
    }
    return c.json({ removed: pin });
  });

  return app;
}
