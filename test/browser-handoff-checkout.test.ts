/**
 * A handoff in the middle of the checkout (issue 17's proof): an agent on the built-in `browser`
 * directive fills in the cart and shipping steps and the card number, and the step that typed the
 * card crosses the handoff trigger of a small window. Its summarizer is `browser_summarizer`, and
 * its answer is built only from the transcript its request holds (the page's URL, and the refs
 * and values of the last snapshot), so a transcript that lost the step crossing the trigger gives
 * a summary without the payment form. The continuation acts only on that summary: it finishes the
 * order on the page where the thread stopped, with the refs handed over, without navigating to a
 * page it had passed and without typing into a field already filled; the shop receives the card
 * typed before the handoff. The log replays identically without a browser (in process, with the
 * run's small catalogue: the CLI's replay would price the test model differently).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EventData, isEvent } from "../src/spec/index.js";
import { lastUser, plain, refOf, tool } from "./support/browser-model.js";
import { checkoutStep, openShopWorld, SHOP, type ShopWorld } from "./support/browser-shop.js";
import { answeringProvider, routedProvider, smallCatalogue } from "./support/continuity-run.js";
import { readAll } from "./support/transcripts.js";

const WINDOW = 16_384;
const CARD = "4242424242424242";

let world: ShopWorld;

beforeAll(async () => {
  world = await openShopWorld("spool-browser-handoff");
});
afterAll(async () => {
  await world?.close();
});

/**
 * The shopper. Before the handoff it follows the pages (refs read from each snapshot); the step
 * that types the card reports an input near the window, which crosses the trigger. After it, it
 * acts only on what the summary says.
 */
const shopper = answeringProvider((request) => {
  const whole = JSON.stringify(request);
  const last = lastUser(request);
  if (last.includes("Order confirmed")) return "<response>Order A-1001 is placed.</response>";
  if (whole.includes("## Current State")) {
    const summary = plain(whole.slice(whole.indexOf("## Current State")));
    const expiry = /Expiry \[(e\d+)\] is empty/.exec(summary)?.[1];
    const pay = /Pay now \[(e\d+)\]/.exec(summary)?.[1];
    if (!expiry || !pay) return "<response>The summary does not say where we are.</response>";
    return [
      tool("x1", "browser.type", { ref: expiry, text: "12/27" }),
      tool("x2", "browser.click", { ref: pay }),
      tool("x3", "browser.snapshot", {}),
    ].join("");
  }
  const before = checkoutStep(last, world.apps.origin);
  if (before !== undefined) return before;
  if (last.includes('"title":"Payment"')) {
    return {
      text: [
        tool("d1", "browser.type", { ref: refOf(last, "textbox", "Card number"), text: CARD }),
        tool("d2", "browser.snapshot", {}),
      ].join(""),
      usage: { inputTokens: Math.ceil(WINDOW * 0.95) },
    };
  }
  return "<response>Waiting.</response>";
});

/**
 * browser_summarizer's model: reads the transcript in its request and writes the state the seed
 * asks for, from the newest URL and snapshot there.
 */
const summarizer = answeringProvider((request) => {
  const transcript = plain(request.system ?? "");
  const url = [...transcript.matchAll(/"url":"([^"]+)"/g)].at(-1)?.[1] ?? "(unknown)";
  const card = /textbox "Card number" \[(e\d+)\] value="(\d*)"/g;
  const cardLine = [...transcript.matchAll(card)].at(-1);
  const expiry = refOf(transcript, "textbox", "Expiry");
  const pay = refOf(transcript, "button", "Pay now");
  const form =
    cardLine && expiry && pay
      ? `Card number [${cardLine[1]}] is filled (ends ${cardLine[2]!.slice(-4)}). Expiry [${expiry}] is empty. Pay now [${pay}].`
      : "No payment form seen.";
  return `<response>## Task
Buy what is in the cart.

## Current State
Tab t1 is on ${url}. ${form}

## What Was Tried
Cart and shipping (Ada Lovelace, France) are done.

## Hypothesis for Next Thread
Type the expiry as MM/YY, then click Pay now.

## Pending
The payment.</response>`;
});

describe("a handoff in the middle of the checkout", () => {
  it("finishes from the summary on the same page, without re-navigating or re-typing", async () => {
    const { store, apps } = world;
    const result = await world.shop(
      "Buy what is in my cart.",
      routedProvider(shopper, summarizer),
      smallCatalogue(WINDOW),
    );
    expect(result.status).toBe("completed");

    const events = await readAll(store, SHOP);
    const continued = events.filter((event) => isEvent(event, "thread.continued"));
    expect(continued).toHaveLength(1);
    const completed = events.find((event) => isEvent(event, "summary.completed"))!;
    expect((completed.data as EventData<"summary.completed">).summarizer).toBe(
      "browser_summarizer",
    );
    // The order holds the shipping and the card typed before the handoff, and the expiry after.
    expect(apps.checkout.orders).toEqual([
      expect.objectContaining({
        name: "Ada Lovelace",
        country: "fr",
        card: CARD.slice(-4),
        expiry: "12/27",
      }),
    ]);

    // After the handoff: the three actions the summary called for, on the refs it handed over.
    const continuation = (continued[0]!.data as EventData<"thread.continued">).continuation;
    const after = events
      .filter(
        (event) =>
          isEvent(event, "action.dispatched") && event.stream.id.startsWith(`${continuation}:`),
      )
      .map((event) => {
        const data = event.data as EventData<"action.dispatched">;
        return [data.name, (data.parameters as { ref?: string }).ref ?? null];
      });
    const before = events.filter(
      (event) =>
        isEvent(event, "action.dispatched") && !event.stream.id.startsWith(`${continuation}:`),
    );
    const typedCard = before
      .map((event) => event.data as EventData<"action.dispatched">)
      .find((data) => (data.parameters as { text?: string }).text === CARD);
    expect(typedCard).toBeDefined();
    expect(after.map(([name]) => name)).toEqual([
      "browser.type",
      "browser.click",
      "browser.snapshot",
    ]);
    // No navigation, and nothing typed into a field filled before the handoff.
    expect(after.map(([, ref]) => ref)).not.toContain(
      (typedCard!.parameters as { ref: string }).ref,
    );
    // Each page of the checkout was reached once: nothing went back to a page already passed.
    expect(apps.hits.get("/shop")).toBe(1);
    expect(apps.hits.get("/shop/shipping")).toBe(2);
    expect(apps.hits.get("/shop/payment")).toBe(2);

    // The log replays identically with no browser: the shop sees no request.
    const hits = world.hits();
    const report = await world.replay(smallCatalogue(WINDOW));
    expect(report.difference).toBeUndefined();
    expect(report.identical).toBe(true);
    expect(world.hits()).toBe(hits);
  }, 180_000);
});
