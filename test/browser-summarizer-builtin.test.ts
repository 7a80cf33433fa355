/**
 * The built-in browser summarizer, browser directive and browser agent: they load from the
 * built-in tier (the agent's `browser:` section states the defaults); the `browser` directive gets
 * `browser_summarizer` by the `<directive>_summarizer` convention, so `summary_directive_overrides`
 * still wins; a browser agent whose directive names no summarizer gets it by default; and a real
 * handoff of the built-in browser agent (no browser call, so no Chromium) runs browser_summarizer's
 * instructions.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assembleAgent } from "../src/app/index.js";
import { parseBrowserOptions } from "../src/browser/index.js";
import { renderSummarizerInputs } from "../src/continuity/index.js";
import { checkInputs, createItemSpace } from "../src/directives/index.js";
import { createScriptedProvider, type Provider } from "../src/providers/index.js";
import { createAgentRuntime } from "../src/runtime/index.js";
import { type EventData, isEvent } from "../src/spec/index.js";
import {
  filler,
  routedProvider,
  SMALL_MODEL,
  scriptedSummarizer,
  smallCatalogue,
} from "./support/continuity-run.js";
import { readAll, useTempStore } from "./support/transcripts.js";

const temp = useTempStore("spool-browser-summarizer-");
let workspace: string;

beforeEach(() => {
  workspace = mkdtempSync(join(tmpdir(), "spool-browser-summarizer-ws-"));
});
afterEach(() => rmSync(workspace, { recursive: true, force: true }));

function write(path: string, text: string): void {
  mkdirSync(dirname(join(workspace, path)), { recursive: true });
  writeFileSync(join(workspace, path), text);
}

function directive(name: string, metadata = ""): string {
  return `# ${name}

\`\`\`xml
<directive name="${name}" version="1.0.0">
  <metadata>
    <description>${name}</description>
    <model tier="fast" />
    <permissions>
      <execute>
        <tool>browser.*</tool>
      </execute>
    </permissions>${metadata}
  </metadata>
</directive>
\`\`\`

Do ${name}.
`;
}

const space = () =>
  createItemSpace({ workspace, home: workspace, trustedKeys: new Map(), env: {} });

const assemble = (
  agent: { agent?: string; directive?: string },
  provider: Provider = createScriptedProvider({ model: SMALL_MODEL, script: [] }),
) =>
  assembleAgent({
    workspace,
    home: workspace,
    store: temp.store,
    continuity: "shop",
    env: {},
    ...agent,
    provider,
    model: SMALL_MODEL,
  });

/** `summarizerFor(directive)` of an assembled agent, closed after. */
async function selected(agent: { agent?: string; directive?: string }, directive: string) {
  const assembled = assemble(agent);
  try {
    return assembled.options.summarizerFor!(directive);
  } finally {
    await assembled.close();
  }
}

describe("the built-in browser summarizer, browser directive and browser agent", () => {
  it("load from the built-in tier and are listed as built-ins", () => {
    const items = space();
    const summarizer = items.directive("browser_summarizer");
    expect(summarizer.source.tier).toBe("builtin");
    expect(summarizer.inputs.map((input) => input.name)).toEqual([
      "transcript_content",
      "directive_name",
      "max_summary_tokens",
      "sources",
    ]);
    for (const heading of [
      "## Task",
      "## Current State",
      "## What Was Tried",
      "## Hypothesis for Next Thread",
      "## Pending",
    ]) {
      expect(summarizer.body).toContain(heading);
    }
    expect(summarizer.body).toContain("Never write a secret");
    const inputs = renderSummarizerInputs({
      transcript: "### User\n\nBuy what is in my cart.",
      directiveName: "browser",
      maxSummaryTokens: 2000,
      sources: "- browser (state mode): chunks 1-2",
    });
    expect(checkInputs(summarizer, inputs)).toEqual(inputs);

    const browser = items.directive("browser");
    expect(browser.source.tier).toBe("builtin");
    // No <summarizer> of its own: the convention picks browser_summarizer, after the overrides.
    expect(browser.summarizer).toBeUndefined();
    expect(browser.permissions.tool).toEqual(["browser.*", "fs.read", "fs.list", "clock.now"]);
    expect(browser.body).toContain('"secret": "SHOP_PASSWORD"');
    expect(browser.body).toContain("relic.browser.stale-ref");

    const manifest = items.manifest("browser");
    expect(manifest.directive).toBe("browser");
    // The section states the defaults, so a copy starts from them.
    expect(parseBrowserOptions(manifest.browser)).toEqual(parseBrowserOptions(true));

    const listed = items.list();
    expect(listed.filter((listing) => listing.problem)).toEqual([]);
    const builtins = (kind: string) =>
      listed
        .filter((listing) => listing.kind === kind && listing.tier === "builtin")
        .map((listing) => listing.name);
    expect(builtins("directive")).toEqual(
      expect.arrayContaining(["browser", "browser_summarizer", "stream_summarizer"]),
    );
    expect(builtins("agent")).toEqual(expect.arrayContaining(["browser", "log_monitor"]));
  });

  it("is the browser directive's summarizer by convention; summary_directive_overrides still wins", async () => {
    expect(await selected({ agent: "browser" }, "browser")).toMatchObject({
      name: "browser_summarizer",
      source: "convention",
    });
    write(
      ".ai/coordination.yaml",
      "coordination:\n  continuation:\n    summary_directive_overrides:\n      browser: thread_summary\n",
    );
    expect(await selected({ agent: "browser" }, "browser")).toMatchObject({
      name: "thread_summary",
      source: "override",
    });
  });

  it("is a browser agent's default when its directive names none, and only then", async () => {
    write(".ai/directives/shop.md", directive("shop"));
    write(".ai/directives/mine.md", directive("mine", '\n    <summarizer directive="mine" />'));
    write(".ai/agents/shopper.yaml", "directive: shop\nbrowser: { events: false }\n");
    write(".ai/agents/clerk.yaml", "directive: shop\n");
    write(".ai/agents/offline.yaml", "directive: shop\nbrowser: false\n");
    write(".ai/agents/own.yaml", "directive: mine\nbrowser: true\n");
    expect(await selected({ agent: "shopper" }, "shop")).toMatchObject({
      name: "browser_summarizer",
      source: "agent",
    });
    // The built-in assistant names no summarizer: with a browser it gets this one too.
    write(".ai/agents/assistant-shopper.yaml", "directive: assistant\nbrowser: true\n");
    expect(await selected({ agent: "assistant-shopper" }, "assistant")).toMatchObject({
      name: "browser_summarizer",
      source: "agent",
    });
    expect(await selected({ agent: "clerk" }, "assistant")).toMatchObject({
      name: "thread_summary",
      source: "default",
    });
    // Another directive the browser agent's threads run (a child's) is not its own.
    expect(await selected({ agent: "shopper" }, "other")).toMatchObject({ source: "default" });
    // Without a browser, the same directive gets the default summarizer.
    expect(await selected({ agent: "clerk" }, "shop")).toMatchObject({
      name: "thread_summary",
      source: "default",
    });
    expect(await selected({ agent: "offline" }, "shop")).toMatchObject({ source: "default" });
    // The directive's own choice, an override and the convention come first.
    expect(await selected({ agent: "own" }, "mine")).toMatchObject({
      name: "mine",
      source: "directive",
    });
    write(".ai/directives/shop_summarizer.md", directive("shop_summarizer"));
    expect(await selected({ agent: "shopper" }, "shop")).toMatchObject({
      name: "shop_summarizer",
      source: "convention",
    });
    write(
      ".ai/coordination.yaml",
      "coordination:\n  continuation:\n    summary_directive_overrides:\n      shop: thread_summary\n",
    );
    expect(await selected({ agent: "shopper" }, "shop")).toMatchObject({
      name: "thread_summary",
      source: "override",
    });
  });

  it("summarizes the built-in browser agent's handoff with browser_summarizer's instructions", async () => {
    const foreground = createScriptedProvider({
      model: SMALL_MODEL,
      loop: true,
      script: ["<response>Noted; still on the payment page.</response>"],
    });
    const summary =
      "## Task\nBuy the cart.\n\n## Current State\nhttps://shop.example.com/payment, signed in as ada.\n\n## What Was Tried\nExpiry 12/2027 was refused.\n\n## Hypothesis for Next Thread\nType 12/27 into Expiry [e10].\n\n## Pending\nClick Pay now [e11].";
    const summarizer = scriptedSummarizer([`<response>${summary}</response>`]);
    const systems: string[] = [];
    const requests: string[] = [];
    const provider = routedProvider(foreground, summarizer, (request, isSummary) => {
      if (isSummary) systems.push(request.system ?? "");
      else requests.push(JSON.stringify(request.messages));
    });
    const assembled = assemble({ agent: "browser" }, provider);
    // No browser call is made, so Chromium never starts; page events are left out likewise.
    const { sources: _pageEvents, ...options } = assembled.options;
    const runtime = createAgentRuntime({
      store: temp.store,
      ...options,
      catalogue: smallCatalogue(),
      sleep: async () => {},
    });
    try {
      let continued = false;
      for (let n = 1; n <= 60 && !continued; n++) {
        const result = await runtime.submit("shop", { text: filler(n), actor: "ada", origin: "t" });
        expect(result.status).toBe("completed");
        continued = (await readAll(temp.store, "shop")).some(
          (event) => event.type === "thread.continued",
        );
      }
      expect(continued).toBe(true);
      await runtime.submit("shop", { text: "Where are we?", actor: "ada", origin: "t" });
    } finally {
      await runtime.close();
      await assembled.close();
    }
    const events = await readAll(temp.store, "shop");
    const completed = events.find((event) => isEvent(event, "summary.completed"))!;
    expect((completed.data as EventData<"summary.completed">).summarizer).toBe(
      "browser_summarizer",
    );
    expect(events.some((event) => event.type.startsWith("relic."))).toBe(false);

    // The summarizer's request holds browser_summarizer's own instructions, filled in.
    const system = systems[0]!;
    expect(system).toContain("of a thread that ran the directive `browser` and drove a");
    for (const heading of ["## Current State", "## What Was Tried", "## Hypothesis for Next"]) {
      expect(system).toContain(heading);
    }
    expect(system).toContain("Message 1. note-1-0");
    expect(system).not.toMatch(/\$(max_summary_tokens|transcript_content|directive_name)\b/);
    // The continuation starts from the browser summary.
    expect(requests.some((request) => request.includes("Type 12/27 into Expiry [e10]."))).toBe(
      true,
    );
  }, 120_000);
});
