import { Hono } from "hono";
import { z } from "zod";
import {
  changedWatchSettings,
  emptyWatchState,
  foldWatchEvent,
  parseWatchSettings,
  type WatchSettings,
} from "../frames/index.js";
import type { EventStore } from "../log/index.js";
import { ConfigError } from "../spec/index.js";
import { requireExisting, requireRole } from "./access-control.js";
import { continuityId, jsonBody, paramOf, queryOf, readOnlyQuery } from "./request-input.js";
import type { ServerEnv, ServerServices } from "./server-env.js";
import { ServerError } from "./server-error.js";

/** A settings change: setting names to values, each checked by `parseWatchSettings`. */
const settingsBody = z.record(z.string().max(64), z.unknown());

/**
 * A continuity's stream-watch settings: `GET …/watch/settings` (readers) answers the settings in
 * force (`watching`: whether a watch runs here now); `PUT` (writers) changes the settings named in
 * the body. A change goes through the continuity's running watch when there is one
 * (`StreamWatch.changeSettings`: its next decisions use the new settings), and is otherwise
 * logged for the next watch to fold; either way it is one `watch.settings-changed` event
 * (`by: "http"`, the token's actor on it), and nothing is logged when nothing changed. A bad
 * value is 400 `request.invalid` whose message names the setting and its range
 * (`changeThreshold must be a number from 0.005 to 1 (default 0.01)`); `details.issues` lists
 * each.
 */
export function watchRoutes(services: ServerServices): Hono<ServerEnv> {
  const { store, rosters, host } = services;
  const app = new Hono<ServerEnv>();

  app.get("/:id/watch/settings", async (c) => {
    const id = paramOf(c, "id", continuityId);
    await requireRole(c.get("token"), id, "reader", rosters);
    queryOf(c, readOnlyQuery);
    const running = await (await host.runningSession(id))?.watch;
    const settings = running?.watch.state.settings ?? (await loggedSettings(store, id));
    return c.json({ settings, watching: running !== undefined });
  });

  app.put("/:id/watch/settings", async (c) => {
    const id = paramOf(c, "id", continuityId);
    const token = c.get("token");
    await requireRole(token, id, "writer", rosters);
    await requireExisting(store, id);
    const changes = await jsonBody(c, settingsBody);
    const who = { actor: token.actor, origin: "http" };
    const running = await (await host.session(id)).watch;
    if (running) {
      const settings = await settingsChange(() =>
        running.watch.changeSettings(changes, "http", who),
      );
      return c.json({ settings, watching: true });
    }
    const before = await loggedSettings(store, id);
    const next = await settingsChange(async () => parseWatchSettings(changes, before));
    const changed = changedWatchSettings(before, next);
    if (changed.length > 0) {
      await store.append({
        continuity: id,
        type: "watch.settings-changed",
        ...who,
        data: { settings: { ...next }, changed, by: "http" },
      });
    }
    return c.json({ settings: next, watching: false });
  });

  return app;
}

/** The settings the continuity's log holds (the defaults before any `watch.settings-changed`). */
async function loggedSettings(store: EventStore, continuity: string): Promise<WatchSettings> {
  let state = emptyWatchState();
  for await (const event of store.read({ continuity, types: ["watch.settings-changed"] })) {
    state = foldWatchEvent(state, event);
  }
  return state.settings;
}

/** Runs a settings change; a `config.watch` refusal becomes 400 naming each bad setting. */
async function settingsChange(change: () => Promise<WatchSettings>): Promise<WatchSettings> {
  try {
    return await change();
  } catch (error) {
    if (!(error instanceof ConfigError) || error.code !== "config.watch") throw error;
    const issues = Array.isArray(error.details.issues)
      ? (error.details.issues as { path: string; message: string }[])
      : [];
    const named = issues.map((issue) => ({
      setting: issue.path.replace(/^watch\.?/, ""),
      message: issue.message,
    }));
    throw new ServerError(
      400,
      "request.invalid",
      named
        .map((issue) =>
          issue.message.startsWith(issue.setting)
            ? issue.message
            : `${issue.setting} ${issue.message}`,
        )
        .join("; ") || error.message,
      { details: { issues: named } },
    );
  }
}
