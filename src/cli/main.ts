import { readFileSync } from "node:fs";
import { ConfigError, EventValidationError, SpoolError, StoreError } from "../spec/index.js";
import { addActor, listActors, removeActor } from "./commands/actors.js";
import { chatCommand } from "./commands/chat.js";
import { contextCommand } from "./commands/context-command.js";
import { createContinuity, listContinuities } from "./commands/continuities.js";
import { framesCommand } from "./commands/frames.js";
import { itemsCommand } from "./commands/items.js";
import { keysInit } from "./commands/keys-init.js";
import { logShow } from "./commands/log-show.js";
import { logTail } from "./commands/log-tail.js";
import { logVerify } from "./commands/log-verify.js";
import { mcpList, mcpServe } from "./commands/mcp-command.js";
import { mcpLogin } from "./commands/mcp-login.js";
import { memoryReindexCommand, memorySearchCommand } from "./commands/memory-command.js";
import { pinCommand, pinsCommand, unpinCommand } from "./commands/pins.js";
import { postgresStart, postgresStatus, postgresStop } from "./commands/postgres-command.js";
import { protocolParse } from "./commands/protocol-parse.js";
import { providersDecode } from "./commands/providers-decode.js";
import { replayCommand, resumeCommand } from "./commands/resume-replay.js";
import { runCommand } from "./commands/run.js";
import { serveCommand, tokensCreate, tokensList, tokensRevoke } from "./commands/serve.js";
import { signCommand } from "./commands/sign.js";
import { sourcesCommand } from "./commands/sources.js";
import { tailCommand } from "./commands/tail.js";
import { threadsCommand } from "./commands/threads.js";
import { traceCommand } from "./commands/trace.js";
import { transcriptCommand } from "./commands/transcript.js";
import { turnAdd } from "./commands/turn-add.js";
import { verifyCommand } from "./commands/verify.js";
import { watchCommand } from "./commands/watch.js";
import { type CliIo, type CommandContext, createContext, UsageError } from "./context.js";
import { redactSecrets } from "./redact.js";
import { suggestCommand } from "./suggest.js";
import { USAGE } from "./usage.js";

export type { CliIo } from "./context.js";
export type { CliOutput } from "./format.js";

/** Exit codes of `spool`. */
export const EXIT = { ok: 0, failed: 1, usage: 2, store: 3 } as const;

type Runner = (ctx: CommandContext, args: string[]) => Promise<number>;

/** Commands by group; `""` is what a group does without a subcommand. */
const COMMANDS: Record<string, Record<string, Runner>> = {
  continuities: { "": listContinuities, list: listContinuities, create: createContinuity },
  turn: { add: turnAdd },
  actors: { "": listActors, add: addActor, remove: removeActor },
  log: { show: logShow, tail: logTail, verify: logVerify },
  protocol: { parse: protocolParse },
  providers: { decode: providersDecode },
  transcript: { "": transcriptCommand },
  keys: { init: keysInit },
  postgres: { start: postgresStart, stop: postgresStop, status: postgresStatus },
  verify: { "": verifyCommand },
  chat: { "": chatCommand },
  run: { "": runCommand },
  resume: { "": resumeCommand },
  replay: { "": replayCommand },
  items: { "": itemsCommand },
  sign: { "": signCommand },
  tail: { "": tailCommand },
  threads: { "": threadsCommand },
  sources: { "": sourcesCommand },
  watch: { "": watchCommand },
  pin: { "": pinCommand },
  unpin: { "": unpinCommand },
  pins: { "": pinsCommand },
  context: { "": contextCommand },
  trace: { "": traceCommand },
  frames: { "": framesCommand },
  mcp: { list: mcpList, serve: mcpServe, login: mcpLogin },
  serve: { "": serveCommand },
  tokens: { "": tokensList, list: tokensList, create: tokensCreate, revoke: tokensRevoke },
  memory: { search: memorySearchCommand, reindex: memoryReindexCommand },
};

/**
 * Runs `spool` with `argv` (without the node and script paths) and resolves with the exit code:
 * 0 ok, 1 verification failed or not found, 2 usage or configuration error, 3 store error.
 * Errors are printed as `spool: <message>` on stderr, without a stack trace unless
 * `SPOOL_DEBUG=1`, and with every password removed.
 */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const ctx = createContext(io);
  try {
    return await dispatch(ctx, argv);
  } catch (error) {
    return reportError(ctx, error);
  }
}

async function dispatch(ctx: CommandContext, argv: string[]): Promise<number> {
  // `--db` may come before the command: `spool --db x log tail`.
  const global: string[] = [];
  let args = [...argv];
  while (args[0] === "--db" || args[0]?.startsWith("--db=")) {
    const take = args[0] === "--db" ? 2 : 1;
    global.push(...args.slice(0, take));
    args = args.slice(take);
  }
  const [first, ...rest] = args;
  if (first === undefined) {
    ctx.io.stderr.write(USAGE[""]!.text);
    return EXIT.usage;
  }
  if (first === "-h" || first === "--help" || first === "help") {
    const topic = first === "help" ? rest.filter((word) => !word.startsWith("-")).join(" ") : "";
    const help = USAGE[topic];
    if (!help) throw unknownCommand(topic);
    ctx.io.stdout.write(help.text);
    return EXIT.ok;
  }
  if (first === "-V" || first === "--version" || first === "version") {
    ctx.out(`spool ${version()}`);
    return EXIT.ok;
  }
  if (first.startsWith("-")) throw new UsageError("", `unknown option ${first} before the command`);
  const group = COMMANDS[first];
  if (!group) throw unknownCommand(first);
  const [sub, ...subArgs] = rest;
  let name = first;
  let run = group[""];
  let commandArgs = rest;
  if (sub !== undefined && !sub.startsWith("-") && Object.hasOwn(group, sub) && sub !== "") {
    name = sub === "list" ? first : `${first} ${sub}`;
    run = group[sub];
    commandArgs = subArgs;
  }
  if (wantsHelp(commandArgs)) {
    ctx.io.stdout.write(USAGE[name]!.text);
    return EXIT.ok;
  }
  if (!run) {
    const choices = Object.keys(group).join(", ");
    if (sub === undefined || sub.startsWith("-"))
      throw new UsageError(first, `missing subcommand: one of ${choices}`);
    const guess = suggestCommand(sub, Object.keys(group));
    throw new UsageError(
      first,
      `unknown command "${first} ${sub}"${guess ? ` (did you mean \`spool ${first} ${guess}\`?)` : `; one of ${choices}`}`,
    );
  }
  return run(ctx, [...commandArgs, ...global]);
}

function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === "-h" || arg === "--help");
}

function unknownCommand(input: string): UsageError {
  const guess = suggestCommand(input, [...Object.keys(COMMANDS), ...Object.keys(USAGE)]);
  return new UsageError(
    "",
    `unknown command ${JSON.stringify(input)}${guess ? ` (did you mean \`spool ${guess}\`?)` : ""}`,
  );
}

/** Prints `error` as `spool: <message>` and picks the exit code for it. */
function reportError(ctx: CommandContext, error: unknown): number {
  const debug = ctx.io.env.SPOOL_DEBUG === "1";
  let code: number = EXIT.failed;
  if (error instanceof UsageError) {
    const help = USAGE[error.command] ?? USAGE[""]!;
    ctx.err(`spool: ${error.message}`);
    ctx.err(`Usage: ${help.synopsis}`);
    ctx.err(`Run \`spool${error.command ? ` ${error.command}` : ""} --help\` for details.`);
    code = EXIT.usage;
  } else if (error instanceof SpoolError) {
    ctx.err(`spool: ${error.message}`);
    if (error instanceof ConfigError || error instanceof EventValidationError) code = EXIT.usage;
    else if (error instanceof StoreError) code = EXIT.store;
  } else {
    const message = error instanceof Error ? error.message : String(error);
    ctx.err(`spool: unexpected error: ${message}`);
    if (!debug) ctx.err("Set SPOOL_DEBUG=1 to see where it happened.");
  }
  if (debug) {
    for (let cause = error; cause instanceof Error; cause = cause.cause) {
      ctx.err(cause === error ? (cause.stack ?? "") : `Caused by: ${cause.stack ?? cause.message}`);
    }
  }
  return code;
}

function version(): string {
  try {
    // src/cli/main.ts and dist/cli/main.js both sit two levels below package.json.
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    return typeof pkg.version === "string" ? pkg.version : "unknown";
  } catch {
    return "unknown";
  }
}

let pipeGuard = false;

/** The real process's io. A closed stdout (`spool log tail -f | head`) ends the process quietly. */
function processIo(): CliIo {
  if (!pipeGuard) {
    pipeGuard = true;
    process.stdout.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EPIPE") process.exit(EXIT.ok);
      process.stderr.write(`spool: cannot write output: ${redactSecrets(error.message)}\n`);
      process.exit(EXIT.failed);
    });
  }
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    terminal: { input: process.stdin, signals: process },
  };
}
