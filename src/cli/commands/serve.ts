import { AccessTokens, type Role, serve } from "../../server/index.js";
import { identifier } from "../../spec/index.js";
import { resolveThreadsDir } from "../../transcript/index.js";
import {
  type CommandContext,
  DB_OPTION,
  locateStore,
  openStore,
  parseCommandArgs,
  parseIdentifier,
  UsageError,
  withStore,
} from "../context.js";
import { DB_HELP_LINES } from "../db-help.js";
import { formatTime, renderTable } from "../format.js";
import type { CommandHelp } from "../usage.js";
import { openAgentSession, recordSessionMcp, sessionMcp } from "./agent-session.js";
import { defaultActor } from "./continuities.js";
import { cliLeaseOptions } from "./continuity-follower.js";

/** Help of `spool serve`. */
export const SERVE_USAGE: CommandHelp = {
  synopsis: "spool serve [--host 127.0.0.1] [--port 7400] [--cors ORIGIN]…",
  text: `Usage: spool serve [--host 127.0.0.1] [--port 7400] [--cors ORIGIN]…

Runs Spool as a service: the HTTP + SSE API of docs/http-api.md (continuities, turns, live
events, runs, threads, context, pins, sources), the AI SDK chat route for useChat, and
OpenAI-compatible chat completions (the model names the agent). Every route needs a bearer token
(spool tokens create). Agents are assembled from this workspace and environment, as spool chat
assembles them. Ctrl-C stops it: runs are cancelled and leases released.

Options:
  --host <address>       Interface to listen on (default 127.0.0.1, loopback only)
  --port <n>             Port (default 7400; 0 picks a free one)
  --cors <origin>        Allow browsers on this origin (repeat for several; default: none)
${DB_HELP_LINES}

Examples:
  spool tokens create --actor alice --role owner
  spool serve --port 7400
  curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:7400/api/continuities
`,
};

/** Help of `spool tokens`. */
export const TOKENS_USAGE: CommandHelp = {
  synopsis: "spool tokens create|list|revoke",
  text: `Usage: spool tokens create --actor NAME --role owner|writer|reader [--continuity ID] [--label TEXT]
       spool tokens [list] [--json]
       spool tokens revoke <token-id> [--reason TEXT]

Bearer tokens of the HTTP API (spool serve). A token acts as one actor with one role (owner >
writer > reader) over every continuity, or only --continuity; a continuity's access list (spool
actors) caps it further. The secret is printed once, at creation: the log keeps only its sha256.
A revoked token is refused at once, by every server on this store, and its open streams end.

Options:
  --actor <name>         The actor the token acts as (create)
  --role <role>          owner, writer or reader (create)
  --continuity <id>      Reach only this continuity (create; default: all)
  --label <text>         What the token is for (create)
  --reason <text>        Why it is revoked (revoke)
  --json                 Print JSON
${DB_HELP_LINES}

Examples:
  spool tokens create --actor alice --role writer
  spool tokens create --actor dashboard --role reader --continuity home
  spool tokens revoke tok_01jc3v7q8zk2n5w4x6y8a0b1c2
`,
};

/** `spool serve`: listens until a signal (or the io's abort signal) stops it. */
export async function serveCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "serve";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    host: { type: "string" },
    port: { type: "string" },
    cors: { type: "string", multiple: true },
  });
  if (positionals.length > 0)
    throw new UsageError(command, `unexpected ${JSON.stringify(positionals[0])}`);
  const port = values.port === undefined ? 7400 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new UsageError(
      command,
      `--port must be a port number (0–65535), not ${JSON.stringify(values.port)}`,
    );
  }
  const store = await openStore(ctx, locateStore(ctx, values.db));
  try {
    const server = await serve({
      store,
      workspace: ctx.io.cwd,
      env: ctx.io.env,
      lease: cliLeaseOptions(ctx),
      hostname: values.host ?? "127.0.0.1",
      port,
      ...(values.cors ? { cors: values.cors } : {}),
      threadsDir: resolveThreadsDir({ cwd: ctx.io.cwd, env: ctx.io.env, db: values.db }),
      // Sessions open as spool chat opens them: the same MCP tools and memory, so a continuity
      // answers the same whichever process runs it, and replays the same.
      openSession: async (continuity, options) => {
        const mcp = await sessionMcp(ctx, store, continuity, options.agent);
        const session = openAgentSession(ctx, store, continuity, { ...options, mcp });
        for (const line of await recordSessionMcp(store, mcp)) ctx.err(`spool serve: ${line}`);
        return session;
      },
      onInternalError: (error) =>
        ctx.err(
          `spool serve: internal error: ${error instanceof Error ? error.message : String(error)}`,
        ),
    });
    ctx.err(`Spool is serving ${store.location} on ${server.url} (Ctrl-C stops it)`);
    await new Promise<void>((resolve) => {
      if (ctx.io.signal) {
        if (ctx.io.signal.aborted) resolve();
        ctx.io.signal.addEventListener("abort", () => resolve(), { once: true });
      }
      process.once("SIGINT", () => resolve());
      process.once("SIGTERM", () => resolve());
    });
    await server.close();
    return 0;
  } finally {
    await store.close();
  }
}

const ROLES: readonly Role[] = ["owner", "writer", "reader"];

/** `spool tokens create`: prints the token's id and, once, its secret. */
export async function tokensCreate(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "tokens create";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    actor: { type: "string" },
    role: { type: "string" },
    continuity: { type: "string" },
    label: { type: "string" },
    json: { type: "boolean" },
  });
  if (positionals.length > 0)
    throw new UsageError(command, `unexpected ${JSON.stringify(positionals[0])}`);
  if (values.actor === undefined) throw new UsageError(command, "missing --actor NAME");
  const actor = parseIdentifier(command, "--actor", values.actor);
  const role = values.role as Role | undefined;
  if (role === undefined || !ROLES.includes(role)) {
    throw new UsageError(command, `--role must be one of ${ROLES.join(", ")}`);
  }
  const scope =
    values.continuity === undefined
      ? undefined
      : parseIdentifier(command, "--continuity", values.continuity);
  if (values.label !== undefined && values.label.length > 200) {
    throw new UsageError(command, "--label must be at most 200 characters");
  }
  const created = await withStore(ctx, locateStore(ctx, values.db), (store) =>
    new AccessTokens(store).create({
      actor,
      role,
      ...(scope !== undefined ? { scope } : {}),
      ...(values.label !== undefined ? { label: values.label } : {}),
      by: defaultActor(ctx),
    }),
  );
  if (values.json) {
    ctx.out(JSON.stringify({ ...created.token, secret: created.secret }));
    return 0;
  }
  ctx.out(created.secret);
  ctx.err(
    `Token ${created.token.id}: ${role} as ${actor}${scope ? ` on ${scope}` : " on every continuity"}.`,
  );
  ctx.err("The secret above is shown this once; keep it (the log stores only its hash).");
  return 0;
}

/** `spool tokens [list]`: every token, without secrets. */
export async function tokensList(ctx: CommandContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("tokens", args, {
    ...DB_OPTION,
    json: { type: "boolean" },
  });
  if (positionals.length > 0)
    throw new UsageError("tokens", `unexpected ${JSON.stringify(positionals[0])}`);
  const target = locateStore(ctx, values.db);
  const tokens = target.exists
    ? await withStore(ctx, target, (store) => new AccessTokens(store).list())
    : [];
  if (values.json) {
    for (const token of tokens) ctx.out(JSON.stringify(token));
    return 0;
  }
  if (tokens.length === 0) {
    ctx.err("No tokens yet. Create one with: spool tokens create --actor NAME --role writer");
    return 0;
  }
  ctx.io.stdout.write(
    renderTable(
      ["ID", "ACTOR", "ROLE", "CONTINUITY", "CREATED", "STATUS", "LABEL"],
      tokens.map((token) => [
        token.id,
        token.actor,
        token.role,
        token.scope ?? "(all)",
        formatTime(token.createdAt),
        token.revokedAt ? `revoked ${formatTime(token.revokedAt)}` : "live",
        token.label ?? "",
      ]),
      ctx.style,
    ),
  );
  return 0;
}

/** `spool tokens revoke <id>`: exit 1 when there is no such live token. */
export async function tokensRevoke(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "tokens revoke";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    reason: { type: "string" },
  });
  const [id, ...rest] = positionals;
  if (id === undefined)
    throw new UsageError(command, "missing <token-id> (spool tokens lists them)");
  if (rest.length > 0) throw new UsageError(command, `unexpected ${JSON.stringify(rest[0])}`);
  if (!identifier.safeParse(id).success)
    throw new UsageError(command, `${JSON.stringify(id)} is not a token id`);
  const revoked = await withStore(ctx, locateStore(ctx, values.db), (store) =>
    new AccessTokens(store).revoke(id, defaultActor(ctx), values.reason),
  );
  if (!revoked) {
    ctx.err(`spool: no live token ${id} (spool tokens lists them)`);
    return 1;
  }
  ctx.out(`revoked ${id}`);
  return 0;
}
