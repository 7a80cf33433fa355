import pg from "pg";

/** How long a connection attempt may take before it fails as `store.unreachable`. */
export const CONNECT_TIMEOUT_MS = 5000;

/** Connection settings shared by the pool and the LISTEN connection. */
export function connectionConfig(url: string, applicationName: string): pg.ClientConfig {
  return {
    connectionString: url,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // TCP keepalive notices a server or network that vanished without closing the socket.
    keepAlive: true,
    application_name: applicationName,
  };
}

/**
 * A pool of `size` connections. Errors of idle connections (the server restarted, the network
 * dropped) are absorbed here: the pool discards that connection and the next query opens a new
 * one, so they never crash the process.
 */
export function createPool(url: string, size: number): pg.Pool {
  const pool = new pg.Pool({
    ...connectionConfig(url, "spool"),
    max: size,
    idleTimeoutMillis: 30_000,
    // Idle pooled connections alone do not keep a finished command's process running.
    allowExitOnIdle: true,
  });
  pool.on("error", () => {
    // The pool has already removed the broken client; the next caller gets a fresh one.
  });
  return pool;
}

/**
 * A COMMIT whose answer never arrived (the connection dropped while it was sent): the transaction
 * may or may not have been committed, so repeating it blindly could write twice.
 */
export class CommitInDoubtError extends Error {
  constructor(cause: unknown) {
    super("the connection dropped during COMMIT; the transaction may or may not have been stored", {
      cause,
    });
    this.name = "CommitInDoubtError";
  }
}

/**
 * Runs `work` on one pooled connection. While it is checked out the connection has an `error`
 * listener (pg emits `error` on a dead socket even mid-query, and an unheard `error` event ends
 * the process); a connection that failed, or that `work` marks as broken, is destroyed instead of
 * returned to the pool.
 */
export async function withClient<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient, markBroken: (error: Error) => void) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const markBroken = (error: Error) => {
    broken ??= error;
  };
  client.on("error", markBroken);
  try {
    return await work(client, markBroken);
  } finally {
    client.off("error", markBroken);
    client.release(broken);
  }
}

/** The results of the statements of `begin`, in order (pg answers a multi-statement text so). */
export type OpeningResults = readonly pg.QueryResult[];

/**
 * Runs `work` inside a transaction on one connection; any error rolls back. `begin` is the text
 * that opens it: `BEGIN`, optionally followed by `SET LOCAL` statements and the transaction's first
 * statement, sent in one round trip (transaction-scoped settings also behave behind a
 * transaction-pooling proxy); `work` gets their results. A connection
 * whose rollback fails is destroyed, so a half-finished transaction never returns to the pool. A
 * COMMIT that got no answer raises `CommitInDoubtError`.
 */
export function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient, opened: OpeningResults) => Promise<T>,
  begin = "BEGIN",
): Promise<T> {
  return withClient(pool, async (client, markBroken) => {
    let result: T;
    try {
      const opened = (await client.query(begin)) as unknown as pg.QueryResult | pg.QueryResult[];
      result = await work(client, Array.isArray(opened) ? opened : [opened]);
    } catch (error) {
      await client.query("ROLLBACK").catch(markBroken);
      throw error;
    }
    try {
      await client.query("COMMIT");
    } catch (error) {
      // A server error answer (it has a SQLSTATE) means the transaction was rolled back.
      if (error instanceof pg.DatabaseError) throw error;
      markBroken(error instanceof Error ? error : new Error(String(error)));
      throw new CommitInDoubtError(error);
    }
    return result;
  });
}
