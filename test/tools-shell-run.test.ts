import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AnyTool, ToolContext } from "../src/actions/index.js";
import { type BuiltinToolOptions, builtinTools, type ShellRunResult } from "../src/tools/index.js";

let workspace: string;

function shell(options: Partial<BuiltinToolOptions> = {}): AnyTool {
  return builtinTools({ workspace, shell: { enabled: true }, ...options }).find(
    (tool) => tool.name === "shell.run",
  )!;
}

function run(
  tool: AnyTool,
  parameters: unknown,
  signal = new AbortController().signal,
  progress: (data: unknown) => void = () => {},
): Promise<ShellRunResult> {
  const context: ToolContext = { actionId: "a", attempt: 1, signal, progress };
  return Promise.resolve(
    tool.execute(tool.parameters.parse(parameters), context),
  ) as Promise<ShellRunResult>;
}

/** Whether `pid` is a live process (a zombie waiting to be reaped is not). */
function isRunning(pid: number): boolean {
  if (process.platform === "linux") {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      return state !== "Z" && state !== "X";
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function pids(text: string): number[] {
  return text
    .split("\n")
    .filter((line) => /^\d+$/.test(line))
    .map(Number);
}

beforeEach(async () => {
  workspace = await mkdtemp(path.join(tmpdir(), "spool-shell-"));
});

afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

describe("shell.run", () => {
  it("is off by default and says how to turn it on", async () => {
    const tool = builtinTools({ workspace }).find((candidate) => candidate.name === "shell.run")!;
    expect(tool.description).toContain("tools.shell.run.enabled: true");
    await expect(run(tool, { command: "echo hi" })).rejects.toMatchObject({
      code: "tool.shell-disabled",
      retryable: false,
      message: expect.stringContaining("`tools.shell.run.enabled: true` in the agent manifest"),
    });
  });

  it("runs a command line and returns exit code, stdout and stderr", async () => {
    await expect(run(shell(), { command: "echo out; echo err >&2; exit 3" })).resolves.toEqual({
      exitCode: 3,
      signal: null,
      timedOut: false,
      stdout: "out\n",
      stderr: "err\n",
      stdoutTruncated: false,
      stderrTruncated: false,
    });
  });

  it("runs an argv without a shell, in a workspace folder", async () => {
    await mkdir(path.join(workspace, "sub"));
    const result = await run(shell(), {
      argv: [process.execPath, "-e", "process.stdout.write(process.cwd() + ' $HOME')"],
      cwd: "sub",
    });
    expect(result.stdout).toBe(`${await realpath(path.join(workspace, "sub"))} $HOME`);
  });

  it("gives commands a small environment plus the configured variables", async () => {
    process.env.SPOOL_TEST_SECRET = "do-not-leak";
    try {
      const result = await run(shell({ shell: { enabled: true, env: { GREETING: "hey" } } }), {
        command: 'echo "$GREETING [$SPOOL_TEST_SECRET]"',
      });
      expect(result.stdout).toBe("hey []\n");
    } finally {
      delete process.env.SPOOL_TEST_SECRET;
    }
  });

  it("keeps the head and tail of long output and flags it", async () => {
    const tool = shell({ limits: { shellOutputBytes: 20 } });
    const result = await run(tool, {
      argv: [process.execPath, "-e", "process.stdout.write('A'.repeat(500) + 'Z'.repeat(500))"],
    });
    expect(result.stdoutTruncated).toBe(true);
    expect(result.stdout).toBe(`${"A".repeat(10)}\n… [980 bytes omitted] …\n${"Z".repeat(10)}`);
  });

  it("kills the whole process group when its timeout passes", async () => {
    const result = await run(shell(), { command: "sleep 30 & echo $!; wait", timeoutMs: 300 });
    expect(result).toMatchObject({ timedOut: true, exitCode: null, signal: "SIGKILL" });
    const [sleeper] = pids(result.stdout);
    expect(sleeper).toBeGreaterThan(0);
    expect(isRunning(sleeper!)).toBe(false);
  });

  it("kills the whole process group when its signal is aborted", async () => {
    const controller = new AbortController();
    let seen = "";
    let started: () => void = () => {};
    const bothStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const pending = run(
      shell(),
      { command: "sleep 30 & echo $!; echo $$; wait" },
      controller.signal,
      (data) => {
        seen += (data as { text: string }).text;
        if (pids(seen).length === 2) started();
      },
    );
    await bothStarted;
    const [sleeper, shellPid] = pids(seen);
    expect(isRunning(sleeper!) && isRunning(shellPid!)).toBe(true);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: "tool.aborted", retryable: true });
    expect(isRunning(sleeper!)).toBe(false);
    expect(isRunning(shellPid!)).toBe(false);
  });

  it("kills what a command leaves running in the background when it exits", async () => {
    const result = await run(shell(), { command: "sleep 30 & echo $!" });
    expect(result.exitCode).toBe(0);
    expect(isRunning(pids(result.stdout)[0]!)).toBe(false);
  });

  it("reports a program that cannot be started", async () => {
    await expect(run(shell(), { argv: ["spool-no-such-program"] })).rejects.toMatchObject({
      code: "tool.spawn-failed",
      message: expect.stringContaining("`spool-no-such-program` could not be started (ENOENT)"),
    });
  });

  it("confines cwd to the workspace", async () => {
    await expect(run(shell(), { command: "pwd", cwd: ".." })).rejects.toMatchObject({
      code: "tool.path-outside-workspace",
    });
  });

  it("takes exactly one of command and argv", () => {
    const tool = shell();
    expect(tool.parameters.safeParse({}).success).toBe(false);
    expect(tool.parameters.safeParse({ command: "a", argv: ["b"] }).success).toBe(false);
  });

  it("declares side effects and is not idempotent", () => {
    expect({ sideEffects: shell().sideEffects, idempotent: shell().idempotent }).toEqual({
      sideEffects: true,
      idempotent: false,
    });
  });
});
