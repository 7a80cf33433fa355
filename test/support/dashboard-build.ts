/**
 * The built dashboard for the dashboard tests: `dist/web/` when it is newer than every file of
 * `web/`, else a fresh build into the test's own folder (through Vite's build API), so a stale or
 * missing build is never what a test checks, and two test files never write the same folder.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const WEB = join(root, "web");
const DIST = join(root, "dist", "web");

/** The newest modification time (ms) under `dir`. */
function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

/** A folder holding the current dashboard build; builds into `scratch` when `dist/web` is stale. */
export async function dashboardBuild(scratch: string): Promise<string> {
  const index = join(DIST, "index.html");
  if (existsSync(index) && statSync(index).mtimeMs >= newest(WEB)) return DIST;
  const outDir = join(scratch, "web");
  const { build } = await import("vite");
  await build({
    configFile: join(WEB, "vite.config.ts"),
    root: WEB,
    logLevel: "error",
    build: { outDir, emptyOutDir: true },
  });
  return outDir;
}
