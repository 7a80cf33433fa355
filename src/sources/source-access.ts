import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { SpoolError, type SpoolErrorOptions } from "../spec/index.js";
import { createGlobMatcher, isHostAllowed, parseAllowHosts } from "../tools/index.js";
import { SOURCE_SCHEMES } from "./source-definition.js";
import type { SourceDefinition } from "./source-types.js";

/** Where sources may read, as the agent's manifest and tools allow. */
export interface SourceAccessPolicy {
  /** The workspace, absolute: file and dataset sources read inside it. */
  workspace: string;
  /** Paths or globs beyond the workspace (`source_actions.allow_paths`); relative ones from the workspace. */
  allowPaths: string[];
  /** Hosts network sources may reach (`source_actions.allow_hosts`, `http.fetch` rules plus `host:*`). */
  allowHosts: string[];
  /** Whether the agent has `shell.run`: only then may a command source run. */
  shell: boolean;
}

/** What a definition may read, resolved: a real path, a command and its folder, or a URL. */
export type SourceAccess =
  | { kind: "file" | "dataset"; path: string }
  | { kind: "command"; command: string; cwd: string }
  | { kind: "http" | "sse" | "websocket"; url: URL }
  | { kind: "browser"; relic: string };

/** Codes of `SourceAccessError`. */
export type SourceAccessErrorCode = "source.denied" | "source.bad-target";

/**
 * A source may not read its target (`source.denied`: outside the workspace, a host not allowed,
 * a command without `shell.run`) or its target cannot be read at all (`source.bad-target`). The
 * message says what to add to the manifest, with an example.
 */
export class SourceAccessError extends SpoolError {
  declare readonly code: SourceAccessErrorCode;

  constructor(code: SourceAccessErrorCode, message: string, options: SpoolErrorOptions = {}) {
    super(code, message, options);
  }
}

/**
 * Where `definition` may read under `policy`, or throws `SourceAccessError`.
 *
 * - file, dataset: the target resolved against the workspace, symlinks resolved (`realpath` of
 *   the path, or of its nearest existing parent when it does not exist yet); it must lie inside
 *   the (real) workspace or match an `allowPaths` entry: a path allows itself and everything under
 *   it, a glob (`/var/log/**`) is matched by the tools' glob matcher against the real path.
 * - command: only when `shell`; it runs in the workspace, or in `options.cwd` confined like a path.
 * - http, sse (`http:`/`https:`) and websocket (`ws:`/`wss:`): the host and port must be allowed
 *   by `allowHosts`, as `http.fetch` checks them (a `wss:` URL without a port connects to 443).
 *
 * - browser: the page events of the relic the target names, always (the relic enforces its hosts).
 *
 * Reads the file system (`realpath`) but never opens the target.
 */
export function checkSourceAccess(
  definition: SourceDefinition,
  policy: SourceAccessPolicy,
): SourceAccess {
  const { kind } = definition;
  if (kind === "file" || kind === "dataset")
    return { kind, path: confinePath(definition, definition.target, policy) };
  if (kind === "command") {
    if (!policy.shell) {
      throw new SourceAccessError(
        "source.denied",
        `source "${definition.id}" runs a command, but the agent may not run commands`,
        {
          hint: "Give the agent the shell.run tool (tools: [shell.run]) or read the command's output from a file source",
          details: { source: definition.id },
        },
      );
    }
    const cwd = definition.options.cwd;
    return {
      kind,
      command: definition.target,
      cwd:
        typeof cwd === "string"
          ? confinePath(definition, cwd, policy)
          : realOrSelf(resolve(policy.workspace)),
    };
  }
  // The browser relic checks every request it makes against its own host policy.
  if (kind === "browser") return { kind, relic: definition.target };
  return { kind, url: checkUrl(definition, policy) };
}

function checkUrl(definition: SourceDefinition, policy: SourceAccessPolicy): URL {
  const schemes = SOURCE_SCHEMES[definition.kind] ?? [];
  let url: URL;
  try {
    url = new URL(definition.target);
  } catch {
    throw new SourceAccessError(
      "source.bad-target",
      `source "${definition.id}": its target is not an absolute URL`,
      {
        hint: `Write a ${schemes.map((scheme) => `${scheme}//`).join(" or ")} URL, e.g. ${schemes[0]}//127.0.0.1:8080/feed`,
        details: { source: definition.id },
      },
    );
  }
  if (!schemes.includes(url.protocol)) {
    throw new SourceAccessError(
      "source.bad-target",
      `source "${definition.id}" (${definition.kind}) cannot read ${url.protocol}// URLs`,
      {
        hint: `Write a ${schemes.map((scheme) => `${scheme}//`).join(" or ")} URL`,
        details: { source: definition.id },
      },
    );
  }
  // The allow-list's default ports are http's; a ws URL connects where its http twin would.
  const probe = new URL(url.href.replace(/^ws(s?):/, "http$1:"));
  if (!isHostAllowed(parseAllowHosts(policy.allowHosts, "source_actions.allow_hosts"), probe)) {
    const host = `${url.hostname}${url.port ? `:${url.port}` : ""}`;
    throw new SourceAccessError(
      "source.denied",
      `source "${definition.id}" may not reach ${host}: it is not in source_actions.allow_hosts`,
      {
        hint: `Add it to source_actions.allow_hosts in the agent manifest, e.g. allow_hosts: ["${host}"]`,
        details: { source: definition.id, host },
      },
    );
  }
  return url;
}

/** `target`'s real path when the workspace or `allowPaths` allow it; throws otherwise. */
function confinePath(
  definition: SourceDefinition,
  target: string,
  policy: SourceAccessPolicy,
): string {
  if (target.trim() === "" || target.includes("\0")) {
    throw new SourceAccessError(
      "source.bad-target",
      `source "${definition.id}": ${JSON.stringify(target)} is not a path`,
      { hint: "Write a path, e.g. target: logs/app.log", details: { source: definition.id } },
    );
  }
  const workspace = realOrSelf(resolve(policy.workspace));
  const path = realPath(resolve(policy.workspace, target));
  if (isInside(workspace, path)) return path;
  if (policy.allowPaths.some((entry) => allows(entry, path, policy.workspace))) return path;
  const example = `${dirname(path)}${sep}**`;
  throw new SourceAccessError(
    "source.denied",
    `source "${definition.id}" may not read ${target}: it resolves to ${path}, outside the workspace ${workspace}`,
    {
      hint: `Add the path to source_actions.allow_paths in the agent manifest, e.g. allow_paths: ["${example}"]`,
      details: { source: definition.id, path, workspace },
    },
  );
}

/** Whether `entry` of `allowPaths` (a path or a glob, relative to `workspace`) allows `path`. */
function allows(entry: string, path: string, workspace: string): boolean {
  const glob = /[*?[{]/.exec(entry);
  if (!glob) return isInside(realPath(resolve(workspace, entry)), path);
  // The literal folder before the first glob character is resolved like the path it is matched
  // against, so an allowed folder reached through a symlink still matches.
  const literal = entry.slice(0, glob.index);
  const cut = literal.lastIndexOf("/") + 1;
  const base = realPath(resolve(workspace, literal.slice(0, cut) || "."));
  const pattern = `${base === "/" ? "" : base}/${entry.slice(cut)}`;
  try {
    return createGlobMatcher(pattern)(path);
  } catch {
    return false;
  }
}

function isInside(folder: string, path: string): boolean {
  const inside = relative(folder, path);
  return (
    inside === "" || (!inside.startsWith(`..${sep}`) && inside !== ".." && !isAbsolute(inside))
  );
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * The real path of `path`, or of its nearest existing parent with the rest appended. A dangling
 * symlink on the way is followed to where it points (a file created there later is read through
 * it), up to 40 links.
 */
function realPath(path: string, links = 0): string {
  let existing = path;
  const rest: string[] = [];
  for (;;) {
    try {
      return join(realpathSync(existing), ...rest);
    } catch {
      let link: string | undefined;
      try {
        if (lstatSync(existing).isSymbolicLink()) link = readlinkSync(existing);
      } catch {
        // Not there at all: try its parent.
      }
      if (link !== undefined && links < 40)
        return join(realPath(resolve(dirname(existing), link), links + 1), ...rest);
      const parent = dirname(existing);
      if (parent === existing) return path;
      rest.unshift(basename(existing));
      existing = parent;
    }
  }
}
