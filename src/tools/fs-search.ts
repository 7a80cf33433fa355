import { constants } from "node:fs";
import { lstat, open } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { defineTool } from "../actions/index.js";
import type { FsToolOptions } from "./fs-read.js";
import { createGlobMatcher } from "./glob.js";
import { looksBinary, SNIFF_BYTES } from "./text-bytes.js";
import { abortedError, ToolError, toFsToolError } from "./tool-error.js";
import { SKIPPED_DIRECTORIES, walkWorkspace } from "./walk.js";
import { O_NOFOLLOW } from "./workspace.js";

/** `fs.search`'s result. */
export interface FsSearchResult {
  /** Each match as `path:line:text`, the path relative to the workspace root. */
  matches: string[];
  /** How many matches `matches` holds (for prose: "found $todos.count notes"). */
  count: number;
  /** True when the match cap or the walk cap stopped the search early. */
  truncated: boolean;
  filesSearched: number;
  /** Files passed over: binary, larger than the per-file cap, or unreadable. */
  filesSkipped: number;
}

/** Characters of a matching line shown in its result. */
const SHOWN_LINE_CHARS = 300;
/** Characters of a line a pattern is tested against: bounds the cost of a costly regex. */
const TESTED_LINE_CHARS = 4096;
/** How deep the search goes below its folder. */
const SEARCH_DEPTH = 64;

const READ_FLAGS = constants.O_RDONLY | O_NOFOLLOW | (constants.O_NONBLOCK ?? 0);

function parameters(cap: number) {
  return z.strictObject({
    pattern: z.string().min(1).describe("The text to look for (a literal string unless `regex`)."),
    regex: z
      .boolean()
      .default(false)
      .describe("Treat `pattern` as a JavaScript regular expression (default false)."),
    caseSensitive: z.boolean().default(true).describe("Match case exactly (default true)."),
    path: z
      .string()
      .default(".")
      .describe("Folder or file to search, relative to the workspace root (default `.`)."),
    glob: z
      .string()
      .min(1)
      .optional()
      .describe("Only files matching this glob, e.g. `*.ts` or `src/**/*.md`."),
    maxResults: z
      .number()
      .int()
      .min(1)
      .max(cap)
      .optional()
      .describe(`Most matches to return (default and cap ${cap}).`),
  });
}

function matcher(
  pattern: string,
  regex: boolean,
  caseSensitive: boolean,
): (line: string) => boolean {
  if (!regex && caseSensitive) return (line) => line.includes(pattern);
  const source = regex ? pattern : pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  let compiled: RegExp;
  try {
    compiled = new RegExp(source, caseSensitive ? "" : "i");
  } catch (error) {
    throw new ToolError(
      "tool.bad-pattern",
      `\`${pattern}\` is not a valid regular expression: ${(error as Error).message}`,
      {
        cause: error,
        hint: "Fix the expression, or set regex to false to search for it literally",
      },
    );
  }
  return (line) => compiled.test(line);
}

/** The lines of `file` (at most `maxBytes`) as text, or undefined when it is to be skipped. */
async function readSearchable(file: string, maxBytes: number): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, READ_FLAGS);
  } catch {
    return undefined;
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile() || stat.size > maxBytes) return undefined;
    const bytes = Buffer.alloc(stat.size);
    const { bytesRead } = await handle.read(bytes, 0, stat.size, 0);
    const content = bytes.subarray(0, bytesRead);
    if (looksBinary(content.subarray(0, SNIFF_BYTES))) return undefined;
    return content.toString("utf8");
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/**
 * `fs.search`: every line matching a literal string or regular expression in the text files
 * under a workspace path, as `path:line:text`, capped at `limits.searchMatches`. Skips binary
 * files, files over `limits.searchFileBytes`, symbolic links and `.git`, `node_modules`,
 * `.spool`. Idempotent, no side effects.
 */
export function fsSearchTool({ workspace, limits }: FsToolOptions) {
  return defineTool({
    name: "fs.search",
    description:
      "Searches text files under a workspace folder for a literal string or regular expression and returns matches as `path:line:text`. " +
      "Filter files with glob; binary files and `.git`, `node_modules`, `.spool` are skipped.",
    parameters: parameters(limits.searchMatches),
    idempotent: true,
    sideEffects: false,
    async execute(input, context): Promise<FsSearchResult> {
      const test = matcher(input.pattern, input.regex, input.caseSensitive);
      const wanted = input.glob ? createGlobMatcher(input.glob) : () => true;
      const cap = input.maxResults ?? limits.searchMatches;
      const base = await workspace.resolve(input.path);
      const result: FsSearchResult = {
        matches: [],
        count: 0,
        truncated: false,
        filesSearched: 0,
        filesSkipped: 0,
      };
      const searchFile = async (absolute: string, relative: string): Promise<boolean> => {
        const text = await readSearchable(absolute, limits.searchFileBytes);
        if (text === undefined) {
          result.filesSkipped += 1;
          return true;
        }
        result.filesSearched += 1;
        const lines = text.split(/\r?\n/);
        for (let index = 0; index < lines.length; index += 1) {
          const line = lines[index] as string;
          if (!test(line.length > TESTED_LINE_CHARS ? line.slice(0, TESTED_LINE_CHARS) : line)) {
            continue;
          }
          if (result.matches.length >= cap) {
            result.truncated = true;
            return false;
          }
          const shown =
            line.length > SHOWN_LINE_CHARS ? `${line.slice(0, SHOWN_LINE_CHARS)}…` : line;
          result.matches.push(`${relative}:${index + 1}:${shown}`);
          result.count += 1;
        }
        return true;
      };

      let isFolder: boolean;
      try {
        isFolder = (await lstat(base.real)).isDirectory();
      } catch (error) {
        throw toFsToolError(error, base.relative);
      }
      if (!isFolder) {
        if (!wanted(path.basename(base.real))) return result;
        await searchFile(base.real, base.relative);
        return result;
      }
      const state = { visited: 0, exhausted: false };
      const walk = walkWorkspace(
        {
          baseReal: base.real,
          baseRelative: base.relative,
          maxDepth: SEARCH_DEPTH,
          maxEntries: limits.walkEntries,
          descend: (entry) => !SKIPPED_DIRECTORIES.has(entry.name),
          signal: context.signal,
        },
        state,
      );
      for await (const entry of walk) {
        if (entry.type !== "file" || !wanted(entry.fromBase)) continue;
        if (context.signal.aborted) throw abortedError(`fs.search in \`${base.relative}\``);
        if (!(await searchFile(entry.absolute, entry.relative))) break;
      }
      result.truncated ||= state.exhausted;
      return result;
    },
  });
}
