#!/usr/bin/env node
/**
 * Completes package-lock.json with the platform-specific optional packages that the registry
 * reachable here does not serve (Biome's and Rollup's builds for other systems answer 404).
 * npm leaves an optional dependency it cannot fetch out of the lockfile, and `npm ci` then refuses
 * the lockfile as out of sync. Each missing package gets an entry with its os, cpu and libc, read
 * from its name; `npm ci` skips such packages on other platforms without fetching them.
 *
 * Runs after `npm install` (the `postinstall` script); safe to run any number of times.
 * `--check` exits 1 when entries are missing instead of writing them.
 */
import { readFileSync, writeFileSync } from "node:fs";

const OS = [
  "android",
  "darwin",
  "linux",
  "win32",
  "freebsd",
  "openbsd",
  "netbsd",
  "openharmony",
  "sunos",
  "aix",
];
const CPU = ["arm64", "x64", "ia32", "loong64", "ppc64", "riscv64", "s390x", "mips64el", "arm"];

const path = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(path, "utf8"));
const packages = lock.packages ?? {};
const added = [];
const unknown = [];

for (const [key, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const location = `node_modules/${name}`;
    if (packages[location] || packages[`${key}/${location}`]) continue;
    const platform = platformOf(name);
    if (!platform) {
      unknown.push(name);
      continue;
    }
    packages[location] = {
      version,
      ...(platform.cpu ? { cpu: [platform.cpu] } : {}),
      ...(entry.dev ? { dev: true } : {}),
      ...(platform.libc ? { libc: [platform.libc] } : {}),
      optional: true,
      os: [platform.os],
    };
    added.push(`${name}@${version}`);
  }
}

if (unknown.length > 0) {
  console.error(
    `complete-lockfile: cannot tell the platform of ${unknown.join(", ")}; add them by hand`,
  );
  process.exitCode = 1;
}
if (process.argv.includes("--check")) {
  if (added.length > 0) {
    console.error(
      `complete-lockfile: ${added.length} optional platform packages missing; run npm run lock:complete`,
    );
    process.exitCode = 1;
  }
} else if (added.length > 0) {
  lock.packages = Object.fromEntries(
    Object.entries(packages).sort(([a], [b]) =>
      a === "" ? -1 : b === "" ? 1 : a.localeCompare(b),
    ),
  );
  writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(
    `complete-lockfile: added ${added.length} optional platform packages to package-lock.json`,
  );
}

/** `cli-darwin-arm64` → darwin/arm64; `rollup-linux-arm-musleabihf` → linux/arm/musl. */
function platformOf(name) {
  const parts = name.split("/").pop().split("-");
  const os = parts.find((part) => OS.includes(part));
  if (!os) return undefined;
  const cpu = parts.find((part) => CPU.includes(part));
  const tail = parts.slice(parts.indexOf(os) + 1).join("-");
  const libc =
    os !== "linux"
      ? undefined
      : /musl/.test(tail)
        ? "musl"
        : /gnu/.test(tail)
          ? "glibc"
          : undefined;
  return { os, cpu, libc };
}
