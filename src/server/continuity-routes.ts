import { Hono } from "hono";
import { ulid } from "ulid";
import { z } from "zod";
import type { EventStore } from "../log/index.js";
import type { ActorRoster } from "../runtime/index.js";
import { type EventData, identifier } from "../spec/index.js";
import { requireGlobalRole, requireRole, roleIn } from "./access-control.js";
import { ACCESS_CONTINUITY } from "./access-tokens.js";
import { continuityId, jsonBody, paramOf } from "./request-input.js";
import type { ServerEnv, ServerServices } from "./server-env.js";
import { continuityNotFound, ServerError } from "./server-error.js";

const createBody = z.strictObject({
  id: continuityId.optional(),
  title: z.string().min(1).max(200).optional(),
  /** The agent manifest its turns run (default: the workspace's `assistant`). */
  agent: identifier.optional(),
});
const policyBody = z.strictObject({ policy: z.enum(["queue", "interrupt", "reject"]) });
const actorBody = z.strictObject({
  actor: identifier,
  access: z.enum(["owner", "write", "read"]).default("write"),
  kind: z.enum(["person", "bot", "source", "agent"]).default("person"),
  name: z.string().max(200).optional(),
});

/** One continuity as the API lists it. */
export interface ContinuityView {
  id: string;
  title: string | null;
  agent: string | null;
  events: number;
  created_at: string;
  last_at: string;
  last_seq: number;
  /** The role the asking token holds in it. */
  role: string;
}

/**
 * The continuity routes: list (those the token may read), create (a global writer), get, the
 * turn policy (owners set it) and the access list (owners change it).
 */
export function continuityRoutes(services: ServerServices): Hono<ServerEnv> {
  const { store, host, rosters } = services;
  const app = new Hono<ServerEnv>();

  app.get("/", async (c) => {
    const token = c.get("token");
    const rows: ContinuityView[] = [];
    for (const head of await store.continuities()) {
      if (head.continuity === ACCESS_CONTINUITY) continue;
      const role = await roleIn(token, head.continuity, rosters);
      if (role === undefined) continue;
      rows.push({ ...(await describe(store, head.continuity)), role });
    }
    return c.json({ continuities: rows });
  });

  app.post("/", async (c) => {
    const token = c.get("token");
    requireGlobalRole(token, "writer");
    const body = await jsonBody(c, createBody);
    if (body.agent !== undefined && !host.hasAgent(body.agent)) throw unknownAgent(body.agent);
    const id = body.id ?? ulid();
    if (await store.continuity(id)) {
      throw new ServerError(409, "continuity.exists", `continuity "${id}" already exists`, {
        hint: "Choose another id, or leave id out for a new one",
      });
    }
    await store.append({
      continuity: id,
      type: "continuity.created",
      actor: token.actor,
      origin: "http",
      data: {
        ...(body.title !== undefined ? { title: body.title } : {}),
        labels: { kind: "http", ...(body.agent !== undefined ? { agent: body.agent } : {}) },
      },
    });
    const role = await roleIn(token, id, rosters);
    return c.json({ continuity: { ...(await describe(store, id)), role } }, 201);
  });

  app.get("/:id", async (c) => {
    const id = paramOf(c, "id", continuityId);
    const role = await requireRole(c.get("token"), id, "reader", rosters);
    const roster = await rosters.roster(id);
    return c.json({
      continuity: { ...(await describe(store, id)), role },
      policy: await host.policy(id),
      running: await host.busy(id),
      actors: actorRows(roster),
    });
  });

  app.put("/:id/policy", async (c) => {
    const id = paramOf(c, "id", continuityId);
    const token = c.get("token");
    await requireRole(token, id, "owner", rosters);
    const { policy } = await jsonBody(c, policyBody);
    const stored = await store.append({
      continuity: id,
      type: "policy.set",
      actor: token.actor,
      origin: "http",
      data: { policy },
    });
    return c.json({ policy, seq: stored.seq });
  });

  app.post("/:id/actors", async (c) => {
    const id = paramOf(c, "id", continuityId);
    const token = c.get("token");
    await requireRole(token, id, "owner", rosters);
    const body = await jsonBody(c, actorBody);
    const stored = await store.append({
      continuity: id,
      type: "actor.added",
      actor: token.actor,
      origin: "http",
      data: {
        actor_id: body.actor,
        kind: body.kind,
        access: body.access,
        ...(body.name !== undefined ? { name: body.name } : {}),
      },
    });
    return c.json({ actor: body.actor, access: body.access, seq: stored.seq }, 201);
  });

  app.delete("/:id/actors/:actor", async (c) => {
    const id = paramOf(c, "id", continuityId);
    const actor = paramOf(c, "actor", identifier);
    const token = c.get("token");
    await requireRole(token, id, "owner", rosters);
    const stored = await store.append({
      continuity: id,
      type: "actor.removed",
      actor: token.actor,
      origin: "http",
      data: { actor_id: actor },
    });
    return c.json({ actor, removed: true, seq: stored.seq });
  });

  return app;
}

/** The error for an agent manifest the workspace does not have. */
export function unknownAgent(name: string): ServerError {
  return new ServerError(404, "agent.not-found", `there is no agent manifest "${name}"`, {
    hint: "GET /v1/models lists the agents; add one as .ai/agents/<name>.yaml",
  });
}

/** A continuity's head, title and agent (404 when it has no events). */
export async function describe(
  store: EventStore,
  id: string,
): Promise<Omit<ContinuityView, "role">> {
  const head = await store.continuity(id);
  if (!head) throw continuityNotFound(id);
  let title: string | null = null;
  let agent: string | null = null;
  for await (const event of store.read({
    continuity: id,
    types: ["continuity.created"],
    limit: 1,
  })) {
    const data = event.data as EventData<"continuity.created">;
    title = data.title ?? null;
    agent = data.labels?.agent ?? null;
  }
  return {
    id,
    title,
    agent,
    events: head.events,
    created_at: head.createdAt,
    last_at: head.lastAt,
    last_seq: head.lastSeq,
  };
}

function actorRows(roster: ActorRoster) {
  const rows: { actor: string; access: string; creator: boolean }[] = [];
  if (roster.creator !== undefined && !roster.actors.has(roster.creator)) {
    rows.push({
      actor: roster.creator,
      access: roster.removed.has(roster.creator) ? "removed" : "owner",
      creator: true,
    });
  }
  for (const [actor, access] of roster.actors) {
    rows.push({ actor, access, creator: actor === roster.creator });
  }
  for (const actor of roster.removed) {
    if (actor !== roster.creator) rows.push({ actor, access: "removed", creator: false });
  }
  return { listed: roster.listed, rows };
}
