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

/** An in-memory stdout/stderr that collects what is written and can be awaited for a piece of text. */
export function awaitableOutput(isTTY = false, columns?: number) {
  let text = "";
  const waiting: { needle: string; resolve: () => void }[] = [];
  return {
    isTTY,
    columns,
    write(chunk: string) {
      text += chunk;
      for (const waiter of [...waiting]) {
        if (text.includes(waiter.needle)) {
          waiting.splice(waiting.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
      return true;
    },
    get text() {
      return text;
    },
    /** Resolves once `needle` has been written. */
    until(needle: string): Promise<void> {
      if (text.includes(needle)) return Promise.resolve();
      return new Promise((resolve) => waiting.push({ needle, resolve }));
    },
  };
}
