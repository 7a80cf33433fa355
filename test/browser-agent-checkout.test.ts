/**
 * End to end: an agent whose manifest has a `browser:` section is assembled with the browser
 * tools, the relic and the page-event source; a scripted model drives it through the checkout
 * (it reads the MM/YYYY refusal in a snapshot and retries with MM/YY), the shop records the
 * order, page events reach the log as the `browser` source's chunks, and `spool replay` of the
 * log is identical without launching a browser (the shop sees no request during the replay).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assembleAgent } from "../src/app/index.js";
import type { EventStore } from "../src/log/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import { createAgentRuntime } from "../src/runtime/index.js";
import { ConfigError, type EventData } from "../src/spec/index.js";
import { type BrowserApps, startBrowserApps } from "./support/browser-apps/index.js";
import { tool } from "./support/browser-model.js";
import { runSpool } from "./support/cli.js";
import { readAll, tempStore } from "./support/transcripts.js";

let apps: BrowserApps;
let store: EventStore;
let storeDir: string;
let cleanup: () => Promise<void>;
let workspace: string;
let home: string;

beforeAll(async () => {
  apps = await startBrowserApps();
  ({ store, cleanup, dir: storeDir } = await tempStore("spool-browser-agent-"));
  workspace = mkdtempSync(join(tmpdir(), "spool-browser-agent-ws-"));
  home = mkdtempSync(join(tmpdir(), "spool-browser-agent-home-"));
  mkdirSync(join(workspace, ".ai", "agents"), { recursive: true });
});
afterAll(async () => {
  await cleanup?.();
  await apps?.close();
  rmSync(workspace, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

/**
 * The model's turns. Refs are numbered across the session in page order: the cart's button is
 * e1, the shipping form's fields e2–e5, the payment form's e6–e8, and the refused form's e9–e11.
 */
function script(origin: string) {
  const after = "<result id=";
  return [
    {
      when: "Buy what is in my cart",
      text: `${tool("a1", "browser.navigate", { url: `${origin}/shop` })}${tool("a2", "browser.snapshot", {})}`,
    },
    {
      when: after,
      text: `${tool("b1", "browser.click", { ref: "e1" })}${tool("b2", "browser.snapshot", {})}`,
    },
    {
      when: after,
      text: [
        tool("c1", "browser.type", { ref: "e2", text: "Ada Lovelace" }),
        tool("c2", "browser.type", { ref: "e3", text: "12 St James's Square" }),
        tool("c3", "browser.select", { ref: "e4", values: ["France"] }),
        tool("c4", "browser.click", { ref: "e5" }),
        tool("c5", "browser.snapshot", {}),
      ].join(""),
    },
    {
      when: after,
      text: [
        tool("d1", "browser.type", { ref: "e6", text: "4242424242424242" }),
        tool("d2", "browser.type", { ref: "e7", text: "12/2027", submit: true }),
        tool("d3", "browser.snapshot", {}),
      ].join(""),
    },
    {
      when: "Invalid expiry format. Use MM/YY.",
      text: [
        "<thought>The expiry wants MM/YY, not MM/YYYY.</thought>",
        tool("e1", "browser.type", { ref: "e10", text: "12/27" }),
        tool("e2", "browser.click", { ref: "e11" }),
        tool("e3", "browser.snapshot", { selector: "main" }),
      ].join(""),
    },
    { when: "Your order number is A-1001", text: "<response>Order A-1001 is placed.</response>" },
    // Page events reach the agent in delivery turns once it is idle.
    { when: "navigated to", text: "<response>Noted.</response>" },
  ];
}

/** Resolves once the `browser` source has logged a chunk holding `line`. */
async function chunkWith(line: string): Promise<void> {
  const stop = new AbortController();
  for await (const message of store.subscribe({
    continuity: "shop",
    types: ["source.chunk"],
    signal: stop.signal,
  })) {
    if (message.type !== "event") continue;
    if ((message.event.data as EventData<"source.chunk">).lines?.includes(line)) break;
  }
  stop.abort();
}

function assemble(manifest: string, provider?: ReturnType<typeof createScriptedProvider>) {
  writeFileSync(join(workspace, ".ai", "agents", "shopper.yaml"), manifest);
  return assembleAgent({
    workspace,
    home,
    store,
    continuity: "shop",
    env: {},
    agent: "shopper",
    ...(provider ? { provider } : {}),
  });
}

describe("an agent with a browser: section", () => {
  it("buys the cart through the checkout, and the replay of its log is identical with no browser", async () => {
    const model = createScriptedProvider({
      model: "scripted",
      loop: true,
      script: script(apps.origin),
    });
    const assembled = assemble(
      `directive: assistant\nbrowser:\n  allow_hosts: ["${apps.host}"]\n`,
      model,
    );
    const names = assembled.options.agent.tools.map((item) => item.name);
    expect(names).toEqual(
      expect.arrayContaining(["browser.navigate", "browser.snapshot", "browser.tabs"]),
    );
    expect(assembled.options.agent.toolsText).toContain("browser.type");
    expect(assembled.options.sources?.manifest.definitions.map((item) => item.id)).toEqual([
      "browser",
    ]);

    const runtime = createAgentRuntime({ store, ...assembled.options });
    const result = await runtime.submit("shop", {
      text: "Buy what is in my cart.",
      actor: "ada",
      origin: "t",
    });
    await runtime.settled("shop");
    expect(result.status).toBe("completed");
    await chunkWith(`[t1] request failed: POST ${apps.origin}/shop/payment (status 422)`);
    await runtime.close();
    await assembled.close();

    // The prompt lists the browser once, as tools, not again as relic methods.
    expect(model.requests[0]!.system).toContain("browser.navigate (side effects, not idempotent)");
    expect(model.requests[0]!.system).not.toContain("- browser.navigate");
    expect(apps.checkout.orders).toEqual([
      expect.objectContaining({ id: "A-1001", expiry: "12/27", country: "fr" }),
    ]);
    const events = await readAll(store, "shop");
    const failed = events
      .filter((event) => event.type === "action.failed")
      .map((event) => (event.data as EventData<"action.failed">).action_id);
    expect(failed).toEqual([]);
    const chunks = events.filter((event) => event.type === "source.chunk");
    const lines = chunks.flatMap((event) => (event.data as EventData<"source.chunk">).lines ?? []);
    expect(lines).toContain("browser started");
    // Each chunk counts its kinds of page event, for hook conditions (`matches.error`).
    const errors = chunks.reduce(
      (sum, event) => sum + ((event.data as EventData<"source.chunk">).matches?.error ?? 0),
      0,
    );
    // The 422 is a failed request, and Chromium also logs it as a console error.
    expect(errors).toBe(
      lines.filter((line) => /\] (console error|page error|request failed): /.test(line)).length,
    );
    expect(errors).toBeGreaterThanOrEqual(1);
    expect(lines).toContain(`[t1] request failed: POST ${apps.origin}/shop/payment (status 422)`);
    const lifecycle = events.filter(
      (event) => event.type.startsWith("relic.") && event.type !== "relic.called",
    );
    expect(lifecycle.map((event) => event.type)).toEqual(["relic.started", "relic.stopped"]);

    // `spool replay` assembles the agent from the same manifest and answers every browser call
    // from the log: the shop is not reached again.
    const hits = [...apps.hits.values()].reduce((sum, n) => sum + n, 0);
    await store.close();
    const replayed = await runSpool(["replay", "shop", "--db", join(storeDir, "store")], {
      cwd: workspace,
      env: { HOME: home },
    });
    expect(replayed.stderr).toBe("");
    expect(replayed.stdout).toMatch(/^identical: /);
    expect(replayed.code).toBe(0);
    expect([...apps.hits.values()].reduce((sum, n) => sum + n, 0)).toBe(hits);
  });

  it("says how to fix a bad browser section, at its line", () => {
    let caught: unknown;
    try {
      assemble(
        "directive: assistant\nbrowser:\n  viewport: { width: 10, height: 800 }\n  alow_hosts: [x]\n",
      );
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const message = (caught as ConfigError).message;
    const file = join(".ai", "agents", "shopper.yaml");
    expect(message).toContain(
      `${file}:3: browser.viewport.width: width must be a whole number from 200 to 4096`,
    );
    expect(message).toContain('unknown field "alow_hosts"');
  });
});
