import { type Context, Hono } from "hono";
import { z } from "zod";
import type { SourceChanger, SourceChanges } from "../runtime/index.js";
import { readSourcesState } from "../sources/index.js";
import { identifier } from "../spec/index.js";
import { requireExisting, requireRole } from "./access-control.js";
import { continuityId, jsonBody, paramOf, queryOf, readOnlyQuery } from "./request-input.js";
import type { ServerEnv, ServerServices } from "./server-env.js";
import { ServerError } from "./server-error.js";

const entryBody = z.record(z.string(), z.unknown());
const pauseBody = z.strictObject({ reason: z.string().min(1).max(1_000).optional() });
const emptyBody = z.strictObject({});

/**
 * A continuity's sources: their states (readers), and (writers) adding one, pausing, resuming and
 * removing one. Changes go through the continuity's running agent (`AgentHost.session`) and the
 * runtime's `SourceChanges`, the path the model's source actions take: the change is logged
 * (`source.added|paused|resumed|removed`, `by: "http"`, the token's actor on the event) and the
 * source's runner starts or stops. An unknown or removed source is 404 `source.unknown`.
 */
export function sourceRoutes(services: ServerServices): Hono<ServerEnv> {
  const { store, rosters, host } = services;
  const app = new Hono<ServerEnv>();

  app.get("/:id/sources", async (c) => {
    const id = paramOf(c, "id", continuityId);
    await requireRole(c.get("token"), id, "reader", rosters);
    queryOf(c, readOnlyQuery);
    const state = await readSourcesState(store, id);
    return c.json({ sources: [...state.sources.values()] });
  });

  /** The writer's changer, after the role check; `changes` of the running agent. */
  const changing = async (c: Context<ServerEnv>, id: string) => {
    const token = c.get("token");
    await requireRole(token, id, "writer", rosters);
    await requireExisting(store, id);
    const who: SourceChanger = { by: "http", actor: token.actor, origin: "http" };
    return { who, changes: async () => changesOf(await host.session(id), id) };
  };

  /** 404 unless the log knows `source` in `continuity` (and it was not removed). */
  const requireSource = async (continuity: string, source: string) => {
    const state = (await readSourcesState(store, continuity)).sources.get(source);
    if (!state || state.status === "removed") throw unknownSource(continuity, source, state);
  };

  app.post("/:id/sources", async (c) => {
    const id = paramOf(c, "id", continuityId);
    const { who, changes } = await changing(c, id);
    const entry = await jsonBody(c, entryBody);
    return c.json({ source: await (await changes()).add(entry, who) }, 201);
  });

  app.post("/:id/sources/:source/pause", async (c) => {
    const id = paramOf(c, "id", continuityId);
    const { who, changes } = await changing(c, id);
    const source = paramOf(c, "source", identifier);
    const { reason } = await jsonBody(c, pauseBody);
    await requireSource(id, source);
    return c.json({ source: await (await changes()).pause(source, who, reason) });
  });

  app.post("/:id/sources/:source/resume", async (c) => {
    const id = paramOf(c, "id", continuityId);
    const { who, changes } = await changing(c, id);
    const source = paramOf(c, "source", identifier);
    await jsonBody(c, emptyBody);
    await requireSource(id, source);
    return c.json({ source: await (await changes()).resume(source, who) });
  });

  app.delete("/:id/sources/:source", async (c) => {
    const id = paramOf(c, "id", continuityId);
    const { who, changes } = await changing(c, id);
    const source = paramOf(c, "source", identifier);
    await requireSource(id, source);
    return c.json({ source: await (await changes()).remove(source, who) });
  });

  return app;
}

function changesOf(
  session: { runtime: { sources(continuity: string): { changes?: SourceChanges } } },
  continuity: string,
): SourceChanges {
  const changes = session.runtime.sources(continuity).changes;
  if (changes) return changes;
  throw new ServerError(
    409,
    "sources.unavailable",
    `the agent of continuity "${continuity}" runs no sources, so none can be added or changed`,
    {
      hint: "Declare sources: or source_actions: { enabled: true } in its agent manifest",
    },
  );
}

function unknownSource(continuity: string, source: string, state: unknown): ServerError {
  return new ServerError(
    404,
    "source.unknown",
    `continuity "${continuity}" has no source "${source}"${state ? " any more: it was removed" : ""}`,
    { hint: `GET /api/continuities/${continuity}/sources lists them` },
  );
}
