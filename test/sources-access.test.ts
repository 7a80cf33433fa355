/**
 * Where a source may read: file and dataset targets stay inside the workspace (after resolving
 * `..` and symlinks, dangling ones included) unless allow_paths admits them; network sources
 * reach only allowed hosts and ports with their kind's schemes; commands need shell.run.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  checkSourceAccess,
  checkSourceEntry,
  SourceAccessError,
  type SourceAccessPolicy,
  type SourceDefinition,
  type SourceKind,
} from "../src/sources/index.js";

let root: string;
let workspace: string;
let outside: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "spool-source-access-")));
  workspace = join(root, "ws");
  outside = join(root, "outside");
  mkdirSync(join(workspace, "logs"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.log"), "x\n");
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function definition(kind: SourceKind, target: string, options = {}): SourceDefinition {
  const checked = checkSourceEntry({ id: "src", kind, target, options });
  if (!checked.definition) throw new Error(JSON.stringify(checked.issues));
  return checked.definition;
}

function policy(overrides: Partial<SourceAccessPolicy> = {}): SourceAccessPolicy {
  return { workspace, allowPaths: [], allowHosts: [], shell: false, ...overrides };
}

/** The error `checkSourceAccess` throws, which must be a `SourceAccessError`. */
function refusal(def: SourceDefinition, rules: SourceAccessPolicy): SourceAccessError {
  try {
    checkSourceAccess(def, rules);
  } catch (error) {
    expect(error).toBeInstanceOf(SourceAccessError);
    return error as SourceAccessError;
  }
  throw new Error(`${def.kind} ${def.target} was allowed`);
}

describe("file and dataset targets", () => {
  it("resolve inside the workspace, existing or not", () => {
    expect(checkSourceAccess(definition("file", "logs/app.log"), policy())).toEqual({
      kind: "file",
      path: join(workspace, "logs", "app.log"),
    });
    expect(checkSourceAccess(definition("dataset", "./a/b/../c.jsonl"), policy())).toEqual({
      kind: "dataset",
      path: join(workspace, "a", "c.jsonl"),
    });
  });

  it("refuse ../ and absolute paths out of the workspace, saying what to allow", () => {
    const up = refusal(definition("file", "../outside/secret.log"), policy());
    expect(up.code).toBe("source.denied");
    expect(up.message).toContain(`resolves to ${join(outside, "secret.log")}`);
    expect(up.message).toContain(`allow_paths: ["${outside}/**"]`);
    expect(refusal(definition("file", "/etc/passwd"), policy()).code).toBe("source.denied");
    expect(refusal(definition("file", "logs/../../outside/x"), policy()).code).toBe(
      "source.denied",
    );
  });

  it("refuse a symlink that leads out of the workspace, also a dangling one", () => {
    symlinkSync(outside, join(workspace, "logs", "link"));
    symlinkSync(join(outside, "later.log"), join(workspace, "dangling.log"));
    const linked = refusal(definition("file", "logs/link/secret.log"), policy());
    expect(linked.details.path).toBe(join(outside, "secret.log"));
    expect(refusal(definition("file", "logs/link/new/file.log"), policy()).details.path).toBe(
      join(outside, "new", "file.log"),
    );
    expect(refusal(definition("file", "dangling.log"), policy()).details.path).toBe(
      join(outside, "later.log"),
    );
  });

  it("follow a symlink that stays inside", () => {
    mkdirSync(join(workspace, "data"));
    symlinkSync(join(workspace, "data"), join(workspace, "logs", "data"));
    expect(checkSourceAccess(definition("file", "logs/data/x.log"), policy())).toEqual({
      kind: "file",
      path: join(workspace, "data", "x.log"),
    });
  });

  it("admit paths beyond the workspace that allow_paths names, as a prefix or a glob", () => {
    const target = definition("file", "../outside/secret.log");
    for (const allowPaths of [
      [outside],
      ["../outside"],
      [`${outside}/**`],
      ["../outside/*.log"],
      [join(workspace, "logs", "link", "*.log")],
    ]) {
      symlinkSync(outside, join(workspace, "logs", "link"));
      expect(checkSourceAccess(target, policy({ allowPaths })), String(allowPaths)).toEqual({
        kind: "file",
        path: join(outside, "secret.log"),
      });
      rmSync(join(workspace, "logs", "link"));
    }
    for (const allowPaths of [[`${outside}/*.txt`], [`${outside}-2`], [join(root, "out")]]) {
      expect(refusal(target, policy({ allowPaths })).code, String(allowPaths)).toBe(
        "source.denied",
      );
    }
    // A glob admits the real path, not the one written through a symlink.
    symlinkSync("/etc", join(outside, "etc"));
    expect(
      refusal(
        definition("file", "../outside/etc/passwd"),
        policy({ allowPaths: [`${outside}/**`] }),
      ).details.path,
    ).toBe(realpathSync("/etc/passwd"));
  });
});

describe("network targets", () => {
  it("reach hosts the allow-list admits, with ports and wildcards", () => {
    const allowed: [SourceKind, string, string[]][] = [
      ["http", "http://127.0.0.1:8080/status", ["127.0.0.1:*"]],
      ["http", "http://127.0.0.1:8080/status", ["127.0.0.1"]],
      ["sse", "https://api.example.com/events", ["*.example.com"]],
      ["sse", "https://a.b.example.com/events", ["*.example.com:443"]],
      ["websocket", "wss://stream.example.com/x", ["stream.example.com:443"]],
      ["websocket", "ws://[::1]:3000/x", ["[::1]:3000"]],
    ];
    for (const [kind, target, allowHosts] of allowed) {
      const access = checkSourceAccess(definition(kind, target), policy({ allowHosts }));
      expect(access).toEqual({ kind, url: new URL(target) });
    }
    const denied: [SourceKind, string, string[]][] = [
      ["http", "http://127.0.0.1:9090/", ["127.0.0.1:8080"]],
      ["http", "http://localhost/", []],
      ["sse", "https://example.com/events", ["*.example.com"]],
      ["sse", "https://evil-example.com/", ["*.example.com"]],
      ["websocket", "wss://stream.example.com/x", ["stream.example.com:80"]],
      ["websocket", "ws://stream.example.com/x", ["stream.example.com:443"]],
    ];
    for (const [kind, target, allowHosts] of denied) {
      const error = refusal(definition(kind, target), policy({ allowHosts }));
      expect(error.code, target).toBe("source.denied");
      expect(error.message).toContain("allow_hosts: [");
    }
  });

  it("read only their kind's schemes", () => {
    const base = definition("sse", "https://example.com/");
    const rules = policy({ allowHosts: ["example.com"] });
    for (const [kind, target] of [
      ["sse", "ws://example.com/"],
      ["http", "wss://example.com/"],
      ["websocket", "https://example.com/"],
      ["http", "file:///etc/passwd"],
      ["http", "not a url"],
    ] as const) {
      expect(refusal({ ...base, kind, target }, rules).code, `${kind} ${target}`).toBe(
        "source.bad-target",
      );
    }
  });
});

describe("commands", () => {
  it("run only for an agent with shell.run, in the workspace or a folder inside it", () => {
    const command = definition("command", "tail -f x.log");
    const denied = refusal(command, policy());
    expect(denied.code).toBe("source.denied");
    expect(denied.message).toContain("shell.run");
    expect(checkSourceAccess(command, policy({ shell: true }))).toEqual({
      kind: "command",
      command: "tail -f x.log",
      cwd: workspace,
    });
    expect(
      checkSourceAccess(definition("command", "ls", { cwd: "logs" }), policy({ shell: true })),
    ).toEqual({ kind: "command", command: "ls", cwd: join(workspace, "logs") });
    expect(
      refusal(definition("command", "ls", { cwd: "../outside" }), policy({ shell: true })).code,
    ).toBe("source.denied");
  });
});
