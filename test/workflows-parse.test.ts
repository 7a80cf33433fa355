import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  parseWorkflow,
  readWorkflowFile,
  WorkflowError,
  workflowDirectory,
} from "../src/workflows/index.js";

function failure(text: string, source = "flows/test.yaml"): WorkflowError {
  try {
    parseWorkflow(text, { source });
  } catch (error) {
    expect(error).toBeInstanceOf(WorkflowError);
    expect((error as WorkflowError).code).toBe("workflow.invalid");
    return error as WorkflowError;
  }
  throw new Error("the workflow was accepted");
}

describe("parseWorkflow", () => {
  it("parses a workflow and fills in the defaults", () => {
    const definition = parseWorkflow(
      [
        "name: enrich",
        "inputs:",
        "  users: { type: array }",
        "steps:",
        "  - id: each",
        "    foreach: $inputs.users",
        "    action: { type: tool, name: lookup, parameters: { id: $item.id } }",
        "  - id: save",
        "    depends: [each]",
        "    action: { type: relic, name: kv.set, parameters: { key: users, value: $steps.each } }",
        "output: $steps.save",
      ].join("\n"),
    );
    expect(definition.steps[0]).toEqual({
      id: "each",
      foreach: "$inputs.users",
      as: "item",
      concurrency: 4,
      retry: 0,
      on_error: "fail",
      depends: [],
      action: { type: "tool", name: "lookup", parameters: { id: "$item.id" } },
    });
    expect(definition.inputs.users).toEqual({ type: "array" });
    expect(definition.output).toBe("$steps.save");
  });

  it("reports text that is not YAML with file, line and column", () => {
    const error = failure("name: x\nsteps:\n  - id: a\n    action: { type: tool\n");
    expect(error.message).toMatch(
      /^workflow flows\/test\.yaml is invalid \(.*\):\nflows\/test\.yaml:\d+: \(yaml\): not valid YAML/,
    );
  });

  it("names file, line and field for every schema problem at once", () => {
    const error = failure(
      [
        "name: fetch",
        "steps:",
        "  - id: a",
        "    action: { type: tool, name: get }",
        "  - id: b",
        "    retries: 3",
        "    action: { type: tool, name: get }",
        "  - id: c",
        "    on_error: ignore",
        "    action: { type: robot, name: get }",
      ].join("\n"),
    );
    const lines = error.message.split("\n").slice(1);
    expect(lines).toEqual([
      expect.stringMatching(/^flows\/test\.yaml:6: steps\[1\]\.retries: unknown field "retries"/),
      expect.stringMatching(/^flows\/test\.yaml:9: steps\[2\]\.on_error: /),
      expect.stringMatching(/^flows\/test\.yaml:10: steps\[2\]\.action\.type: /),
    ]);
    expect(error.details.issues).toHaveLength(3);
  });

  it("rejects a dependency cycle at load time, pointing at the depends that closes it", () => {
    const error = failure(
      [
        "name: loop",
        "steps:",
        "  - id: a",
        "    depends: [c]",
        "    action: { type: tool, name: t }",
        "  - id: b",
        "    depends: [a]",
        "    action: { type: tool, name: t }",
        "  - id: c",
        "    depends: [b]",
        "    action: { type: tool, name: t }",
      ].join("\n"),
    );
    expect(error.message).toContain(
      "flows/test.yaml:10: steps[2].depends: closes a dependency cycle: c → b → a → c",
    );
  });

  it("rejects unknown dependencies, self-dependencies and duplicate ids", () => {
    const error = failure(
      [
        "name: deps",
        "steps:",
        "  - id: a",
        "    action: { type: tool, name: t }",
        "  - id: b",
        "    depends: [a, fetc, b]",
        "    action: { type: tool, name: t }",
        "  - id: a",
        "    action: { type: tool, name: t }",
      ].join("\n"),
    );
    expect(error.message).toContain(
      'flows/test.yaml:6: steps[1].depends[1]: unknown step "fetc" (steps: a, b)',
    );
    expect(error.message).toContain(
      "flows/test.yaml:6: steps[1].depends[2]: a step cannot depend on itself",
    );
    expect(error.message).toContain(
      "flows/test.yaml:8: steps[2].id: duplicates the id of steps[0]",
    );
  });

  it("rejects references that could not resolve when the step runs", () => {
    const error = failure(
      [
        "name: refs",
        "inputs:",
        "  q: {}",
        "steps:",
        "  - id: a",
        "    action: { type: tool, name: t, parameters: { q: $inputs.query } }",
        "  - id: b",
        "    action: { type: tool, name: t, parameters: { from: 'rows: $steps.a' } }",
        "  - id: c",
        "    depends: [b]",
        "    as: steps",
        "    foreach: [1]",
        "    action: { type: tool, name: t, parameters: { x: $steps.zz } }",
      ].join("\n"),
    );
    expect(error.message).toContain(
      "flows/test.yaml:6: steps[0].action.parameters.q: $inputs.query is not a declared input (inputs: q)",
    );
    expect(error.message).toContain(
      'flows/test.yaml:8: steps[1].action.parameters.from: uses $steps.a, which step "b" does not depend on; add "a" to its depends',
    );
    expect(error.message).toContain('flows/test.yaml:11: steps[2].as: "steps" is reserved');
  });
});

describe("workflow files", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "spool-workflows-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("names the file in errors and loads workflows from a directory by name", async () => {
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, "name: bad\nsteps:\n  - id: a\n    action: { type: tool }\n");
    await expect(readWorkflowFile(bad)).rejects.toThrow(`${bad}:4: steps[0].action.name:`);
    writeFileSync(
      join(dir, "good.yml"),
      "name: good\nsteps:\n  - id: a\n    action: { type: tool, name: t }\n",
    );
    writeFileSync(
      join(dir, "renamed.yaml"),
      "name: other\nsteps:\n  - id: a\n    action: { type: tool, name: t }\n",
    );
    const directory = workflowDirectory(dir);
    expect(directory.names()).toEqual(["bad", "good", "renamed"]);
    expect((await directory.load("good")).steps).toHaveLength(1);
    await expect(directory.load("renamed")).rejects.toThrow(
      /is "other", but the file is named "renamed"/,
    );
    await expect(directory.load("missing")).rejects.toMatchObject({
      code: "workflow.unknown",
      message: expect.stringContaining("Use one of: bad, good, renamed"),
    });
  });
});
