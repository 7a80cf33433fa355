import { StoreError } from "../spec/index.js";

/**
 * A lease on a continuity: who may run it, until when, and the fencing token that every append
 * of the holder carries. Times are milliseconds since the epoch, on the store's lease clock.
 */
export interface LeaseInfo {
  continuity: string;
  /** Who holds it (`undefined` once released). */
  holder: string | undefined;
  /** The fencing token of the latest grant: tokens strictly increase per continuity. */
  token: number;
  /** When it lapses unless renewed. */
  expiresAt: number;
}

/** The lease is the caller's: it appends with `token` until it renews, releases or loses it. */
export interface LeaseGranted {
  status: "granted";
  continuity: string;
  holder: string;
  token: number;
  expiresAt: number;
}

/** Someone else holds a live lease: wait for it to lapse, queue work for the holder, or follow. */
export interface LeaseHeld {
  status: "held";
  continuity: string;
  holder: string;
  token: number;
  expiresAt: number;
}

/**
 * The caller's token is no longer current: another holder was granted the lease after it lapsed
 * (or it was released). `holder` is who holds it now, when someone does.
 */
export interface LeaseLost {
  status: "lost";
  continuity: string;
  holder: string | undefined;
  token: number;
  expiresAt: number;
}

/** What `acquireLease` answers. */
export type LeaseAcquisition = LeaseGranted | LeaseHeld;
/** What `renewLease` answers. */
export type LeaseRenewal = LeaseGranted | LeaseLost;

/** A token an append must match: the store refuses the append unless it is the current one. */
export interface LeaseFence {
  continuity: string;
  token: number;
}

/** A lease row as both adapters store it (`holder` null once released). */
export interface LeaseRow {
  token: number;
  holder: string | null;
  expiresAt: number;
}

/**
 * The acquisition rule, shared by the adapters (each runs it inside a transaction that holds the
 * lease row): a free, released or lapsed lease is granted with the next token; a live one held
 * by anyone (the same holder included: a second grant would give two runners one name) is not.
 * `write` is the row to store, absent when nothing changes.
 */
export function decideAcquire(
  continuity: string,
  row: LeaseRow | undefined,
  holder: string,
  ttlMs: number,
  now: number,
): { result: LeaseAcquisition; write?: LeaseRow } {
  if (row && row.holder !== null && row.expiresAt > now) {
    return {
      result: {
        status: "held",
        continuity,
        holder: row.holder,
        token: row.token,
        expiresAt: row.expiresAt,
      },
    };
  }
  const granted: LeaseRow = { token: (row?.token ?? 0) + 1, holder, expiresAt: now + ttlMs };
  return {
    result: { status: "granted", continuity, holder, token: granted.token, expiresAt: now + ttlMs },
    write: granted,
  };
}

/**
 * The renewal rule: the current, unreleased token is extended (even past its expiry, as long as
 * nobody was granted the lease since); any other token is lost.
 */
export function decideRenew(
  continuity: string,
  row: LeaseRow | undefined,
  token: number,
  ttlMs: number,
  now: number,
): { result: LeaseRenewal; write?: LeaseRow } {
  if (!row || row.token !== token || row.holder === null) {
    return {
      result: {
        status: "lost",
        continuity,
        holder: row?.holder ?? undefined,
        token: row?.token ?? 0,
        expiresAt: row?.expiresAt ?? 0,
      },
    };
  }
  const renewed: LeaseRow = { token, holder: row.holder, expiresAt: now + ttlMs };
  return {
    result: { status: "granted", continuity, holder: row.holder, token, expiresAt: now + ttlMs },
    write: renewed,
  };
}

/**
 * The release rule: the current, unreleased token gives the lease up (it keeps its token, so
 * the next grant's is higher); any other token releases nothing. True when released.
 */
export function decideRelease(
  row: LeaseRow | undefined,
  token: number,
): { result: boolean; write?: LeaseRow } {
  const current = row !== undefined && row.token === token && row.holder !== null;
  return current
    ? { result: true, write: { token, holder: null, expiresAt: 0 } }
    : { result: false };
}

/** The error of an append (or renewal) whose token is not the current one. */
export function leaseLostError(continuity: string, token: number, current?: LeaseRow): StoreError {
  const now =
    current === undefined
      ? "nobody holds it"
      : current.holder === null
        ? `it was released (token ${current.token})`
        : `${current.holder} holds it with token ${current.token}`;
  return new StoreError(
    "store.lease-lost",
    `the lease on continuity ${continuity} with token ${token} is no longer current: ${now}`,
    {
      hint: "Another process took the continuity over after this one's lease lapsed; stop running it here and follow it, or acquire the lease again once it is free",
    },
  );
}

/** Checks a lease request's arguments; a bad one is a `store.bad-lease` error, never a crash. */
export function checkLeaseArgs(continuity: string, ttlMs: number, holder?: string): void {
  const bad = (message: string, hint: string) =>
    new StoreError("store.bad-lease", message, { hint });
  if (typeof continuity !== "string" || continuity === "")
    throw bad("a lease needs a continuity id", "Pass the id of the continuity to run");
  if (holder !== undefined && (typeof holder !== "string" || holder === ""))
    throw bad("a lease needs a holder name", "Pass who runs it, e.g. `pid 1234 on host`");
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1)
    throw bad(
      `a lease's time to live must be a positive whole number of milliseconds, not ${ttlMs}`,
      "Use e.g. 15000 (15 s); renew it at a third of that",
    );
}
