#!/usr/bin/env node
// Keeps the module boundaries of ARCHITECTURE.md: a module imports another only through that
// module's `index.ts`, and only modules below it in LAYERS (dependencies point one way).
// Run by `npm run lint`; prints each offending import with its line and exits 1.
// One exception: a plain-JavaScript file (code a worker thread runs as it is, with no TypeScript
// loader) imports another module's plain-JavaScript file directly, as an index.ts cannot load there.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The modules of `src/`, lowest first: each may import only the ones before it. */
const LAYERS = [
  "spec",
  "log",
  "protocol",
  "actions",
  "tools",
  "feeds",
  "providers",
  "transcript",
  "relics",
  "workflows",
  "directives",
  "hooks",
  "continuity",
  "sources",
  "browser",
  "frames",
  "memory",
  "mcp",
  "telemetry",
  "runtime",
  "replay",
  "replay",
  "app",
  "server",
  "cli",
];

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "src");
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)"(\.{1,2}\/[^"]+)"/gm;

/** Every `.ts`/`.js` file under `dir`. */
function sourceFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|js)$/.test(name) ? [path] : [];
  });
}

/** The module (first folder under `src/`) of a path, or undefined for `src/index.ts` itself. */
function moduleOf(path) {
  const parts = relative(root, path).split("/");
  return parts.length > 1 ? parts[0] : undefined;
}

const problems = [];
for (const file of sourceFiles(root)) {
  const from = moduleOf(file);
  if (from === undefined) continue;
  const text = readFileSync(file, "utf8");
  for (const match of text.matchAll(IMPORT)) {
    const target = resolve(dirname(file), match[1]);
    const to = moduleOf(target);
    if (to === undefined || to === from) continue;
    const line = text.slice(0, match.index).split("\n").length;
    const where = `src/${relative(root, file)}:${line}`;
    const typescript = existsSync(target.replace(/\.js$/, ".ts"));
    if (file.endsWith(".js") && typescript) {
      problems.push(
        `${where}: plain JavaScript (run with no TypeScript loader) imports TypeScript`,
      );
      continue;
    }
    const plain = file.endsWith(".js");
    if (relative(root, target) !== `${to}/index.js` && !plain) {
      problems.push(`${where}: imports ${match[1]}; import ${to}'s index.js and export it there`);
    }
    const [rankFrom, rankTo] = [LAYERS.indexOf(from), LAYERS.indexOf(to)];
    if (rankFrom < 0 || rankTo < 0) {
      const unknown = rankFrom < 0 ? from : to;
      problems.push(
        `${where}: module ${unknown} is not in LAYERS of scripts/check-module-imports.mjs`,
      );
    } else if (rankTo > rankFrom) {
      problems.push(`${where}: ${from} imports ${to}, which is above it (dependencies point down)`);
    }
  }
}

if (problems.length > 0) {
  console.error(`Module boundaries (ARCHITECTURE.md) broken in ${problems.length} imports:`);
  for (const problem of problems) console.error(`  ${problem}`);
  process.exit(1);
}
