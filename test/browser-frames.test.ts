/**
 * Iframes: a snapshot shows each visible frame's content under an `iframe "<title>":` line, with
 * refs that act inside the frame — a frame of the same site and one of another site (out of
 * process) alike — and a ref from a frame that has since navigated is refused as stale.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrowserApps, startBrowserApps } from "./support/browser-apps/index.js";
import { type BrowserHarness, openBrowserHarness, refIn } from "./support/browser-harness.js";

let apps: BrowserApps;
let browser: BrowserHarness;
let other: string;

beforeAll(async () => {
  apps = await startBrowserApps();
  other = `localhost:${apps.host.split(":")[1]}`;
  browser = await openBrowserHarness({ allow_hosts: [apps.host, other] });
});
afterAll(async () => {
  await browser?.close();
  await apps?.close();
});

describe("iframes", () => {
  it("gives refs inside same-site and cross-site frames, and refuses them once the frame moved", async () => {
    await browser.call("navigate", { url: `${apps.origin}/frames` });
    await browser.call("wait_for", { network_idle: true });
    const first = (await browser.call("snapshot")).snapshot as string;
    const lines = first.split("\n");
    // Each frame's content sits indented under its line.
    const newsletter = lines.indexOf('iframe "Newsletter":');
    expect(newsletter).toBeGreaterThanOrEqual(0);
    expect(lines.slice(newsletter + 1, newsletter + 4)).toEqual([
      '  "Email"',
      expect.stringMatching(/^ {2}textbox "Email" \[e\d+\] value=""$/),
      expect.stringMatching(/^ {2}button "Subscribe" \[e\d+\]$/),
    ]);
    const widget = lines.indexOf('iframe "Payment widget":');
    expect(lines[widget + 1]).toMatch(/^ {2}button "Pay 5 EUR" \[e\d+\]$/);

    await browser.call("type", { ref: refIn(first, /textbox "Email"/), text: "ada@example.com" });
    await browser.call("click", { ref: refIn(first, /button "Subscribe"/) });
    await browser.call("click", { ref: refIn(first, /button "Pay 5 EUR"/) });
    // wait_for looks inside frames too.
    await browser.call("wait_for", { text: "Subscribed ada@example.com" });
    const second = (await browser.call("snapshot")).snapshot as string;
    expect(second).toContain('"Subscribed ada@example.com"');
    expect(second).toContain('button "Paid"');
    expect(apps.hits.get("/frames/paid")).toBe(1);
    // Refs stay the same elements across snapshots, inside frames too.
    expect(refIn(second, /textbox "Email"/)).toBe(refIn(first, /textbox "Email"/));

    // Reloading the page gives the frames new documents: their old refs are stale.
    await browser.call("navigate", { url: `${apps.origin}/frames` });
    const stale = await browser.fail("click", { ref: refIn(first, /button "Subscribe"/) });
    expect(stale.code).toBe("relic.browser.stale-ref");
  });
});
