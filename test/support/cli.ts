import type { CliIo } from "../../src/cli/main.js";
import { main } from "../../src/cli/main.js";

/** An in-memory stdout or stderr that is not a terminal. */
export function memoryOutput() {
  let text = "";
  return {
    isTTY: false,
    write(chunk: string) {
      text += chunk;
      return true;
    },
    get text() {
      return text;
    },
  };
}

/** Options of `runSpool`. */
export interface RunSpoolOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  /** What the command reads as standard input. */
  stdin?: (string | Uint8Array)[];
  signal?: AbortSignal;
}

/** Runs `spool args` in-process against in-memory streams; resolves with the exit code and output. */
export async function runSpool(args: string[], options: RunSpoolOptions) {
  const stdout = memoryOutput();
  const stderr = memoryOutput();
  const stdin = options.stdin;
  const io: CliIo = {
    stdout,
    stderr,
    env: options.env ?? {},
    cwd: options.cwd,
    ...(stdin
      ? {
          stdin: (async function* () {
            yield* stdin;
          })(),
        }
      : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  const code = await main(args, io);
  return { code, stdout: stdout.text, stderr: stderr.text };
}
