/**
 * Helpers of the end-to-end CLI tests (test/cli-chat-e2e.test.ts, test/cli-run-e2e.test.ts):
 * `spool` as a real process (on a pseudo-terminal or on pipes) in a fresh workspace, with no
 * provider key in its environment, and a way to wait for what it shows without sleeping.
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { openEventStore } from "../../src/log/index.js";
import { PROVIDER_VARIABLES } from "../../src/providers/index.js";
import { type EventOf, type EventType, isEvent, type SpoolEvent } from "../../src/spec/index.js";
import { screenOf } from "./chat-fakes.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const ENTRY = join(root, "src", "cli", "entry.ts");
// The workspace is the child's cwd, where a bare `--import tsx` would not resolve.
const TSX = pathToFileURL(createRequire(join(root, "package.json")).resolve("tsx")).href;

/** util-linux `script` gives a command a real pseudo-terminal: `script -qfec "cmd" /dev/null`. */
export const hasScript = spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0;

/**
 * Variables that would pick a provider, or change where the log lives or how it is shown. Every
 * provider variable is cleared: any one set makes a provider-less run a configuration error.
 */
const CLEARED = [
  ...PROVIDER_VARIABLES,
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "OPENAI_BASE_URL",
  "SPOOL_PROVIDER",
  "SPOOL_MODEL",
  "SPOOL_API_KEY",
  "SPOOL_BASE_URL",
  "SPOOL_SCRIPT",
  "SPOOL_SCRIPT_TOKEN_MS",
  "SPOOL_DB",
  "SPOOL_KEYS",
  "SPOOL_DEBUG",
  "NO_COLOR",
  "FORCE_COLOR",
  "COLUMNS",
] as const;

/** A fresh workspace (the child's cwd, where `.spool/` is created) and an empty home beside it. */
export interface Workspace {
  dir: string;
  home: string;
  /** The environment of a child: no provider key, HOME here, plus `extra`. */
  env(extra?: Record<string, string>): Record<string, string | undefined>;
  remove(): void;
}

/**
 * `fixed` is part of every environment the workspace gives (before `env`'s `extra`): a test runs
 * its whole corpus with `SPOOL_DURABILITY=fast` so.
 */
export function createWorkspace(prefix: string, fixed: Record<string, string> = {}): Workspace {
  const base = mkdtempSync(join(tmpdir(), prefix));
  const dir = join(base, "workspace");
  const home = join(base, "home");
  mkdirSync(dir);
  mkdirSync(home);
  return {
    dir,
    home,
    env(extra = {}) {
      const env: Record<string, string | undefined> = { ...process.env };
      for (const name of CLEARED) delete env[name];
      return { ...env, HOME: home, USER: "tester", TERM: "xterm-256color", ...fixed, ...extra };
    },
    remove: () => rmSync(base, { recursive: true, force: true }),
  };
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'"'"'`)}'`;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: it matches terminal control sequences
const CONTROL = /\x1b\[[0-9;?]*[A-Za-z~]|\x1b\[[0-9;?]*$|\r/g;

/** Text as a person reads it off the terminal: CSI sequences and carriage returns removed. */
export function plainText(screen: string): string {
  return screen.replace(CONTROL, "");
}

/** A running `spool`, with what it has shown so far. */
export interface SpoolProcess {
  child: ChildProcessWithoutNullStreams;
  /** Exit code and signal, once the process has closed its output. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything written to the terminal (stdout then stderr as they came, escapes included). */
  readonly screen: string;
  readonly stdout: string;
  readonly stderr: string;
  /** `screen` without control sequences. */
  plain(): string;
  /**
   * What the terminal shows (`screenOf` of `screen`, 160 columns): the lines as a person sees
   * them once the cursor movements and erasures are applied.
   */
  lines(): string[];
  /** A position in `plain()`, to wait for something shown after it. */
  mark(): number;
  /**
   * Resolves once `needle` (a string, or a pattern) shows in `plain()` at or after `from`; rejects
   * with the screen if the process exits first or nothing shows within `deadlineMs`.
   */
  shows(needle: string | RegExp, from?: number, deadlineMs?: number): Promise<void>;
  /**
   * Resolves once the terminal shows `needle` (matched against `lines()` joined by newlines);
   * rejects with what it shows if the process exits first or it does not within `deadlineMs`.
   */
  showsOnScreen(needle: string | RegExp, deadlineMs?: number): Promise<void>;
  /** Sends keys (or input) to the process. */
  type(keys: string): void;
  /** SIGKILLs it if it is still running (cleanup). */
  kill(): void;
}

/** Options of the spawning functions. */
export interface SpawnOptions {
  cwd: string;
  env: Record<string, string | undefined>;
}

/** `spool args` on a real pseudo-terminal 160 columns wide. */
export function spoolOnPty(args: readonly string[], options: SpawnOptions): SpoolProcess {
  const node = [process.execPath, "--import", TSX, ENTRY, ...args].map(shellQuote).join(" ");
  // `script` without a terminal on its own stdin leaves the pty 0 columns wide: give it a size.
  const child = spawn("script", ["-qfec", `stty cols 160 rows 40; exec ${node}`, "/dev/null"], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  return watch(child);
}

/** `spool args` on pipes (stdin, stdout and stderr are not terminals). */
export function spoolOnPipes(args: readonly string[], options: SpawnOptions): SpoolProcess {
  const child = spawn(process.execPath, ["--import", TSX, ENTRY, ...args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  return watch(child);
}

/**
 * `spool args` on pipes from a bundle of `src/cli/entry.ts` (`bundleScript`): the same program
 * without tsx's start-up cost, for tests that start many processes.
 */
export function spoolBundled(
  bundle: { args: readonly string[] },
  args: readonly string[],
  options: SpawnOptions,
): SpoolProcess {
  const child = spawn(process.execPath, [...bundle.args, ...args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  return watch(child);
}

/** Runs `spool args` on pipes with stdin closed, to its end. */
export async function runSpoolProcess(
  args: readonly string[],
  options: SpawnOptions,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const spool = spoolOnPipes(args, options);
  spool.child.stdin.end();
  const { code } = await spool.exited;
  return { code, stdout: spool.stdout, stderr: spool.stderr };
}

function watch(child: ChildProcessWithoutNullStreams): SpoolProcess {
  let screen = "";
  let stdout = "";
  let stderr = "";
  let closed: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const waiting = new Set<() => void>();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
    (resolve, reject) => {
      child.once("error", reject);
      child.once("close", (code, signal) => {
        closed = { code, signal };
        for (const check of [...waiting]) check();
        resolve(closed);
      });
    },
  );
  const onData = (kind: "out" | "err") => (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    screen += text;
    if (kind === "out") stdout += text;
    else stderr += text;
    for (const check of [...waiting]) check();
  };
  child.stdout.on("data", onData("out"));
  child.stderr.on("data", onData("err"));
  // A child that exits before reading what it was sent must not fail the test with EPIPE.
  child.stdin.on("error", () => {});
  const plain = () => plainText(screen);
  const lines = () => screenOf(screen, 160);
  const matches = (text: string, needle: string | RegExp) =>
    typeof needle === "string" ? text.includes(needle) : needle.test(text);
  /** Resolves once `found()` is true, as the process writes; `shown()` says what it showed. */
  const waitFor = (found: () => boolean, what: string, shown: () => string, deadlineMs: number) => {
    if (found()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const done = () => {
        waiting.delete(check);
        clearTimeout(deadline);
      };
      const check = () => {
        if (found()) {
          done();
          resolve();
        } else if (closed) {
          done();
          reject(
            new Error(
              `spool exited (${closed.code ?? closed.signal}) before showing ${what}:\n${shown()}`,
            ),
          );
        }
      };
      const deadline = setTimeout(() => {
        waiting.delete(check);
        reject(new Error(`spool did not show ${what} in ${deadlineMs} ms:\n${shown()}`));
      }, deadlineMs);
      waiting.add(check);
    });
  };
  return {
    child,
    exited,
    get screen() {
      return screen;
    },
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    plain,
    lines,
    mark: () => plain().length,
    shows: (needle, from = 0, deadlineMs = 45_000) =>
      waitFor(() => matches(plain().slice(from), needle), String(needle), plain, deadlineMs),
    showsOnScreen: (needle, deadlineMs = 45_000) =>
      waitFor(
        () => matches(lines().join("\n"), needle),
        `${String(needle)} on its screen`,
        () => lines().join("\n"),
        deadlineMs,
      ),
    type: (keys) => {
      child.stdin.write(keys);
    },
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}

/** Whether a process holds the continuity's lease of the workspace's store live. */
export async function leaseLive(workspace: string, continuity: string): Promise<boolean> {
  const store = await openEventStore({ db: join(workspace, ".spool"), env: {} });
  try {
    return (await store.lease(continuity))?.live === true;
  } finally {
    await store.close();
  }
}

/**
 * Resolves once no process holds the continuity's lease live (a killed owner's lease lapses after
 * its time to live), checking every 100 ms; rejects after `timeoutMs`.
 */
export async function leaseLapsed(
  workspace: string,
  continuity: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (await leaseLive(workspace, continuity)) {
    if (Date.now() > deadline) throw new Error(`the lease of ${continuity} never lapsed`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Every event of `continuity` in the workspace's store (`.spool/`). */
export async function readEvents(workspace: string, continuity: string): Promise<SpoolEvent[]> {
  const store = await openEventStore({ db: join(workspace, ".spool") });
  try {
    const events: SpoolEvent[] = [];
    for await (const event of store.read({ continuity })) events.push(event);
    return events;
  } finally {
    await store.close();
  }
}

/** The events of one type, typed. */
export function eventsOf<T extends EventType>(
  events: readonly SpoolEvent[],
  type: T,
): EventOf<T>[] {
  return events.filter((event): event is EventOf<T> => isEvent(event, type));
}
