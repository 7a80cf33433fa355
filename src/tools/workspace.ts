import { constants } from "node:fs";
import { lstat, readlink, realpath } from "node:fs/promises";
import path from "node:path";
import { errnoCode, ToolError, toFsToolError } from "./tool-error.js";

/** Open flags that refuse a symbolic link as the last component (0 where the platform lacks it). */
export const O_NOFOLLOW: number = constants.O_NOFOLLOW ?? 0;

/** A path the model gave, checked to lie inside the workspace. */
export interface WorkspacePath {
  /**
   * The path as the model wrote it, normalised: relative to the root, `/`-separated, `.` for the
   * root itself (links inside the workspace are not resolved here).
   */
  relative: string;
  /** The real absolute path: every symbolic link resolved, missing trailing components appended. */
  real: string;
  /** Whether the whole path exists (a dangling link does not). */
  exists: boolean;
}

/**
 * The folder the fs tools (and `shell.run`'s `cwd`) are confined to.
 *
 * Contract: `resolve` accepts only relative paths; it refuses, with `tool.path-outside-workspace`
 * and the reason, a path that climbs out with `..`, an absolute path, and a path whose real
 * location (symbolic links followed in every component, the last one and dangling ones
 * included) lies outside the root. Containment is checked with `realpath` on the deepest existing
 * ancestor. Callers operate on `real`, never on the text they were given.
 */
export interface Workspace {
  /** The root as configured (absolute). */
  readonly root: string;
  /** The root's real path; `tool.workspace-unavailable` when it does not exist. */
  realRoot(): Promise<string>;
  /**
   * Checks `input` and returns where it really is. Throws `ToolError` only. Also refuses, with
   * `tool.path-reserved`, anything in `.spool/` (the runtime's state and keys) and, when
   * `access` is `"write"`, anything in `.git/`, judged on the real path.
   */
  resolve(input: string, access?: "read" | "write"): Promise<WorkspacePath>;
  /** `real` (inside the root) as a `/`-separated path relative to the root. */
  relativeOf(real: string, rootReal: string): string;
}

/** Symbolic links followed while resolving one path before giving up (Linux's own limit). */
const MAX_LINK_HOPS = 40;

interface Settled {
  real: string;
  exists: boolean;
}

function isInside(rootReal: string, candidate: string): boolean {
  if (candidate === rootReal) return true;
  const prefix = rootReal.endsWith(path.sep) ? rootReal : rootReal + path.sep;
  return candidate.startsWith(prefix);
}

function toPosix(relative: string): string {
  return relative === "" ? "." : relative.split(path.sep).join("/");
}

/**
 * The real location of `absolute`, which may not exist yet: `realpath` of the deepest existing
 * ancestor with the missing components appended, following dangling links by hand.
 */
async function settle(absolute: string, hops: { left: number }): Promise<Settled> {
  try {
    return { real: await realpath(absolute), exists: true };
  } catch (error) {
    const code = errnoCode(error);
    if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
  }
  const parent = path.dirname(absolute);
  if (parent === absolute) return { real: absolute, exists: false };
  const base = await settle(parent, hops);
  const candidate = path.join(base.real, path.basename(absolute));
  if (!base.exists) return { real: candidate, exists: false };
  let isLink = false;
  try {
    isLink = (await lstat(candidate)).isSymbolicLink();
  } catch {
    return { real: candidate, exists: false };
  }
  if (!isLink) return { real: candidate, exists: true };
  hops.left -= 1;
  if (hops.left < 0) throw Object.assign(new Error("too many symbolic links"), { code: "ELOOP" });
  const target = await readlink(candidate);
  return settle(path.resolve(base.real, target), hops);
}

function outside(input: string, why: string): ToolError {
  return new ToolError(
    "tool.path-outside-workspace",
    `\`${input}\` is outside the workspace: ${why}`,
    {
      details: { path: input },
      hint: "Use a path relative to the workspace root that stays inside it, e.g. `src/index.ts` or `.`",
    },
  );
}

/** Creates the confinement for `root` (made absolute against the process's working directory). */
export function createWorkspace(root: string): Workspace {
  const absoluteRoot = path.resolve(root);
  let cachedRoot: string | undefined;

  async function realRoot(): Promise<string> {
    if (cachedRoot !== undefined) return cachedRoot;
    try {
      cachedRoot = await realpath(absoluteRoot);
      return cachedRoot;
    } catch (error) {
      throw new ToolError("tool.workspace-unavailable", "the workspace folder cannot be opened", {
        cause: error,
        retryable: true,
        hint: "The operator must create the workspace folder or fix its `workspace` setting",
      });
    }
  }

  /** The first component of `relative` that is a link leading outside, for the message. */
  async function culprit(rootReal: string, relative: string): Promise<string | undefined> {
    const parts = relative.split(path.sep);
    for (let index = 1; index <= parts.length; index += 1) {
      const prefix = parts.slice(0, index).join(path.sep);
      const absolute = path.join(rootReal, prefix);
      try {
        if (!(await lstat(absolute)).isSymbolicLink()) continue;
        const target = await settle(absolute, { left: MAX_LINK_HOPS });
        if (!isInside(rootReal, target.real)) return toPosix(prefix);
      } catch {
        return undefined;
      }
    }
    return undefined;
  }

  async function resolve(input: string, access: "read" | "write" = "read"): Promise<WorkspacePath> {
    if (input.trim() === "") {
      throw new ToolError("tool.bad-path", "the path is empty", {
        hint: "Give a path relative to the workspace root; `.` is the root itself",
      });
    }
    if (input.includes("\0")) {
      throw new ToolError("tool.bad-path", "the path contains a NUL character", {
        hint: "Remove the NUL character from the path",
      });
    }
    if (path.isAbsolute(input) || /^[A-Za-z]:[\\/]/.test(input) || input.startsWith("\\\\")) {
      throw outside(input, "absolute paths are not allowed");
    }
    if (input === "~" || input.startsWith("~/")) {
      throw outside(input, "`~` is not expanded and the home folder is not in the workspace");
    }
    const rootReal = await realRoot();
    const lexical = path.resolve(rootReal, input);
    const relative = path.relative(rootReal, lexical);
    if (relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) {
      throw outside(input, "`..` climbs above the workspace root");
    }
    let settled: Settled;
    try {
      settled = await settle(lexical, { left: MAX_LINK_HOPS });
    } catch (error) {
      throw toFsToolError(error, toPosix(relative));
    }
    if (!isInside(rootReal, settled.real)) {
      const link = await culprit(rootReal, relative);
      throw outside(
        input,
        link
          ? `\`${link}\` is a symbolic link to a place outside the workspace`
          : "it resolves, through a symbolic link, to a place outside the workspace",
      );
    }
    const top = toPosix(path.relative(rootReal, settled.real)).split("/")[0];
    if (top === ".spool" || (access === "write" && top === ".git")) {
      throw new ToolError(
        "tool.path-reserved",
        `\`${input}\` is inside \`${top}/\`, which the tools do not ${access === "write" ? "write" : "touch"}`,
        {
          details: { path: input },
          hint:
            top === ".spool"
              ? "`.spool/` holds the runtime's own state and keys; work on other files"
              : "Change the repository with git commands (shell.run) rather than by editing `.git/`",
        },
      );
    }
    return {
      relative: toPosix(relative),
      real: settled.real,
      exists: settled.exists,
    };
  }

  return {
    root: absoluteRoot,
    realRoot,
    resolve,
    relativeOf: (real, rootReal) => toPosix(path.relative(rootReal, real)),
  };
}
