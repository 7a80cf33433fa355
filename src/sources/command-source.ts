import { z } from "zod";
import { waitUnlessAborted } from "./abortable-wait.js";
import { BatchedEmitter, SourceStopped } from "./batched-emitter.js";
import { type CommandChannel, type CommandEvent, CommandRun } from "./command-run.js";
import { LineSplitter } from "./line-splitter.js";
import { ReconnectBackoff } from "./reconnect-backoff.js";
import { parseSourceOptions } from "./source-options.js";
import type { Source, SourceContext, SourceCursor, SourceDefinition } from "./source-types.js";

/** A command source's own `options` (other keys are ignored). */
const commandOptions = z.looseObject({
  /** When a command that exited is started again: after a failure (non-zero exit or a signal), always, or never. */
  restart: z.enum(["on-failure", "always", "never"]).default("on-failure"),
  /** The wait before the first restart; it doubles per restart in a row. */
  backoff_ms: z.number().int().min(0).max(3_600_000).default(1_000),
  /** The longest wait between restarts. */
  max_backoff_ms: z.number().int().min(0).max(86_400_000).default(60_000),
  /** A run that lasted this long resets the wait to `backoff_ms`. */
  reset_after_ms: z.number().int().min(0).max(86_400_000).default(60_000),
  /** How long a stopped command has between SIGTERM and SIGKILL. */
  kill_grace_ms: z.number().int().min(0).max(600_000).default(5_000),
});
type CommandOptions = z.infer<typeof commandOptions>;

/**
 * A command source's cursor: which run of the command (1 for the first start, counted across
 * restarts and resumes) and how many lines of each output it has read in that run. A command
 * cannot resume mid-output: after a restart its output is new, so the line counts start at 0.
 */
export interface CommandCursor {
  run: number;
  stdout_lines: number;
  stderr_lines: number;
}

/** Reads a logged cursor back, or undefined when it is not a command cursor. */
export function parseCommandCursor(cursor: SourceCursor): CommandCursor | undefined {
  const { run, stdout_lines, stderr_lines } = cursor;
  const counts = [run, stdout_lines, stderr_lines];
  if (
    !counts.every((value) => typeof value === "number" && Number.isSafeInteger(value) && value >= 0)
  ) {
    return undefined;
  }
  return {
    run: run as number,
    stdout_lines: stdout_lines as number,
    stderr_lines: stderr_lines as number,
  };
}

/** How a command source is created. */
export interface CommandSourceOptions {
  /** The working directory the command runs in. */
  cwd: string;
  /** Its environment (default: Spool's own). */
  env?: Record<string, string | undefined>;
  /** The shell that runs `definition.target` with `-c` (default `/bin/sh`). */
  shell?: string;
}

/**
 * A source that runs `definition.target` with `/bin/sh -c`, in its own process group, and
 * delivers the lines of its stdout and stderr (each through its own splitter; a chunk holds lines
 * of one `channel`). While a chunk's `emit` is pending the command's output is not read, so a
 * flood blocks the command on its pipe and memory stays bounded.
 *
 * When the command exits: the held lines, then a `notice` `source.exited` with `exitCode` (null
 * when a signal ended it) and `retryInMs` when it is started again per `options.restart`
 * (`on-failure` by default, `always`, `never`), after a wait that doubles from
 * `options.backoff_ms` (1 s) to `options.max_backoff_ms` (60 s) and resets after a run of
 * `options.reset_after_ms` (60 s). Not restarted: `exhausted`. Exit code 127 (command not found)
 * is such an exit; a command that cannot be started at all (no such working directory or
 * shell): `failed` `source.spawn-failed`. Resumed from a logged cursor, it starts the command
 * anew with a `rotated` (`restarted`): output cannot be resumed mid-run (see `CommandCursor`).
 *
 * When the signal aborts, the process group gets SIGTERM, then SIGKILL after
 * `options.kill_grace_ms` (5 s), and `run` returns once the command exited. Never throws.
 */
export function createCommandSource(
  definition: SourceDefinition,
  options: CommandSourceOptions,
): Source {
  return { definition, run: (context) => runCommandSource(definition, options, context) };
}

async function runCommandSource(
  definition: SourceDefinition,
  options: CommandSourceOptions,
  context: SourceContext,
): Promise<void> {
  const out = new BatchedEmitter(definition, context);
  const parsed = parseSourceOptions(definition, commandOptions, "source.invalid-options");
  if ("failed" in parsed) return out.fail(parsed.failed);
  const settings = parsed.options;
  try {
    let run = await startingRun(context.cursor, out);
    const backoff = new ReconnectBackoff(settings.backoff_ms, settings.max_backoff_ms);
    for (; ; run++) {
      const started = performance.now();
      const end = await readRun(definition, options, settings, run, context.signal, out);
      if (end.type === "spawn-failed") {
        await out.fail({
          type: "failed",
          code: "source.spawn-failed",
          message: spawnFailedMessage(options, end.error),
        });
        return;
      }
      const failed = end.code !== 0 || end.signal !== null;
      const again = settings.restart === "always" || (settings.restart === "on-failure" && failed);
      if (performance.now() - started >= settings.reset_after_ms) backoff.reset();
      const retryInMs = again ? backoff.next() : undefined;
      await out.send({
        type: "notice",
        code: "source.exited",
        message: exitMessage(definition.target, end, settings.restart, retryInMs),
        exitCode: end.signal === null ? end.code : null,
        ...(retryInMs === undefined ? {} : { retryInMs }),
      });
      if (retryInMs === undefined) {
        await out.send({
          type: "exhausted",
          cursor: { run, stdout_lines: end.lines.stdout, stderr_lines: end.lines.stderr },
        });
        return;
      }
      if (!(await waitUnlessAborted(retryInMs, context.signal))) return;
    }
  } catch (error) {
    if (error instanceof SourceStopped) return;
    await out.fail({
      type: "failed",
      code: "source.command-error",
      message: `the command source "${definition.id}" broke: ${error instanceof Error ? error.message : String(error)}; resume it to start the command again`,
    });
  }
}

/** The number of the first run: 1, or the one after the logged cursor's (announced). */
async function startingRun(logged: SourceCursor | undefined, out: BatchedEmitter): Promise<number> {
  if (logged === undefined) return 1;
  const cursor = parseCommandCursor(logged);
  const run = (cursor?.run ?? 0) + 1;
  await out.send({
    type: "rotated",
    reason: "restarted",
    cursor: { run, stdout_lines: 0, stderr_lines: 0 },
    detail:
      cursor === undefined
        ? `the logged cursor ${JSON.stringify(logged).slice(0, 200)} is not a command cursor: the command starts anew`
        : `a command cannot resume mid-output: run ${run} starts anew (run ${cursor.run} had delivered ${cursor.stdout_lines} stdout and ${cursor.stderr_lines} stderr lines)`,
  });
  return run;
}

/** How one run ended: its exit, with the lines it read, or a start that failed. */
type RunEnd =
  | {
      type: "exit";
      code: number | null;
      signal: NodeJS.Signals | null;
      lines: Record<CommandChannel, number>;
    }
  | { type: "spawn-failed"; error: Error };

/** Starts the command once and delivers its lines until it exits (or the source stops). */
async function readRun(
  definition: SourceDefinition,
  options: CommandSourceOptions,
  settings: CommandOptions,
  run: number,
  signal: AbortSignal,
  out: BatchedEmitter,
): Promise<RunEnd> {
  let child: CommandRun;
  try {
    child = new CommandRun({
      command: definition.target,
      shell: options.shell ?? "/bin/sh",
      cwd: options.cwd,
      env: options.env ?? process.env,
    });
  } catch (error) {
    return {
      type: "spawn-failed",
      error: error instanceof Error ? error : new Error(String(error)),
    };
  }
  const maxLineBytes = definition.batching.maxLineBytes;
  const splitters = {
    stdout: new LineSplitter(maxLineBytes),
    stderr: new LineSplitter(maxLineBytes),
  };
  const lines = { stdout: 0, stderr: 0 };
  const cursor = (): SourceCursor => ({
    run,
    stdout_lines: lines.stdout,
    stderr_lines: lines.stderr,
  });
  try {
    for (;;) {
      const event: CommandEvent | undefined = await child.next(out.msUntilDue(), signal);
      if (signal.aborted) throw new SourceStopped();
      if (event === undefined) {
        await out.flushIfDue();
        continue;
      }
      if (event.type === "spawn-failed") return event;
      if (event.type === "exit") {
        await out.flush();
        child.reapGroup();
        return { ...event, lines };
      }
      const { channel } = event;
      const split =
        event.type === "data" ? splitters[channel].push(event.bytes) : splitters[channel].end();
      for (const line of split) {
        lines[channel] += 1;
        await out.add(line, cursor(), channel);
      }
      if (event.type === "data") child.resume(channel);
    }
  } catch (error) {
    await child.kill(settings.kill_grace_ms);
    throw error;
  }
}

function exitMessage(
  command: string,
  end: { code: number | null; signal: NodeJS.Signals | null },
  restart: CommandOptions["restart"],
  retryInMs: number | undefined,
): string {
  const shown = command.length > 200 ? `${command.slice(0, 200)}…` : command;
  let how = end.signal !== null ? `was killed by ${end.signal}` : `exited with code ${end.code}`;
  if (end.code === 127)
    how += " (the shell found no such command: check the command line and PATH)";
  if (end.code === 126) how += " (the command is not executable: check its permissions)";
  const next =
    retryInMs === undefined
      ? `not started again (restart: ${restart})`
      : `starting it again in ${retryInMs} ms (restart: ${restart})`;
  return `\`${shown}\` ${how}; ${next}`;
}

function spawnFailedMessage(options: CommandSourceOptions, error: Error): string {
  const shell = options.shell ?? "/bin/sh";
  return `cannot start the command (${error.message}): check that the working directory ${options.cwd} exists and that the shell ${shell} is installed and executable, then resume the source`;
}
