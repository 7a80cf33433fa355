import type { EventStore } from "../../log/index.js";
import { type ActorRoster, ActorRosters } from "../../runtime/index.js";
import { type EventData, SpoolError } from "../../spec/index.js";
import {
  type CommandContext,
  continuityNotFound,
  DB_OPTION,
  locateStore,
  parseCommandArgs,
  parseIdentifier,
  type StoreTarget,
  UsageError,
  withStore,
} from "../context.js";
import { renderTable } from "../format.js";
import { defaultActor } from "./continuities.js";

type Access = EventData<"actor.added">["access"];
type Kind = EventData<"actor.added">["kind"];
const ACCESS: readonly Access[] = ["owner", "write", "read"];
const KINDS: readonly Kind[] = ["person", "bot", "source", "agent"];

/** One row of `spool actors`: an actor and the access it holds now. */
export interface ActorRow {
  actor: string;
  /** `owner`, `write`, `read`, or `removed`. */
  access: Access | "removed";
  /** True for the actor that created the continuity. */
  creator: boolean;
}

/** The rows of `roster`: the creator first, then the actors added, then those removed. */
export function actorRows(roster: ActorRoster): ActorRow[] {
  const rows: ActorRow[] = [];
  const { creator } = roster;
  if (creator !== undefined && !roster.actors.has(creator) && !roster.removed.has(creator)) {
    rows.push({ actor: creator, access: "owner", creator: true });
  }
  for (const [actor, access] of roster.actors) {
    rows.push({ actor, access, creator: actor === creator });
  }
  for (const actor of roster.removed) {
    rows.push({ actor, access: "removed", creator: actor === creator });
  }
  return rows;
}

/** `spool actors <continuity> [--json]`: who may add turns to a continuity. */
export async function listActors(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "actors";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    json: { type: "boolean" },
  });
  const continuity = onlyContinuity(command, positionals);
  return withContinuity(ctx, values.db, continuity, async (store) => {
    const roster = await new ActorRosters(store).roster(continuity);
    const rows = actorRows(roster);
    if (values.json) {
      for (const row of rows) ctx.out(JSON.stringify(row));
      return 0;
    }
    if (rows.length > 0) {
      const table = rows.map((row) => [
        row.actor,
        row.access,
        row.creator ? "created the continuity" : "",
      ]);
      ctx.io.stdout.write(renderTable(["ACTOR", "ACCESS", ""], table, ctx.style));
    }
    ctx.out(
      roster.listed
        ? "Only the actors above with owner or write access add turns."
        : "No access list yet: any actor adds turns until one is added (spool actors add).",
    );
    return 0;
  });
}

/** `spool actors add <continuity> <actor> [--access A] [--kind K] [--name N]`. */
export async function addActor(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "actors add";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    access: { type: "string" },
    kind: { type: "string" },
    name: { type: "string" },
  });
  const [continuity, actor] = continuityAndActor(command, positionals);
  const access = oneOf(command, "--access", values.access ?? "write", ACCESS);
  const kind = oneOf(command, "--kind", values.kind ?? "person", KINDS);
  if (values.name !== undefined && values.name.length > 200) {
    throw new UsageError(command, "--name must be at most 200 characters");
  }
  return withContinuity(ctx, values.db, continuity, async (store) => {
    const by = await ownerOf(ctx, store, continuity);
    const stored = await store.append({
      continuity,
      type: "actor.added",
      actor: by,
      origin: "cli",
      data: {
        actor_id: actor,
        kind,
        access,
        ...(values.name !== undefined ? { name: values.name } : {}),
      },
    });
    ctx.out(String(stored.seq));
    return 0;
  });
}

/** `spool actors remove <continuity> <actor> [--reason TEXT]`. */
export async function removeActor(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "actors remove";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    reason: { type: "string" },
  });
  const [continuity, actor] = continuityAndActor(command, positionals);
  if (values.reason !== undefined && values.reason.length > 1000) {
    throw new UsageError(command, "--reason must be at most 1000 characters");
  }
  return withContinuity(ctx, values.db, continuity, async (store) => {
    const by = await ownerOf(ctx, store, continuity);
    const stored = await store.append({
      continuity,
      type: "actor.removed",
      actor: by,
      origin: "cli",
      data: { actor_id: actor, ...(values.reason !== undefined ? { reason: values.reason } : {}) },
    });
    ctx.out(String(stored.seq));
    return 0;
  });
}

/**
 * The actor running the command (`$USER`, else `local`), once it is known to own `continuity`:
 * its creator or an actor added with `owner` access, not removed since. A continuity that
 * records neither a creator nor an access list may be changed by anyone.
 */
async function ownerOf(ctx: CommandContext, store: EventStore, continuity: string) {
  const by = defaultActor(ctx);
  const roster = await new ActorRosters(store).roster(continuity);
  if (roster.creator === undefined && !roster.listed) return by;
  const access = roster.actors.get(by) ?? (by === roster.creator ? "owner" : undefined);
  if (access === "owner" && !roster.removed.has(by)) return by;
  throw new SpoolError(
    "actor.not-owner",
    `actor "${by}" does not own continuity "${continuity}", so it may not change who may write to it`,
    {
      hint: `Run it as an owner (USER=<owner>); \`spool actors ${continuity}\` lists them`,
      details: { continuity, actor: by },
    },
  );
}

function withContinuity(
  ctx: CommandContext,
  db: string | undefined,
  continuity: string,
  body: (store: EventStore) => Promise<number>,
): Promise<number> {
  const target: StoreTarget = locateStore(ctx, db);
  if (!target.exists) throw continuityNotFound(target, continuity);
  return withStore(ctx, target, async (store) => {
    if (!(await store.continuity(continuity))) throw continuityNotFound(target, continuity);
    return body(store);
  });
}

function onlyContinuity(command: string, positionals: string[]): string {
  const [continuity, ...rest] = positionals;
  if (continuity === undefined) throw new UsageError(command, "missing <continuity>");
  if (rest.length > 0) throw new UsageError(command, `unexpected ${JSON.stringify(rest[0])}`);
  return continuity;
}

function continuityAndActor(command: string, positionals: string[]): [string, string] {
  const [continuity, actor, ...rest] = positionals;
  if (continuity === undefined) throw new UsageError(command, "missing <continuity>");
  if (actor === undefined) throw new UsageError(command, "missing <actor>");
  if (rest.length > 0) throw new UsageError(command, `unexpected ${JSON.stringify(rest[0])}`);
  return [continuity, parseIdentifier(command, "<actor>", actor)];
}

function oneOf<T extends string>(
  command: string,
  option: string,
  value: string,
  allowed: readonly T[],
): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(command, `${option} must be one of ${allowed.join(", ")}, not "${value}"`);
}
