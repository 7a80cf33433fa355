/**
 * Chromium killed in the middle of an agent's checkout (issue 17's proof): the relic logs
 * `browser.crashed`, the model's next browser call restarts Chromium with the same profile and
 * its answer says so (its ref, from before the crash, is refused as unknown), the model opens the
 * shop again, and the run goes on to place the order exactly once. The log replays identically
 * without launching a browser (the shop sees no request).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assembleAgent } from "../src/app/index.js";
import type { EventStore } from "../src/log/index.js";
import { replayContinuity } from "../src/replay/index.js";
import { createAgentRuntime } from "../src/runtime/index.js";
import { type EventData, isEvent } from "../src/spec/index.js";
import { type BrowserApps, startBrowserApps } from "./support/browser-apps/index.js";
import { lastUser, refOf, tool } from "./support/browser-model.js";
import { chromiumPid } from "./support/browser-processes.js";
import { answeringProvider, SMALL_MODEL, smallCatalogue } from "./support/continuity-run.js";
import { readAll, tempStore } from "./support/transcripts.js";

let apps: BrowserApps;
let store: EventStore;
let cleanup: () => Promise<void>;
let workspace: string;

beforeAll(async () => {
  apps = await startBrowserApps();
  ({ store, cleanup } = await tempStore("spool-browser-crash-"));
  workspace = mkdtempSync(join(tmpdir(), "spool-browser-crash-ws-"));
  mkdirSync(join(workspace, ".ai", "agents"), { recursive: true });
  writeFileSync(
    join(workspace, ".ai", "agents", "shopper.yaml"),
    `directive: browser\nbrowser:\n  allow_hosts: ["${apps.host}"]\n  events: false\n`,
  );
});
afterAll(async () => {
  await cleanup?.();
  await apps?.close();
  rmSync(workspace, { recursive: true, force: true });
});

/** Resolves once the log has a `browser.crashed` event. */
async function crashLogged(): Promise<void> {
  const stop = new AbortController();
  for await (const message of store.subscribe({
    continuity: "shop",
    types: ["browser.crashed"],
    signal: stop.signal,
  })) {
    if (message.type === "event") break;
  }
  stop.abort();
}

let killed = false;

/**
 * The shopper follows the pages by their titles, reading refs from each snapshot. Before it
 * answers the cart page for the first time, Chromium is killed (and the crash logged); when a
 * result reports the restart, it opens the shop again.
 */
const shopper = answeringProvider(async (request) => {
  const last = lastUser(request);
  if (last.includes("Order confirmed")) return "<response>Order A-1001 is placed.</response>";
  if (last.includes("Chromium had crashed")) {
    return `${tool("r1", "browser.navigate", { url: `${apps.origin}/shop` })}${tool("r2", "browser.snapshot", {})}`;
  }
  if (last.includes("Buy what is in my cart")) {
    return `${tool("a1", "browser.navigate", { url: `${apps.origin}/shop` })}${tool("a2", "browser.snapshot", {})}`;
  }
  if (last.includes('"title":"Cart"')) {
    if (!killed) {
      killed = true;
      const logged = crashLogged();
      process.kill(chromiumPid(workspace), "SIGKILL");
      await logged;
    }
    return `${tool("b1", "browser.click", { ref: refOf(last, "button", "Checkout") })}${tool("b2", "browser.snapshot", {})}`;
  }
  if (last.includes('"title":"Shipping"')) {
    return [
      tool("c1", "browser.type", {
        ref: refOf(last, "textbox", "Full name"),
        text: "Ada Lovelace",
      }),
      tool("c2", "browser.type", { ref: refOf(last, "textbox", "Address"), text: "1 Main St" }),
      tool("c3", "browser.select", { ref: refOf(last, "combobox", "Country"), values: ["France"] }),
      tool("c4", "browser.click", { ref: refOf(last, "button", "Continue to payment") }),
      tool("c5", "browser.snapshot", {}),
    ].join("");
  }
  if (last.includes('"title":"Payment"')) {
    return [
      tool("d1", "browser.type", {
        ref: refOf(last, "textbox", "Card number"),
        text: "4242424242424242",
      }),
      tool("d2", "browser.type", { ref: refOf(last, "textbox", "Expiry"), text: "12/27" }),
      tool("d3", "browser.click", { ref: refOf(last, "button", "Pay now") }),
      tool("d4", "browser.snapshot", {}),
    ].join("");
  }
  return "<response>I cannot tell where we are.</response>";
});

function assemble(target: EventStore, provider = shopper) {
  return assembleAgent({
    workspace,
    home: workspace,
    store: target,
    continuity: "shop",
    env: {},
    agent: "shopper",
    provider,
    model: SMALL_MODEL,
  });
}

describe("Chromium killed in the middle of an agent's run", () => {
  it("restarts it, tells the agent, goes on to one order, and replays identically", async () => {
    const assembled = assemble(store);
    const runtime = createAgentRuntime({
      store,
      ...assembled.options,
      catalogue: smallCatalogue(32_768),
    });
    const result = await runtime.submit("shop", {
      text: "Buy what is in my cart.",
      actor: "ada",
      origin: "t",
    });
    await runtime.settled("shop");
    await runtime.close();
    await assembled.close();
    expect(killed).toBe(true);
    expect(result.status).toBe("completed");
    expect(apps.checkout.orders).toEqual([
      expect.objectContaining({ name: "Ada Lovelace", expiry: "12/27" }),
    ]);

    const events = await readAll(store, "shop");
    const lifecycle = events
      .filter((event) => event.type.startsWith("relic.") && event.type !== "relic.called")
      .map((event) => [event.type, (event.data as { restart?: number }).restart ?? ""]);
    expect(lifecycle).toEqual([
      ["relic.started", 0],
      ["relic.failed", ""],
      ["relic.stopped", ""],
      ["relic.started", 1],
      ["relic.stopped", ""],
    ]);
    expect(events.filter((event) => isEvent(event, "browser.crashed"))).toHaveLength(1);
    // The model was told, in the first browser call after the crash: the browser restarted and
    // the refs it held are gone.
    const failed = events
      .filter((event) => isEvent(event, "action.failed"))
      .map((event) => event.data as EventData<"action.failed">);
    expect(failed.map((data) => [data.action_id, data.error.code])).toEqual([
      ["b1", "relic.browser.unknown-ref"],
    ]);
    expect(failed[0]!.error.message).toContain("Chromium had crashed or was killed");
    expect(failed[0]!.error.message).toContain("it was restarted with the same profile");

    // Replay answers every browser call from the log: nothing is launched, the shop is not hit.
    const hits = [...apps.hits.values()].reduce((sum, n) => sum + n, 0);
    const replays: { close(): Promise<void> }[] = [];
    const report = await replayContinuity({
      source: store,
      continuity: "shop",
      stallMs: 5000,
      makeRuntime: ({ store: target, provider, intercept }) => {
        const again = assemble(target, provider as typeof shopper);
        replays.push(again);
        return createAgentRuntime({
          store: target,
          ...again.options,
          catalogue: smallCatalogue(32_768),
          intercept,
        });
      },
    });
    for (const again of replays) await again.close();
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
    expect([...apps.hits.values()].reduce((sum, n) => sum + n, 0)).toBe(hits);
  }, 180_000);
});
