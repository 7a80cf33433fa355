/**
 * The processes of a test's Chromium, found in /proc (Linux), for tests that kill them: the
 * browser process of a workspace's profile, and the renderers under it.
 */
import { readdirSync, readFileSync } from "node:fs";

/** The pid of this harness's Chromium: the browser process (no --type) using its profile. */
export function chromiumPid(workspace: string): number {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    const ours = args.some((arg) => arg.startsWith("--user-data-dir=") && arg.includes(workspace));
    if (ours && !args.some((arg) => arg.startsWith("--type="))) return Number(entry);
  }
  throw new Error("the harness's Chromium is not running");
}

/** The renderer processes under Chromium `browser` (children of its zygotes, or its own). */
export function renderers(browser: number): number[] {
  const parent = new Map<number, number>();
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
      // A zygote's child rewrites its command line as one string: look for the flag in it.
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes("--type=renderer")) {
        found.push(Number(entry));
      }
    } catch {}
  }
  const under = (pid: number): boolean => {
    for (let at = parent.get(pid); at !== undefined && at > 1; at = parent.get(at)) {
      if (at === browser) return true;
    }
    return false;
  };
  const ours = found.filter(under);
  if (ours.length === 0) throw new Error("no renderer of the harness's Chromium is running");
  return ours;
}
