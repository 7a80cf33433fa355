import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import {
  checkSqliteLocation,
  type EventStore,
  openEventStore,
  resolveStoreLocation,
  sqlitePaths,
} from "../log/index.js";
import { identifier, SpoolError } from "../spec/index.js";
import type { SignalSource } from "./chat/index.js";
import { type CliOutput, colorEnabled, createStyle, outputWidth, type Style } from "./format.js";
import { redactSecrets, shellQuote } from "./redact.js";

/** What the CLI reads and writes: the process's streams and environment, or a test's doubles. */
export interface CliIo {
  stdout: CliOutput;
  stderr: CliOutput;
  env: Record<string, string | undefined>;
  /** Where a relative `--db` and the default `.spool/` are resolved. */
  cwd: string;
  /** Stops `log tail --follow` (as SIGINT and SIGTERM do); for tests and embedding. */
  signal?: AbortSignal;
  /** What commands read as standard input (`protocol parse -`); default: the process's stdin. */
  stdin?: AsyncIterable<string | Uint8Array>;
  /**
   * The terminal `spool chat` reads turns from (a TTY or a pipe), and where Ctrl-C arrives as a
   * signal when stdin is not a terminal. Default: the process's stdin.
   */
  terminal?: {
    input: NodeJS.ReadableStream & { isTTY?: boolean };
    signals?: SignalSource;
  };
}

/** What every command gets: its io, styles for both streams and the usable line width. */
export interface CommandContext {
  io: CliIo;
  /** Styling for stdout (plain unless stdout is a terminal and `NO_COLOR` is unset). */
  style: Style;
  /** Styling for stderr. */
  errStyle: Style;
  /** Columns a line of stdout may take. */
  width: number;
  /** Writes a line to stdout. */
  out(line: string): void;
  /** Writes a line to stderr, with any password in it removed. */
  err(line: string): void;
}

/** Builds the context commands run in. */
export function createContext(io: CliIo): CommandContext {
  return {
    io,
    style: createStyle(colorEnabled(io.stdout, io.env)),
    errStyle: createStyle(colorEnabled(io.stderr, io.env)),
    width: outputWidth(io.stdout, io.env),
    out: (line) => void io.stdout.write(`${line}\n`),
    err: (line) => void io.stderr.write(`${redactSecrets(line)}\n`),
  };
}

/** Bad command-line input: exit code 2, with a pointer to the command's help. */
export class UsageError extends SpoolError {
  /** The command whose help the message points to, e.g. `log show`; empty for `spool` itself. */
  readonly command: string;

  constructor(command: string, message: string) {
    super("cli.usage", message);
    this.command = command;
  }
}

/** A continuity or store that is not there: exit code 1. */
export class NotFoundError extends SpoolError {
  constructor(message: string, hint: string) {
    super("cli.not-found", message, { hint });
  }
}

/** One option of a command, as `parseArgs` takes it. */
export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
  multiple?: boolean;
}

/** The parsed values of `O`: strings, booleans, or arrays of them for `multiple` options. */
export type OptionValues<O extends Record<string, OptionSpec>> = {
  [K in keyof O]?: O[K] extends { type: "boolean" }
    ? O[K] extends { multiple: true }
      ? boolean[]
      : boolean
    : O[K] extends { multiple: true }
      ? string[]
      : string;
};

/** The `--db` option every command takes. */
export const DB_OPTION = { db: { type: "string" } } as const satisfies Record<string, OptionSpec>;

/**
 * `parseArgs` in strict mode, with its errors turned into `UsageError`s that name `command`.
 */
export function parseCommandArgs<const O extends Record<string, OptionSpec>>(
  command: string,
  args: readonly string[],
  options: O,
): { values: OptionValues<O>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      options,
      strict: true,
      allowPositionals: true,
    });
    return { values: values as OptionValues<O>, positionals };
  } catch (error) {
    throw toUsageError(command, error);
  }
}

function toUsageError(command: string, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !code.startsWith("ERR_PARSE_ARGS")) return error;
  const message = error instanceof Error ? error.message : String(error);
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? "";
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const tip = command === "turn add" ? ' (text that starts with "-" goes after "--")' : "";
    return new UsageError(command, `unknown option ${quoted}${tip}`);
  }
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") {
    return new UsageError(command, `unexpected argument ${JSON.stringify(quoted)}`);
  }
  if (/argument missing/.test(message)) {
    return new UsageError(command, `option ${quoted.split(" ")[0]} needs a value`);
  }
  return new UsageError(
    command,
    message.replace(/\.$/, "").replace(/^\w/, (c) => c.toLowerCase()),
  );
}

/** `value` of `option` as a whole number of at least `min`. */
export function parseInteger(
  command: string,
  option: string,
  value: string | undefined,
  min: number,
): number | undefined {
  if (value === undefined) return undefined;
  const number = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < min) {
    throw new UsageError(
      command,
      `${option} must be a whole number${min > 0 ? ` of at least ${min}` : " (0 or more)"}, not ${JSON.stringify(value)}`,
    );
  }
  return number;
}

/** `value` of `option` if it is a valid continuity or actor id. */
export function parseIdentifier(command: string, option: string, value: string): string {
  const result = identifier.safeParse(value);
  if (!result.success) {
    throw new UsageError(
      command,
      `${option} ${JSON.stringify(value)} ${result.error.issues[0]?.message ?? "is not a valid id"}`,
    );
  }
  return value;
}

/** Where a command's store is and whether it exists yet, without opening or creating anything. */
export interface StoreTarget {
  db: string | undefined;
  kind: "sqlite" | "postgres";
  /** The SQLite file or the redacted URL: safe to print. */
  display: string;
  /** False only for a SQLite store whose file is not there yet. */
  exists: boolean;
}

/**
 * Resolves `--db` (then `SPOOL_DB`, then `./.spool/`). Throws `ConfigError` for a bad location,
 * and `StoreError` for a SQLite path that cannot be a store (a file where a folder must be, a file
 * that is not SQLite), so commands that only read refuse it too instead of finding no store.
 */
export function locateStore(ctx: CommandContext, db: string | undefined): StoreTarget {
  const location = resolveStoreLocation({ db, cwd: ctx.io.cwd, env: ctx.io.env });
  if (location.kind === "postgres") {
    return { db, kind: "postgres", display: redactSecrets(location.target), exists: true };
  }
  const { file } = sqlitePaths(location.target);
  checkSqliteLocation(file);
  return { db, kind: "sqlite", display: file, exists: existsSync(file) };
}

/** Opens the store at `target` (creating an empty SQLite store when absent). */
export function openStore(ctx: CommandContext, target: StoreTarget): Promise<EventStore> {
  return openEventStore({ db: target.db, cwd: ctx.io.cwd, env: ctx.io.env });
}

/** Runs `body` with the store open, closing it afterwards whatever happens. */
export async function withStore<T>(
  ctx: CommandContext,
  target: StoreTarget,
  body: (store: EventStore) => Promise<T>,
): Promise<T> {
  const store = await openStore(ctx, target);
  try {
    return await body(store);
  } finally {
    await store.close();
  }
}

/** ` --db <location>` when `--db` was given, for commands the CLI suggests; else empty. */
export function dbFlag(target: StoreTarget): string {
  return target.db === undefined ? "" : ` --db ${shellQuote(redactSecrets(target.db))}`;
}

/** The error for a continuity that has no events in the store. */
export function continuityNotFound(target: StoreTarget, continuity: string): NotFoundError {
  return new NotFoundError(
    `no continuity ${JSON.stringify(continuity)} in ${target.display}`,
    `List them with \`spool continuities${dbFlag(target)}\``,
  );
}

/** The error for a read of a SQLite store that has not been created. */
export function storeNotFound(target: StoreTarget): NotFoundError {
  return new NotFoundError(
    `there is no Spool store at ${target.display} yet`,
    `Check --db (or SPOOL_DB), or create one with \`spool continuities create${dbFlag(target)}\``,
  );
}
