import { createHash, randomBytes } from "node:crypto";
import { ulid } from "ulid";
import type { EventStore } from "../log/index.js";
import { type EventData, SpoolError, type SpoolEvent } from "../spec/index.js";

/** The reserved continuity that holds the service's token records. */
export const ACCESS_CONTINUITY = "spool:access";

/** What a token may do, strongest first: owner > writer > reader. */
export type Role = EventData<"access-token.created">["role"];

/** The rank of each role: a role covers every role of a lower rank. */
export const ROLE_RANK: Record<Role, number> = { reader: 1, writer: 2, owner: 3 };

/** A token as the service knows it: never its secret, only what it grants. */
export interface AccessToken {
  id: string;
  actor: string;
  role: Role;
  /** The one continuity it reaches; absent: every continuity. */
  scope?: string;
  label?: string;
  createdAt: string;
  /** Who made it (the actor of `access-token.created`). */
  createdBy: string;
  revokedAt?: string;
}

/** A token just made: its record and its secret, which is shown this once and never again. */
export interface CreatedToken {
  token: AccessToken;
  secret: string;
}

/** What `AccessTokens.create` needs. */
export interface NewToken {
  actor: string;
  role: Role;
  scope?: string;
  label?: string;
  /** Who makes it (logged as the event's actor). */
  by: string;
  origin?: string;
}

/** The sha256 of a secret, lowercase hex: what the log stores and requests are matched by. */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/**
 * The service's bearer tokens, folded from the log (`spool:access`). The log holds each token's
 * sha256, never its secret; a secret is 32 random bytes (`spool_…`, base64url).
 *
 * Guarantees: `authenticate` reads the records appended since its last read before it answers,
 * so a token revoked by any process sharing the store is refused from the next request on;
 * `onRevoked` listeners hear of a revocation this process folds (`watch` folds them live, so
 * open streams end at once). Reading costs the records since the previous read, not all of them.
 */
export class AccessTokens {
  readonly #store: EventStore;
  readonly #byHash = new Map<string, AccessToken>();
  readonly #byId = new Map<string, AccessToken>();
  readonly #listeners = new Map<string, Set<() => void>>();
  #after = 0;
  #reading: Promise<void> = Promise.resolve();

  constructor(store: EventStore) {
    this.#store = store;
  }

  /** Makes a token (appends `access-token.created`) and returns its secret, once. */
  async create(input: NewToken): Promise<CreatedToken> {
    const secret = `spool_${randomBytes(32).toString("base64url")}`;
    const id = `tok_${ulid().toLowerCase()}`;
    const stored = await this.#store.append({
      continuity: ACCESS_CONTINUITY,
      type: "access-token.created",
      actor: input.by,
      origin: input.origin ?? "cli",
      data: {
        token_id: id,
        token_hash: hashSecret(secret),
        actor_id: input.actor,
        role: input.role,
        ...(input.scope !== undefined ? { scope: input.scope } : {}),
        ...(input.label !== undefined ? { label: input.label } : {}),
      },
    });
    await this.current();
    const token = this.#byId.get(id) ?? tokenOf(stored);
    return { token, secret };
  }

  /** Every token, oldest first, revoked ones included (with `revokedAt`). */
  async list(): Promise<AccessToken[]> {
    await this.current();
    return [...this.#byId.values()];
  }

  /**
   * Revokes the token `id` (appends `access-token.revoked`); resolves `false`, appending nothing,
   * when there is no such token or it was revoked already.
   */
  async revoke(id: string, by: string, reason?: string, origin = "cli"): Promise<boolean> {
    await this.current();
    const token = this.#byId.get(id);
    if (!token || token.revokedAt !== undefined) return false;
    await this.#store.append({
      continuity: ACCESS_CONTINUITY,
      type: "access-token.revoked",
      actor: by,
      origin,
      data: { token_id: id, ...(reason !== undefined ? { reason } : {}) },
    });
    await this.current();
    return true;
  }

  /** The live token whose secret is `secret`, or `undefined` (unknown or revoked). */
  async authenticate(secret: string): Promise<AccessToken | undefined> {
    await this.current();
    const token = this.#byHash.get(hashSecret(secret));
    return token && token.revokedAt === undefined ? token : undefined;
  }

  /** True while the token `id` exists and is not revoked (as last folded). */
  isLive(id: string): boolean {
    const token = this.#byId.get(id);
    return token !== undefined && token.revokedAt === undefined;
  }

  /** Calls `listener` once when the token `id` is revoked; returns how to stop listening. */
  onRevoked(id: string, listener: () => void): () => void {
    let set = this.#listeners.get(id);
    if (!set) {
      set = new Set();
      this.#listeners.set(id, set);
    }
    set.add(listener);
    return () => set.delete(listener);
  }

  /** Folds the records appended since the last read (one read at a time). */
  current(): Promise<void> {
    this.#reading = this.#reading.then(() => this.#catchUp());
    return this.#reading;
  }

  /**
   * Follows the token records live until `signal` aborts, so revocations by other processes end
   * open streams as they land. Never throws: a store failure ends the watch.
   */
  async watch(signal: AbortSignal): Promise<void> {
    try {
      for await (const message of this.#store.subscribe({
        continuity: ACCESS_CONTINUITY,
        types: ["access-token.revoked"],
        after: this.#after,
        signal,
      })) {
        if (message.type === "event") await this.current();
      }
    } catch (error) {
      if (!signal.aborted && !(error instanceof SpoolError)) throw error;
    }
  }

  async #catchUp(): Promise<void> {
    const head = (await this.#store.continuity(ACCESS_CONTINUITY))?.lastSeq ?? 0;
    if (head <= this.#after) return;
    for await (const event of this.#store.read({
      continuity: ACCESS_CONTINUITY,
      after: this.#after,
      until: head,
    })) {
      this.#apply(event);
    }
    this.#after = head;
  }

  #apply(event: SpoolEvent): void {
    if (event.type === "access-token.created") {
      const token = tokenOf(event);
      const hash = (event.data as EventData<"access-token.created">).token_hash;
      this.#byId.set(token.id, token);
      this.#byHash.set(hash, token);
    } else if (event.type === "access-token.revoked") {
      const id = (event.data as EventData<"access-token.revoked">).token_id;
      const token = this.#byId.get(id);
      if (!token || token.revokedAt !== undefined) return;
      token.revokedAt = event.ts;
      const listeners = this.#listeners.get(id);
      this.#listeners.delete(id);
      for (const listener of listeners ?? []) listener();
    }
  }
}

function tokenOf(event: SpoolEvent): AccessToken {
  const data = event.data as EventData<"access-token.created">;
  return {
    id: data.token_id,
    actor: data.actor_id,
    role: data.role,
    ...(data.scope !== undefined ? { scope: data.scope } : {}),
    ...(data.label !== undefined ? { label: data.label } : {}),
    createdAt: event.ts,
    createdBy: event.actor ?? "?",
  };
}
