import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { stat } from "node:fs/promises";
import { z } from "zod";
import { defineTool, type ToolContext } from "../actions/index.js";
import type { ToolLimits } from "./limits.js";
import { OutputBuffer } from "./output-buffer.js";
import { abortedError, errnoCode, ToolError, toFsToolError } from "./tool-error.js";
import type { Workspace } from "./workspace.js";

/** What `shell.run` is built from. */
export interface ShellRunOptions {
  /** Off unless true: every call then fails with `tool.shell-disabled`. */
  enabled: boolean;
  /** Variables added to (and overriding) the small base environment commands get. */
  env?: Record<string, string>;
  workspace: Workspace;
  limits: ToolLimits;
}

/** `shell.run`'s result. A non-zero exit code is a result, not an error. */
export interface ShellRunResult {
  /** Null when the process was killed by a signal. */
  exitCode: number | null;
  /** The signal that ended it (`SIGKILL` after a timeout), or null. */
  signal: string | null;
  /** True when the call's timeout killed it. */
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** True when the middle of stdout was left out to respect the cap. */
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
}

/** How long output pipes may stay open after the command exits before they are closed. */
const DRAIN_MS = 1_000;

function parameters(limits: ToolLimits) {
  return z
    .strictObject({
      command: z
        .string()
        .min(1)
        .optional()
        .describe("A command line run by `/bin/sh -c`, e.g. `npm test 2>&1 | tail -n 50`."),
      argv: z
        .array(z.string())
        .min(1)
        .optional()
        .describe('Program and arguments, run without a shell, e.g. ["git", "status"].'),
      cwd: z
        .string()
        .default(".")
        .describe("Working folder relative to the workspace root (default `.`)."),
      timeoutMs: z
        .number()
        .int()
        .min(1)
        .max(limits.shellMaxTimeoutMs)
        .optional()
        .describe(`Kill it after this many milliseconds (default ${limits.shellTimeoutMs}).`),
    })
    .refine((p) => (p.command === undefined) !== (p.argv === undefined), {
      message: "give exactly one of `command` or `argv`",
    });
}

/** The environment a command gets: a few basics, never the runtime's secrets, then `extra`. */
export function commandEnvironment(extra: Record<string, string> = {}): Record<string, string> {
  const base: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    LANG: process.env.LANG ?? "C.UTF-8",
    TERM: "dumb",
    NO_COLOR: "1",
  };
  if (process.env.HOME !== undefined) base.HOME = process.env.HOME;
  if (process.env.TMPDIR !== undefined) base.TMPDIR = process.env.TMPDIR;
  return { ...base, ...extra };
}

/** Kills `child`'s whole process group (it leads one: it was spawned detached). Never throws. */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  if (process.platform !== "win32") {
    try {
      process.kill(-child.pid, "SIGKILL");
      return;
    } catch {
      // No such group any more: fall back to the child itself.
    }
  }
  try {
    child.kill("SIGKILL");
  } catch {
    // Already gone.
  }
}

/**
 * Resolves once no process of group `pgid` is alive (zombies waiting for a reaper count as
 * gone), or after `limitMs`. On Linux it reads the group's members from /proc; elsewhere it asks
 * the kernel whether the group still exists.
 */
async function groupGone(pgid: number, limitMs = 2000): Promise<void> {
  if (process.platform === "win32") return;
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    try {
      process.kill(-pgid, 0);
    } catch {
      return;
    }
    if (process.platform === "linux" && !liveMember(pgid)) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** True when a process of group `pgid` is alive (not a zombie), from /proc. */
function liveMember(pgid: number): boolean {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp …: comm may hold spaces and parentheses, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true;
  }
  return false;
}

function run(
  child: ChildProcess,
  what: string,
  timeoutMs: number,
  cap: number,
  context: ToolContext,
): Promise<ShellRunResult> {
  return new Promise((resolve, reject) => {
    const stdout = new OutputBuffer(cap);
    const stderr = new OutputBuffer(cap);
    let streamed = 0;
    let timedOut = false;
    let settled = false;
    let drain: NodeJS.Timeout | undefined;
    const forward = (name: "stdout" | "stderr", buffer: OutputBuffer) => (chunk: Buffer) => {
      buffer.write(chunk);
      if (streamed >= cap) return;
      streamed += chunk.length;
      context.progress({ stream: name, text: chunk.toString("utf8") });
    };
    child.stdout?.on("data", forward("stdout", stdout));
    child.stderr?.on("data", forward("stderr", stderr));
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, timeoutMs);
    const onAbort = () => killGroup(child);
    context.signal.addEventListener("abort", onAbort, { once: true });
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (drain) clearTimeout(drain);
      context.signal.removeEventListener("abort", onAbort);
      outcome();
    };
    child.on("exit", () => {
      // Whatever the command left running in the background goes with it.
      killGroup(child);
      drain = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, DRAIN_MS);
      drain.unref();
    });
    child.on("error", (error) => {
      if (child.pid !== undefined) return;
      finish(() =>
        reject(
          new ToolError(
            "tool.spawn-failed",
            `${what} could not be started (${errnoCode(error) ?? error.message})`,
            {
              cause: error,
              hint: "Check the program name and that it is installed, or use `command` to run it through the shell",
            },
          ),
        ),
      );
    });
    child.on("close", async (code, signal) => {
      // SIGKILL is delivered asynchronously: resolve once nothing of the group runs any more.
      if (child.pid !== undefined) await groupGone(child.pid);
      finish(() => {
        if (context.signal.aborted) {
          reject(abortedError(`shell.run of ${what}`));
          return;
        }
        resolve({
          exitCode: code,
          signal,
          timedOut,
          stdout: stdout.text(),
          stderr: stderr.text(),
          stdoutTruncated: stdout.truncated,
          stderrTruncated: stderr.truncated,
        });
      });
    });
  });
}

/**
 * `shell.run`: runs a command line (through `/bin/sh -c`) or an argv (no shell) in a workspace
 * folder, with a small environment, stdin closed, stdout/stderr capped (head and tail kept) and
 * streamed as progress. The command leads its own process group; the group is killed with
 * SIGKILL on timeout, on abort (the action's signal) and when the command exits, so nothing it
 * started outlives the call. Off unless `enabled`. Side effects; not idempotent.
 */
export function shellRunTool({ enabled, env, workspace, limits }: ShellRunOptions) {
  const environment = commandEnvironment(env);
  return defineTool({
    name: "shell.run",
    description: enabled
      ? "Runs a shell command (or an argv without a shell) in the workspace and returns its exit code, stdout and stderr. " +
        `Killed after timeoutMs (default ${limits.shellTimeoutMs} ms); output is capped at ${limits.shellOutputBytes} bytes per stream.`
      : "Runs a shell command in the workspace. It is turned off for this agent: calls fail until the operator sets `tools.shell.run.enabled: true`.",
    parameters: parameters(limits),
    idempotent: false,
    sideEffects: true,
    async execute(input, context): Promise<ShellRunResult> {
      if (!enabled) {
        throw new ToolError("tool.shell-disabled", "shell.run is turned off for this agent", {
          hint: "Use the fs tools instead, or ask the operator to set `tools.shell.run.enabled: true` in the agent manifest",
        });
      }
      const cwd = await workspace.resolve(input.cwd);
      try {
        if (!(await stat(cwd.real)).isDirectory()) {
          throw new ToolError("tool.not-directory", `cwd \`${cwd.relative}\` is not a folder`, {
            hint: "Give a folder relative to the workspace root as `cwd`",
          });
        }
      } catch (error) {
        throw toFsToolError(error, cwd.relative);
      }
      if (context.signal.aborted) throw abortedError("shell.run");
      const common = {
        cwd: cwd.real,
        env: environment,
        detached: process.platform !== "win32",
        stdio: ["ignore", "pipe", "pipe"] as ["ignore", "pipe", "pipe"],
        windowsHide: true,
      };
      const argv = input.argv ?? [];
      const child =
        input.command !== undefined
          ? spawn(input.command, { ...common, shell: true })
          : spawn(argv[0] as string, argv.slice(1), common);
      const what = input.command !== undefined ? "the command" : `\`${argv[0]}\``;
      return run(
        child,
        what,
        input.timeoutMs ?? limits.shellTimeoutMs,
        limits.shellOutputBytes,
        context,
      );
    },
  });
}
