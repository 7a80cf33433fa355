import type pg from "pg";
import {
  decideAcquire,
  decideRelease,
  decideRenew,
  type LeaseAcquisition,
  type LeaseFence,
  type LeaseRenewal,
  type LeaseRow,
  leaseLostError,
} from "../lease.js";
import { inTransaction } from "./postgres-pool.js";
import type { PostgresTables } from "./postgres-schema.js";

interface LeaseRecord {
  continuity: string;
  token: string;
  holder: string | null;
  expires_at: string;
}

/**
 * The continuity leases of a PostgreSQL log. Each request runs in its own transaction holding the
 * lease row (`FOR UPDATE`), so concurrent requests from any number of processes and connections
 * are decided one after the other; an append fenced by a lease takes the same row `FOR SHARE` in
 * its own transaction (`checkFences`), so a new grant waits for an append in flight to commit,
 * and an append waits for a grant in flight and then sees its new token.
 */
export class PostgresLeases {
  readonly #pool: pg.Pool;
  readonly #t: PostgresTables;
  readonly #begin: string;

  /** `begin` opens this store's transactions (with its durability settings). */
  constructor(pool: pg.Pool, tables: PostgresTables, begin: string) {
    this.#pool = pool;
    this.#t = tables;
    this.#begin = begin;
  }

  acquire(
    continuity: string,
    holder: string,
    ttlMs: number,
    now: number,
  ): Promise<LeaseAcquisition> {
    return this.#decide(continuity, (row) => decideAcquire(continuity, row, holder, ttlMs, now));
  }

  renew(continuity: string, token: number, ttlMs: number, now: number): Promise<LeaseRenewal> {
    return this.#decide(continuity, (row) => decideRenew(continuity, row, token, ttlMs, now));
  }

  release(continuity: string, token: number): Promise<boolean> {
    return this.#decide(continuity, (row) => decideRelease(row, token));
  }

  async read(continuity: string): Promise<LeaseRow | undefined> {
    const result = await this.#pool.query<LeaseRecord>({
      name: "spool_lease",
      text: `SELECT * FROM ${this.#t.leases} WHERE continuity = $1`,
      values: [continuity],
    });
    return result.rows[0] ? toRow(result.rows[0]) : undefined;
  }

  /**
   * Inside a write's transaction: refuses it (`store.lease-lost`) unless every fence's token is
   * its continuity's current, unreleased lease token. Holds the rows `FOR SHARE` until the write
   * commits.
   */
  async checkFences(client: pg.ClientBase, fences: readonly LeaseFence[]): Promise<void> {
    const result = await client.query<LeaseRecord>({
      name: "spool_lease_fences",
      text: `SELECT * FROM ${this.#t.leases} WHERE continuity = ANY($1::text[]) FOR SHARE`,
      values: [fences.map((fence) => fence.continuity)],
    });
    const rows = new Map(result.rows.map((row) => [row.continuity, toRow(row)]));
    for (const fence of fences) {
      const row = rows.get(fence.continuity);
      if (!row || row.token !== fence.token || row.holder === null)
        throw leaseLostError(fence.continuity, fence.token, row);
    }
  }

  /** Locks the lease row (creating a free one first), decides, and stores the decision. */
  #decide<T>(
    continuity: string,
    decide: (row: LeaseRow | undefined) => { result: T; write?: LeaseRow },
  ): Promise<T> {
    const t = this.#t;
    return inTransaction(
      this.#pool,
      async (client) => {
        await client.query({
          name: "spool_lease_ensure",
          text: `INSERT INTO ${t.leases} (continuity, token, holder, expires_at) VALUES ($1, 0, NULL, 0)
                 ON CONFLICT (continuity) DO NOTHING`,
          values: [continuity],
        });
        const locked = await client.query<LeaseRecord>({
          name: "spool_lease_lock",
          text: `SELECT * FROM ${t.leases} WHERE continuity = $1 FOR UPDATE`,
          values: [continuity],
        });
        const found = locked.rows[0] ? toRow(locked.rows[0]) : undefined;
        // A free row that was never granted reads as no lease at all.
        const decision = decide(found && found.token === 0 ? undefined : found);
        const row = decision.write;
        if (row) {
          await client.query({
            name: "spool_lease_put",
            text: `UPDATE ${t.leases} SET token = $2, holder = $3, expires_at = $4 WHERE continuity = $1`,
            values: [continuity, row.token, row.holder, row.expiresAt],
          });
        }
        return decision.result;
      },
      this.#begin,
    );
  }
}

function toRow(record: LeaseRecord): LeaseRow {
  return {
    token: Number(record.token),
    holder: record.holder,
    expiresAt: Number(record.expires_at),
  };
}
