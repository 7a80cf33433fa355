import { mkdir, open, rename, rm } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { findThreadContinuity, streamTranscript } from "../../transcript/index.js";
import {
  type CommandContext,
  continuityNotFound,
  DB_OPTION,
  dbFlag,
  locateStore,
  NotFoundError,
  parseCommandArgs,
  parseIdentifier,
  storeNotFound,
  UsageError,
  withStore,
} from "../context.js";
import { DB_HELP_LINES } from "../db-help.js";
import type { CommandHelp } from "../usage.js";

/** The help of `spool transcript`, for the integrator to register in `USAGE`. */
export const TRANSCRIPT_USAGE: CommandHelp = {
  synopsis: "spool transcript <thread> [--continuity ID] [--out FILE]",
  text: `Usage: spool transcript <thread> [--continuity ID] [--out FILE]

Rebuilds a thread's transcript.jsonl from the log and prints it: one line per streamed token
delta ({"type":"token_delta",…}) and one per other event of the thread, its steps and their
tasks, in seq order. The bytes are exactly what the live transcript sink writes, so the output can
replace a damaged file, or be compared with one (spool verify <file>).

Options:
  --continuity <id>      The continuity holding the thread (default: the one where it started)
  --out <file>           Write the transcript to this file instead of printing it
${DB_HELP_LINES}

Examples:
  spool transcript 01JC3V7Q8ZK2N5W4X6Y8A0B1C2
  spool transcript t1 --continuity home --out .spool/threads/t1/transcript.jsonl
`,
};

/**
 * `spool transcript <thread> [--continuity ID] [--out FILE]`: prints (or writes, atomically) the
 * transcript.jsonl of a thread rebuilt from the log, streamed. Without `--continuity` the thread is
 * looked up by its `thread.started`. Throws `NotFoundError` (exit 1) for a missing store,
 * continuity or thread, `UsageError` (exit 2) for bad arguments.
 */
export async function transcriptCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "transcript";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    continuity: { type: "string" },
    out: { type: "string" },
  });
  const [input, ...extra] = positionals;
  if (input === undefined) throw new UsageError(command, "missing <thread>");
  if (extra.length > 0)
    throw new UsageError(command, `unexpected argument ${JSON.stringify(extra[0])}`);
  const thread = parseIdentifier(command, "<thread>", input);
  const given =
    values.continuity === undefined
      ? undefined
      : parseIdentifier(command, "--continuity", values.continuity);
  if (values.out === "") throw new UsageError(command, "--out needs a file name");
  const target = locateStore(ctx, values.db);
  if (!target.exists) throw given ? continuityNotFound(target, given) : storeNotFound(target);
  await withStore(ctx, target, async (store) => {
    if (given !== undefined && !(await store.continuity(given))) {
      throw continuityNotFound(target, given);
    }
    const continuity = given ?? (await findThreadContinuity(store, thread));
    if (continuity === undefined) {
      throw new NotFoundError(
        `no thread ${JSON.stringify(thread)} in ${target.display} (no thread.started names it)`,
        `Find thread ids with \`spool log show <continuity> --type thread.started${dbFlag(target)}\`, or pass --continuity`,
      );
    }
    const chunks = streamTranscript(store, continuity, thread);
    const lines = values.out === undefined ? await print(ctx, chunks) : await save(values.out);
    if (lines === 0) {
      throw new NotFoundError(
        `thread ${JSON.stringify(thread)} has no events in continuity ${JSON.stringify(continuity)}`,
        `Check the thread id, or list the continuity's events with \`spool log show ${continuity}${dbFlag(target)}\``,
      );
    }

    async function save(out: string): Promise<number> {
      const path = resolve(ctx.io.cwd, out);
      const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
      await mkdir(dirname(path), { recursive: true });
      let count = 0;
      try {
        const file = await open(temporary, "w");
        try {
          for await (const chunk of chunks) {
            await file.write(chunk, null, "utf8");
            count += countLines(chunk);
          }
        } finally {
          await file.close();
        }
        if (count > 0) await rename(temporary, path);
      } finally {
        await rm(temporary, { force: true });
      }
      if (count > 0) ctx.err(`wrote ${count} lines to ${path}`);
      return count;
    }
  });
  return 0;
}

async function print(ctx: CommandContext, chunks: AsyncIterable<string>): Promise<number> {
  let count = 0;
  for await (const chunk of chunks) {
    ctx.io.stdout.write(chunk);
    count += countLines(chunk);
  }
  return count;
}

function countLines(text: string): number {
  let count = 0;
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) count += 1;
  return count;
}
