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
import { lastUser, plain, refOf, tool } from "./support/browser-model.js";
import {
  answeringProvider,
  routedProvider,
  SMALL_MODEL,
  smallCatalogue,
} from "./support/continuity-run.js";
import { readAll, tempStore } from "./support/transcripts.js";

const WINDOW = 16_384;
const CARD = "4242424242424242";

let apps: BrowserApps;
let store: EventStore;
let cleanup: () => Promise<void>;
let workspace: string;

beforeAll(async () => {
  apps = await startBrowserApps();
  ({ store, cleanup } = await tempStore("spool-browser-handoff-"));
  workspace = mkdtempSync(join(tmpdir(), "spool-browser-handoff-ws-"));
  mkdirSync(join(workspace, ".ai", "agents"), { recursive: true });
});
afterAll(async () => {
  await cleanup?.();
  await apps?.close();
  rmSync(workspace, { recursive: true, force: true });
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
  if (last.includes("Buy what is in my cart")) {
    return `${tool("a1", "browser.navigate", { url: `${apps.origin}/shop` })}${tool("a2", "browser.snapshot", {})}`;
  }
  if (last.includes('"title":"Cart"')) {
    return `${tool("b1", "browser.click", { ref: refOf(last, "button", "Checkout") })}${tool("b2", "browser.snapshot", {})}`;
  }
  if (last.includes('"title":"Shipping"')) {
    return [
      tool("c1", "browser.type", {
        ref: refOf(last, "textbox", "Full name"),
        text: "Ada Lovelace",
      }),
      tool("c2", "browser.type", {
        ref: refOf(last, "textbox", "Address"),
        text: "12 St James's Square",
      }),
      tool("c3", "browser.select", { ref: refOf(last, "combobox", "Country"), values: ["France"] }),
      tool("c4", "browser.click", { ref: refOf(last, "button", "Continue to payment") }),
      tool("c5", "browser.snapshot", {}),
    ].join("");
  }
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
    writeFileSync(
      join(workspace, ".ai", "agents", "shopper.yaml"),
      `directive: browser\nbrowser:\n  allow_hosts: ["${apps.host}"]\n  events: false\n`,
    );
    const assembled = assembleAgent({
      workspace,
      home: workspace,
      store,
      continuity: "shop",
      env: {},
      agent: "shopper",
      provider: routedProvider(shopper, summarizer),
      model: SMALL_MODEL,
    });
    const runtime = createAgentRuntime({
      store,
      ...assembled.options,
      catalogue: smallCatalogue(WINDOW),
    });
    const result = await runtime.submit("shop", {
      text: "Buy what is in my cart.",
      actor: "ada",
      origin: "t",
    });
    await runtime.settled("shop");
    await runtime.close();
    await assembled.close();
    expect(result.status).toBe("completed");

    const events = await readAll(store, "shop");
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
    const hits = [...apps.hits.values()].reduce((sum, n) => sum + n, 0);
    const replays: { close(): Promise<void> }[] = [];
    const report = await replayContinuity({
      source: store,
      continuity: "shop",
      stallMs: 5000,
      makeRuntime: ({ store: target, provider, intercept }) => {
        const again = assembleAgent({
          workspace,
          home: workspace,
          store: target,
          continuity: "shop",
          env: {},
          agent: "shopper",
          provider,
          model: SMALL_MODEL,
        });
        replays.push(again);
        return createAgentRuntime({
          store: target,
          ...again.options,
          catalogue: smallCatalogue(WINDOW),
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
