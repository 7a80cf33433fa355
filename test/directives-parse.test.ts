import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  checkInputs,
  loadDirectiveFile,
  parseDirective,
  parseInputArgs,
  sha256Hex,
} from "../src/directives/index.js";
import { ConfigError } from "../src/spec/index.js";

/** A directive in the seed's form: markdown around a fenced xml block. Line 5 opens the block. */
const FULL = `# Browser summarizer

Summaries for browser sessions.

\`\`\`xml
<directive name="browser_summarizer" version="1.2.0-beta.1">
  <metadata>
    <description>Summarize a browser automation session
    for thread handoff.</description>
    <category>rye/agent/streams</category>
    <author>rye-os</author>
    <model tier="fast" id="claude-haiku-4-5" />
    <limits max_turns="3" max_tokens="8192" max_spend="0.02" max_wall_seconds="90.5" max_spawn_depth="0" />
    <permissions>
      <execute>
        <tool>rye/agent/threads/internal/*</tool>
        <tool>fs.read</tool>
        <agent>helper</agent>
        <relic>r.*</relic>
        <workflow>deploy</workflow>
        <llm>summarize</llm>
      </execute>
    </permissions>
    <summarizer directive="browser_summarizer_summary" />
  </metadata>
  <inputs>
    <input name="transcript_content" type="string" required="true">
      The browser session transcript to summarize
    </input>
    <input name="max_summary_tokens" type="integer" required="false" default="4000">
      Target maximum tokens (default: 4000)
    </input>
    <input name="ratio" type="number" default="0.5">A ratio</input>
    <input name="verbose" type="boolean" default="false">Talk more</input>
    <input name="options" type="json" default='{"a":[1,2]}'>Extra options</input>
  </inputs>
</directive>
\`\`\`

## Instructions

Keep R&D notes &amp; state.
`;

const options = { path: "/w/.ai/directives/x.md", display: ".ai/directives/x.md" };

/** The ConfigError `parseDirective(text)` throws (fails the test when it does not throw). */
function failure(text: string): ConfigError {
  try {
    parseDirective(text, options);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("parseDirective: every field", () => {
  it("reads the metadata block of the seed's form and keeps the markdown as the body", () => {
    const directive = parseDirective(FULL, { path: "/w/browser_summarizer.md", tier: "user" });
    expect(directive).toMatchObject({
      name: "browser_summarizer",
      version: "1.2.0-beta.1",
      description: "Summarize a browser automation session for thread handoff.",
      category: "rye/agent/streams",
      author: "rye-os",
      model: { tier: "fast", id: "claude-haiku-4-5" },
      limits: {
        maxTurns: 3,
        maxTokens: 8192,
        maxSpendUsd: 0.02,
        maxWallSeconds: 90.5,
        maxSpawnDepth: 0,
      },
      permissions: {
        tool: ["rye/agent/threads/internal/*", "fs.read"],
        agent: ["helper"],
        relic: ["r.*"],
        workflow: ["deploy"],
        llm: ["summarize"],
      },
      summarizer: "browser_summarizer_summary",
      source: { path: "/w/browser_summarizer.md", tier: "user", sha256: sha256Hex(FULL) },
    });
    expect(directive.inputs).toEqual([
      {
        name: "transcript_content",
        type: "string",
        required: true,
        description: "The browser session transcript to summarize",
      },
      {
        name: "max_summary_tokens",
        type: "integer",
        required: false,
        default: 4000,
        description: "Target maximum tokens (default: 4000)",
      },
      { name: "ratio", type: "number", required: false, default: 0.5, description: "A ratio" },
      {
        name: "verbose",
        type: "boolean",
        required: false,
        default: false,
        description: "Talk more",
      },
      {
        name: "options",
        type: "json",
        required: false,
        default: { a: [1, 2] },
        description: "Extra options",
      },
    ]);
    expect(directive.body).toBe(
      "# Browser summarizer\n\nSummaries for browser sessions.\n\n## Instructions\n\nKeep R&D notes &amp; state.",
    );
    expect(directive.source.signed).toBeUndefined();
  });

  it("accepts a bare <directive> element at the top, and fills the defaults", () => {
    const text = `<!-- a comment -->
<directive name="tiny" version="0.1.0">
  <metadata><description>Tiny &lt;one&gt;</description></metadata>
</directive>

Do the tiny thing.
`;
    const directive = parseDirective(text, options);
    expect(directive).toMatchObject({
      name: "tiny",
      description: "Tiny <one>",
      model: { tier: "general" },
      limits: {},
      permissions: { tool: [], agent: [], relic: [], workflow: [], llm: [] },
      inputs: [],
      body: "Do the tiny thing.",
    });
    expect(directive.category).toBeUndefined();
    expect(directive.summarizer).toBeUndefined();
  });

  it("takes the first xml fence that holds a <directive>, skipping other fences", () => {
    const text = [
      "# Title",
      "```xml",
      "<example/>",
      "```",
      "~~~xml",
      '<directive name="later" version="1.0.0"><metadata><description>d</description></metadata></directive>',
      "~~~",
      "```xml",
      '<directive name="ignored" version="1.0.0"/>',
      "```",
    ].join("\n");
    const directive = parseDirective(text, options);
    expect(directive.name).toBe("later");
    expect(directive.body).toContain("<example/>");
    expect(directive.body).toContain('name="ignored"');
  });

  it("loads a file: hashes its bytes and checks the name against the file name", () => {
    const dir = mkdtempSync(join(tmpdir(), "spool-directive-file-"));
    try {
      const path = join(dir, "browser_summarizer.md");
      writeFileSync(path, FULL);
      expect(loadDirectiveFile(path).source.sha256).toBe(sha256Hex(FULL));
      const other = join(dir, "other.md");
      writeFileSync(other, FULL);
      expect(() => loadDirectiveFile(other, { display: "other.md" })).toThrow(
        /other\.md:6: <directive name="browser_summarizer">: name "browser_summarizer" does not match the file name other\.md/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("parseDirective: malformed files name file, line and field", () => {
  it("bad XML: an element closed by the wrong tag", () => {
    const error = failure(FULL.replace("</metadata>", "</metadat>"));
    expect(error.code).toBe("config.directive");
    expect(error.message).toMatch(
      /^\.ai\/directives\/x\.md:25: XML: <\/metadat> does not close <metadata> \(opened at line 7\); close it with <\/metadata>/,
    );
  });

  it("bad XML: an unquoted attribute", () => {
    expect(failure(FULL.replace('max_turns="3"', "max_turns=3")).message).toMatch(
      /x\.md:13: XML: the value of max_turns in <limits> must be quoted/,
    );
  });

  it("missing name", () => {
    const error = failure(FULL.replace('name="browser_summarizer" version', "version"));
    expect(error.message).toMatch(
      /^\.ai\/directives\/x\.md:6: <directive>: name is missing: write <directive name="my_agent" version="1\.0\.0">/,
    );
    expect(error.details.issues).toEqual([
      expect.objectContaining({ line: 6, field: "<directive>" }),
    ]);
  });

  it("bad version", () => {
    expect(failure(FULL.replace('version="1.2.0-beta.1"', 'version="1.2"')).message).toMatch(
      /x\.md:6: <directive version="1\.2">: version must be a semantic version, e\.g\. version="1\.0\.0"/,
    );
  });

  it("bad tier", () => {
    expect(failure(FULL.replace('tier="fast"', 'tier="turbo"')).message).toMatch(
      /x\.md:12: <model tier="turbo">: tier must be fast, general or high, not "turbo"/,
    );
  });

  it("bad limit numbers", () => {
    expect(failure(FULL.replace('max_turns="3"', 'max_turns="ten"')).message).toMatch(
      /^\.ai\/directives\/x\.md:13: <limits max_turns="ten">: max_turns must be a whole number, e\.g\. max_turns="10"/,
    );
    expect(failure(FULL.replace('max_spend="0.02"', 'max_spend="$2"')).message).toMatch(
      /x\.md:13: <limits max_spend="\$2">: max_spend must be an amount of US dollars, e\.g\. max_spend="0\.50"/,
    );
    expect(failure(FULL.replace('max_turns="3"', 'max_turns="0"')).message).toMatch(
      /<limits max_turns="0">: max_turns must be at least 1/,
    );
  });

  it("unknown element, attribute and permission kind", () => {
    expect(failure(FULL.replace("<author>rye-os</author>", "<owner>me</owner>")).message).toMatch(
      /x\.md:11: <owner>: unknown element in <metadata>; <metadata> holds <description>, <category>/,
    );
    expect(
      failure(FULL.replace('max_spend="0.02"', 'max_spend="0.02" colour="red"')).message,
    ).toMatch(
      /x\.md:13: <limits colour="red">: unknown attribute colour; it takes max_turns, max_tokens, max_spend/,
    );
    expect(failure(FULL.replace("<agent>helper</agent>", "<network>x</network>")).message).toMatch(
      /x\.md:18: <network>: unknown permission kind; <execute> holds <tool>, <agent>/,
    );
  });

  it("every problem in one message, in line order", () => {
    const error = failure(
      FULL.replace('tier="fast"', 'tier="x"').replace('max_turns="3"', 'max_turns="y"'),
    );
    expect(error.details.issues).toEqual([
      expect.objectContaining({ line: 12, field: '<model tier="x">' }),
      expect.objectContaining({ line: 13, field: '<limits max_turns="y">' }),
    ]);
  });

  it("a default that does not fit its type, a repeated input, a missing description", () => {
    expect(failure(FULL.replace('default="4000"', 'default="lots"')).message).toMatch(
      /x\.md:30: <input default="lots">: the default must be a number, e\.g\. 4000 \(the input's type is integer\)/,
    );
    expect(failure(FULL.replace('name="ratio"', 'name="verbose"')).message).toMatch(
      /x\.md:34: <input name="verbose">: input "verbose" is declared twice/,
    );
    const noDescription = FULL.replace(/<description>[\s\S]*?<\/description>/, "");
    expect(failure(noDescription).message).toMatch(/x\.md:7: <metadata>: <description> is missing/);
  });

  it("no metadata block, and an unclosed fence", () => {
    expect(failure("# Just markdown\n").message).toMatch(
      /^\.ai\/directives\/x\.md:1: file: no metadata block/,
    );
    expect(failure(FULL.replace("```\n\n## Instructions", "\n## Instructions")).message).toMatch(
      /x\.md:5: file: the ```xml block that starts here is never closed/,
    );
  });

  it("never throws anything but ConfigError, whatever the bytes", () => {
    for (let cut = 0; cut < FULL.length; cut += 7) {
      try {
        parseDirective(FULL.slice(0, cut), options);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
      }
    }
  });
});

describe("checkInputs", () => {
  const directive = parseDirective(FULL, options);

  it("coerces k=v strings to the declared types and applies defaults", () => {
    const given = parseInputArgs([
      "transcript_content=a=b",
      "max_summary_tokens=12",
      "verbose=yes",
      'options={"x":true}',
    ]);
    expect(given.transcript_content).toBe("a=b");
    expect(checkInputs(directive, given)).toEqual({
      transcript_content: "a=b",
      max_summary_tokens: 12,
      ratio: 0.5,
      verbose: true,
      options: { x: true },
    });
  });

  it("passes typed values through", () => {
    expect(
      checkInputs(directive, { transcript_content: "t", ratio: 2, verbose: false, options: [1] }),
    ).toMatchObject({ ratio: 2, verbose: false, options: [1] });
  });

  it("names every bad, missing and unknown input", () => {
    let error: unknown;
    try {
      checkInputs(directive, {
        max_summary_tokens: "1.5",
        verbose: "perhaps",
        nope: "1",
        options: "{",
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect((error as ConfigError).code).toBe("directive.inputs");
    expect(message).toContain(
      'unknown input "nope" (directive "browser_summarizer" takes transcript_content',
    );
    expect(message).toContain(
      'input "transcript_content" (string) is required: The browser session transcript to summarize; pass transcript_content=<value>',
    );
    expect(message).toContain('input "max_summary_tokens" must be a whole number');
    expect(message).toContain('input "verbose" must be true or false');
    expect(message).toContain('input "options" must be JSON text');
  });

  it("parseInputArgs refuses a word without =", () => {
    expect(() => parseInputArgs(["topic"])).toThrow(/"topic" is not an input/);
    expect(() => parseInputArgs(["=x"])).toThrow(ConfigError);
  });
});

describe("the XML subset", () => {
  it("reads comments, CDATA, entities and numeric references", () => {
    const text = `<directive name="x" version="1.0.0">
  <!-- a comment with <tags> -->
  <metadata>
    <description><![CDATA[Uses <b> & "quotes"]]> &#65;&#x42; &quot;ok&quot; R&D</description>
  </metadata>
</directive>`;
    expect(parseDirective(text, options).description).toBe('Uses <b> & "quotes" AB "ok" R&D');
  });

  it("refuses a repeated attribute, a bare < in text and text after the root", () => {
    expect(failure('<directive name="a" name="b" version="1.0.0"/>').message).toMatch(
      /x\.md:1: XML: <directive> has the attribute name twice/,
    );
    expect(
      failure(
        '<directive name="a" version="1.0.0"><metadata><description>a < b</description></metadata></directive>',
      ).message,
    ).toMatch(/XML: a < in text must be written &lt;/);
    expect(
      failure('```xml\n<directive name="a" version="1.0.0"/>\ntrailing\n```\n').message,
    ).toMatch(/x\.md:3: XML: unexpected content after <\/directive>/);
  });
});

describe("the documented example", () => {
  it("docs/directives.md's directive parses as described", () => {
    const docs = readFileSync(new URL("../docs/directives.md", import.meta.url), "utf8");
    const example = /````markdown\n([\s\S]*?)\n````/.exec(docs)?.[1];
    expect(example).toBeDefined();
    const directive = parseDirective(example!, { ...options, expectedName: "researcher" });
    expect(directive).toMatchObject({
      name: "researcher",
      model: { tier: "general" },
      limits: { maxTurns: 20, maxSpendUsd: 0.5, maxSpawnDepth: 1 },
      summarizer: "browser_summarizer",
    });
    expect(checkInputs(directive, { topic: "tides" })).toEqual({
      topic: "tides",
      depth: 2,
      strict: false,
      filters: { lang: "en" },
    });
    expect(directive.body).toContain("Research $topic.");
  });
});
