import type { EventStore } from "../log/index.js";
import type { ActorRosters } from "../runtime/index.js";
import { type AccessToken, ROLE_RANK, type Role } from "./access-tokens.js";
import { continuityNotFound, ServerError } from "./server-error.js";

/**
 * The role `token` holds in `continuity`, or `undefined` when it holds none: the token's role
 * when the token reaches the continuity (its scope is that continuity, or every one), capped by
 * the continuity's own access list when it keeps one (its creator and `owner` actors: owner;
 * `write`: writer; `read`: reader; anyone else, or a removed actor: nothing). A continuity that
 * keeps no list is open to every token that reaches it, as it is to every local actor.
 */
export async function roleIn(
  token: AccessToken,
  continuity: string,
  rosters: ActorRosters,
): Promise<Role | undefined> {
  if (token.scope !== undefined && token.scope !== continuity) return undefined;
  const roster = await rosters.roster(continuity);
  if (roster.removed.has(token.actor)) return undefined;
  if (!roster.listed) return token.role;
  const listed = roster.actors.get(token.actor);
  const granted: Role | undefined =
    listed === "owner" || (listed === undefined && token.actor === roster.creator)
      ? "owner"
      : listed === "write"
        ? "writer"
        : listed === "read"
          ? "reader"
          : undefined;
  if (granted === undefined) return undefined;
  return ROLE_RANK[granted] < ROLE_RANK[token.role] ? granted : token.role;
}

/**
 * Throws unless `token` holds at least `needed` in `continuity`: 404 when it may not even read
 * it (a continuity it may not see looks like one that does not exist), 403 when it may read but
 * not do this.
 */
export async function requireRole(
  token: AccessToken,
  continuity: string,
  needed: Role,
  rosters: ActorRosters,
): Promise<Role> {
  const role = await roleIn(token, continuity, rosters);
  if (role === undefined) throw continuityNotFound(continuity);
  if (ROLE_RANK[role] < ROLE_RANK[needed]) {
    throw new ServerError(
      403,
      "auth.forbidden",
      `this token (actor "${token.actor}") is ${article(role)} ${role} of continuity "${continuity}"; this needs ${article(needed)} ${needed}`,
      { hint: "Ask an owner for a token with that role (spool tokens create)" },
    );
  }
  return role;
}

/**
 * Throws 404 `continuity.not-found` unless `continuity` has events: the routes that take a
 * continuity up (its sources, watch and frames) never bring one into being.
 */
export async function requireExisting(store: EventStore, continuity: string): Promise<void> {
  if (!(await store.continuity(continuity))) throw continuityNotFound(continuity);
}

/** Throws 403 unless the token's own role, over every continuity, is at least `needed`. */
export function requireGlobalRole(token: AccessToken, needed: Role): void {
  if (token.scope === undefined && ROLE_RANK[token.role] >= ROLE_RANK[needed]) return;
  throw new ServerError(
    403,
    "auth.forbidden",
    `this needs a token with ${article(needed)} ${needed} role over every continuity; this one (actor "${token.actor}") is ${article(token.role)} ${token.role}${token.scope !== undefined ? ` of "${token.scope}" only` : ""}`,
    { hint: "Create one with spool tokens create --role writer (no --continuity)" },
  );
}

function article(role: Role): string {
  return role === "owner" ? "an" : "a";
}
