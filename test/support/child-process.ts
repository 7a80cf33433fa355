import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** Starts a TypeScript script of the test suite in its own Node process (through tsx). */
export function spawnScript(script: string, args: readonly string[]): ChildProcess {
  return spawn(
    process.execPath,
    ["--import", "tsx", fileURLToPath(new URL(script, import.meta.url)), ...args],
    {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
}

/** Calls `onLine` for each stdout line; resolves with the exit code/signal and stderr. */
export function runToExit(
  child: ChildProcess,
  onLine: (line: string) => void = () => {},
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const lines = createInterface({ input: child.stdout! });
  lines.on("line", onLine);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ code, signal, stderr }));
  });
}
