import type { KeyObject } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { EventStore } from "../../log/index.js";
import { isIdentifier } from "../../spec/index.js";
import type { TranscriptReport } from "../../transcript/index.js";
import {
  type CheckpointReport,
  loadTrustedKeys,
  resolveKeysDir,
  verifyCheckpoints,
} from "../../transcript/index.js";
import {
  type CommandContext,
  DB_OPTION,
  dbFlag,
  locateStore,
  NotFoundError,
  parseCommandArgs,
  type StoreTarget,
  storeNotFound,
  UsageError,
  withStore,
} from "../context.js";
import { DB_HELP_LINES } from "../db-help.js";
import { oneLine, plural } from "../format.js";
import type { CommandHelp } from "../usage.js";

/** Help of `spool verify`: for the integrator to register in `USAGE`. */
export const VERIFY_USAGE: CommandHelp = {
  synopsis:
    "spool verify <continuity | thread | transcript.jsonl> [--keys DIR] [--continuity ID] [--strict] [--json]",
  text: `Usage: spool verify <continuity | thread | transcript.jsonl> [--keys DIR] [--continuity ID] [--strict] [--json]

Checks a continuity's signed checkpoints: recomputes its hash chain, then checks that every
checkpoint.signed is signed by a known key and signs the event that is really at its seq. A thread
id checks that thread's checkpoints; a path to a transcript.jsonl checks the file's bytes against
its checkpoints (and the log, when the store exists). A word that is both an id and a file is
taken as the id; write ./name for the file. Exits 0 when everything checks out, 1 naming
the first event, line or signature that does not. Events after the newest checkpoint are counted
but are not a failure.

Options:
  --keys <dir>           The public keys to trust (default: $SPOOL_KEYS, then keys/ beside a
                         SQLite store, i.e. ./.spool/keys/)
  --continuity <id>      For a transcript file checked without the store: the continuity its
                         checkpoints sign (the lines do not carry it)
  --strict               Also fail when a thread finished or handed off (thread.completed,
                         thread.continued) and no checkpoint signs it
  --json                 Print the report as one JSON object
${DB_HELP_LINES}

Examples:
  spool verify home
  spool verify 01JC3V7Q8ZK2N5W4X6Y8A0B1C2 --strict --json
  spool verify ./threads/t1/transcript.jsonl --keys ./trusted-keys
`,
};

/**
 * `spool verify <target>`: verifies a continuity's (or a thread's) signed checkpoints with
 * `verifyCheckpoints`, or a transcript file with `verifyTranscriptFile`. A path-like target (a
 * `/`, a `.jsonl` ending, or not an id) that exists is a transcript; otherwise it is a continuity
 * id, then a thread id (found through its `thread.started`), then an existing file. Prints
 * `OK: …` and returns 0, or `FAILED: …` naming the first problem and returns 1; `--json` prints
 * one JSON object instead. Never prints key material. Throws `NotFoundError` (exit 1) for an
 * unknown target or a missing store, `UsageError` (exit 2) for bad arguments.
 */
export async function verifyCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "verify";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    keys: { type: "string" },
    continuity: { type: "string" },
    strict: { type: "boolean" },
    json: { type: "boolean" },
  });
  const [input, extra] = positionals;
  if (input === undefined) {
    throw new UsageError(command, "missing <continuity | thread | transcript.jsonl>");
  }
  if (extra !== undefined)
    throw new UsageError(command, `unexpected argument ${JSON.stringify(extra)}`);
  const keysDir = resolveKeysDir({
    cwd: ctx.io.cwd,
    env: ctx.io.env,
    db: values.db,
    keys: values.keys,
  });
  const publicKeys = loadTrustedKeys(keysDir);
  const target = locateStore(ctx, values.db);
  const file = resolve(ctx.io.cwd, input);
  const common = { target: input, keys: keysDir };
  const json = values.json === true;
  // A path-like target that exists is a transcript; a bare word is an id first, a file second.
  if (looksLikePath(input) && isFile(file)) {
    return runTranscript(ctx, target, file, publicKeys, json, common, values.continuity);
  }
  const report = target.exists
    ? await withStore(ctx, target, async (store) => {
        const scope = await findScope(store, input);
        if (!scope) return undefined;
        return verifyCheckpoints(store, { ...scope, publicKeys, strict: values.strict === true });
      })
    : undefined;
  if (!report) {
    if (isFile(file))
      return runTranscript(ctx, target, file, publicKeys, json, common, values.continuity);
    if (looksLikePath(input)) throw fileNotFound(file);
    throw target.exists ? targetNotFound(target, input) : storeNotFound(target);
  }
  if (json) {
    const mode = report.thread === undefined ? "continuity" : "thread";
    ctx.out(JSON.stringify({ mode, ...common, location: target.display, ...report }));
  } else printCheckpoints(ctx, report, keysDir, publicKeys.size);
  return report.ok ? 0 : 1;
}

/** Verifies the transcript at `file` (against the log when the store exists) and prints it. */
async function runTranscript(
  ctx: CommandContext,
  target: StoreTarget,
  file: string,
  publicKeys: Map<string, KeyObject>,
  json: boolean,
  common: Record<string, string>,
  continuity: string | undefined,
): Promise<number> {
  const report = target.exists
    ? await withStore(ctx, target, (store) => verifyTranscript(file, publicKeys, continuity, store))
    : await verifyTranscript(file, publicKeys, continuity);
  if (json) {
    ctx.out(JSON.stringify({ mode: "transcript", ...common, path: file, ...report }));
  } else printTranscript(ctx, file, report);
  return report.ok ? 0 : 1;
}

/** True for input that cannot be an id, or names a file: a path separator, `.jsonl`. */
function looksLikePath(input: string): boolean {
  return /[\\/]/.test(input) || input.endsWith(".jsonl") || !isIdentifier(input);
}

/** `input` as a continuity id, else as a thread id with its continuity. */
async function findScope(
  store: EventStore,
  input: string,
): Promise<{ continuity: string; thread?: string } | undefined> {
  if (await store.continuity(input)) return { continuity: input };
  for await (const event of store.read({
    stream: { kind: "thread", id: input },
    types: ["thread.started"],
    limit: 1,
  })) {
    return { continuity: event.continuity, thread: input };
  }
  return undefined;
}

async function verifyTranscript(
  path: string,
  publicKeys: Map<string, KeyObject>,
  continuity: string | undefined,
  store?: EventStore,
): Promise<TranscriptReport> {
  // Loaded on demand: continuity and thread checks need none of the transcript code.
  const { verifyTranscriptFile } = await import("../../transcript/index.js");
  return verifyTranscriptFile(path, {
    publicKeys,
    ...(continuity !== undefined ? { continuity } : {}),
    ...(store ? { store } : {}),
  });
}

function printCheckpoints(
  ctx: CommandContext,
  report: CheckpointReport,
  keysDir: string,
  trusted: number,
): void {
  const { style } = ctx;
  const scope =
    report.thread === undefined
      ? `continuity ${JSON.stringify(report.continuity)}`
      : `thread ${JSON.stringify(report.thread)} in continuity ${JSON.stringify(report.continuity)}`;
  const counts = `${plural(report.events, "event")}, ${plural(report.checkpoints, "checkpoint")} verified`;
  const problem = report.firstProblem;
  if (!problem) {
    const keys =
      report.keyIds.length === 0
        ? ""
        : ` (${plural(report.keyIds.length, "key")}: ${report.keyIds.join(", ")})`;
    ctx.out(`${style.green("OK")}: ${oneLine(scope)}: ${counts}${keys}`);
    const tail = report.unsignedTail;
    if (tail.events > 0) {
      const after =
        tail.afterSeq === 0
          ? "no checkpoint signs them yet"
          : `they come after seq ${tail.afterSeq}, the newest signed`;
      ctx.out(
        `  unsigned tail: ${plural(tail.events, "event")} not covered by a checkpoint (${after})`,
      );
    }
    return;
  }
  const where =
    problem.seq === undefined ? "at the head record" : `at seq ${problem.seq} (id ${problem.id})`;
  ctx.out(`${style.red("FAILED")}: ${problem.kind} ${where} in ${oneLine(scope)}`);
  ctx.out(`  reason: ${oneLine(problem.message)}`);
  if (problem.kind === "unknown-key") {
    ctx.out(`  trusted keys: ${plural(trusted, "public key")} from ${oneLine(keysDir)}`);
  }
  ctx.out(
    `  checked ${plural(report.events, "event")} of the chain and verified ${plural(report.checkpoints, "checkpoint")} before it; verification stops at the first problem`,
  );
}

function printTranscript(ctx: CommandContext, path: string, report: TranscriptReport): void {
  const { style } = ctx;
  const counts = `${plural(report.lines, "line")}, ${plural(report.checkpoints, "checkpoint")} verified`;
  const problem = report.firstProblem;
  const what =
    report.thread === undefined
      ? `transcript ${path}`
      : `transcript of thread ${JSON.stringify(report.thread)} (${path})`;
  if (!problem) {
    ctx.out(`${style.green("OK")}: ${oneLine(what)}: ${counts}`);
    return;
  }
  ctx.out(
    `${style.red("FAILED")}: ${problem.kind} at line ${problem.line} (byte ${problem.byteOffset}) of ${oneLine(path)}`,
  );
  ctx.out(`  reason: ${oneLine(problem.message)}`);
  ctx.out(`  checked ${counts} before it; verification stops at the first problem`);
}

function isFile(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isFile();
  } catch {
    return false;
  }
}

function fileNotFound(path: string): NotFoundError {
  return new NotFoundError(`there is no transcript file at ${path}`, "Check the path");
}

function targetNotFound(target: StoreTarget, input: string): NotFoundError {
  return new NotFoundError(
    `no continuity or thread ${JSON.stringify(input)} in ${target.display}, and no file of that name`,
    `List continuities with \`spool continuities${dbFlag(target)}\`, pass a thread id from \`spool log show <continuity>${dbFlag(target)}\`, or the path to a transcript.jsonl`,
  );
}
