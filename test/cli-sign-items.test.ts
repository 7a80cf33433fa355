/**
 * `spool sign` through the CLI signs item files only (directives, agents, workflows, hooks,
 * config.yaml, coordination.yaml), each checked as the item it is, and refuses any other file
 * before signing anything.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runSpool } from "./support/cli.js";

const DIRECTIVE = `# Researcher

\`\`\`xml
<directive name="researcher" version="1.0.0">
  <metadata><description>Finds things out.</description></metadata>
</directive>
\`\`\`

Always cite your sources.
`;

const WORKFLOW = `name: enrich
steps:
  - id: lookup
    action: { type: tool, name: clock.now }
`;

describe("spool sign", () => {
  let root: string;
  let workspace: string;
  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), "spool-sign-items-"));
    workspace = join(root, "work");
    mkdirSync(join(root, "home"), { recursive: true });
    mkdirSync(workspace);
    expect((await spool(["keys", "init"])).code).toBe(0);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const spool = (args: string[]) =>
    runSpool(args, { cwd: workspace, env: { HOME: join(root, "home") } });
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(workspace, path)), { recursive: true });
    writeFileSync(join(workspace, path), text);
  };
  const signed = (path: string) => existsSync(join(workspace, `${path}.sig`));

  it("signs every kind of item file", async () => {
    const items = {
      ".ai/directives/research/researcher.md": DIRECTIVE,
      ".ai/agents/helper.yaml": "directive: researcher\n",
      ".ai/workflows/enrich.yaml": WORKFLOW,
      ".ai/hooks/mine.yaml": "- { id: escalate_limits, enabled: false }\n",
      ".ai/config.yaml": "{}\n",
      ".ai/coordination.yaml": "{}\n",
    };
    for (const [path, text] of Object.entries(items)) write(path, text);
    const result = await spool(["sign", ...Object.keys(items)]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    for (const path of Object.keys(items)) {
      expect(result.stdout).toContain(`Signed ${path} with key`);
      expect(signed(path)).toBe(true);
    }
  });

  it("refuses a file that is no item, naming what it signs, and signs none of the files given", async () => {
    write(".ai/directives/researcher.md", DIRECTIVE);
    write("notes.txt", "my notes\n");
    write("docs/readme.md", "# Not a directive\n");
    write(".ai/agents/helper.json", "{}\n");
    for (const other of ["notes.txt", "docs/readme.md", ".ai/agents/helper.json"]) {
      const result = await spool(["sign", ".ai/directives/researcher.md", other]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        `spool: ${other} is not an item file: spool sign signs directives (.md under directives/), agent manifests (.yaml under agents/), workflows (.yaml under workflows/), hooks (.yaml under hooks/), config.yaml and coordination.yaml`,
      );
      expect(signed(other)).toBe(false);
    }
    expect(signed(".ai/directives/researcher.md")).toBe(false);
  });

  it("refuses a malformed workflow or hook, as the item it is", async () => {
    write(".ai/workflows/broken.yaml", "name: broken\nsteps:\n  - id: a\n    depends: [nope]\n");
    write(".ai/hooks/broken.yaml", "- id: x\n  event: nonsense\n");
    const workflow = await spool(["sign", ".ai/workflows/broken.yaml"]);
    expect(workflow.code).not.toBe(0);
    expect(workflow.stderr).toContain(".ai/workflows/broken.yaml");
    const hook = await spool(["sign", ".ai/hooks/broken.yaml"]);
    expect(hook.code).toBe(2);
    expect(hook.stderr).toContain(".ai/hooks/broken.yaml");
    expect(signed(".ai/workflows/broken.yaml") || signed(".ai/hooks/broken.yaml")).toBe(false);
  });
});
