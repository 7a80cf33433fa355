/**
 * Chromium killed in the middle of an agent's checkout (issue 17's proof): the relic logs
 * `browser.crashed`, the model's next browser call restarts Chromium with the same profile and
 * its answer says so (its ref, from before the crash, is refused as unknown), the model opens the
 * shop again, and the run goes on to place the order exactly once. The log replays identically
 * without launching a browser (the shop sees no request).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EventData, isEvent } from "../src/spec/index.js";
import { lastUser, refOf, tool } from "./support/browser-model.js";
import { chromiumPid } from "./support/browser-processes.js";
import { checkoutStep, openShopWorld, SHOP, type ShopWorld } from "./support/browser-shop.js";
import { answeringProvider, smallCatalogue } from "./support/continuity-run.js";
import { readAll } from "./support/transcripts.js";

let world: ShopWorld;

beforeAll(async () => {
  world = await openShopWorld("spool-browser-crash");
});
afterAll(async () => {
  await world?.close();
});

/** Resolves once the log has a `browser.crashed` event. */
async function crashLogged(): Promise<void> {
  const stop = new AbortController();
  for await (const message of world.store.subscribe({
    continuity: SHOP,
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
    return `${tool("r1", "browser.navigate", { url: `${world.apps.origin}/shop` })}${tool("r2", "browser.snapshot", {})}`;
  }
  if (last.includes('"title":"Cart"') && !killed) {
    killed = true;
    const logged = crashLogged();
    process.kill(chromiumPid(world.workspace), "SIGKILL");
    await logged;
  }
  const before = checkoutStep(last, world.apps.origin);
  if (before !== undefined) return before;
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

describe("Chromium killed in the middle of an agent's run", () => {
  it("restarts it, tells the agent, goes on to one order, and replays identically", async () => {
    const { store, apps } = world;
    const result = await world.shop("Buy what is in my cart.", shopper, smallCatalogue(32_768));
    expect(killed).toBe(true);
    expect(result.status).toBe("completed");
    expect(apps.checkout.orders).toEqual([
      expect.objectContaining({ name: "Ada Lovelace", expiry: "12/27" }),
    ]);

    const events = await readAll(store, SHOP);
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
    const hits = world.hits();
    const report = await world.replay(smallCatalogue(32_768));
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
    expect(world.hits()).toBe(hits);
  }, 180_000);
});
