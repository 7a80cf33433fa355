/**
 * The browser tools drive a real Chromium through a three-step checkout served on loopback: the
 * snapshot's refs name the fields, typing and selecting fill them, and the shop's own record of
 * the order is what is checked. The expiry field rejects MM/YYYY; the agent sees the alert in the
 * next snapshot (also as a diff) and the order goes through with MM/YY. Refs stay the same across
 * snapshots of one page and are refused after the page is left.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrowserApps, startBrowserApps } from "./support/browser-apps/index.js";
import { type BrowserHarness, openBrowserHarness, refIn } from "./support/browser-harness.js";

let apps: BrowserApps;
let browser: BrowserHarness;

beforeAll(async () => {
  apps = await startBrowserApps();
  browser = await openBrowserHarness({ allow_hosts: [apps.host] });
});
afterAll(async () => {
  await browser?.close();
  await apps?.close();
});

describe("the checkout, driven through the browser tools", () => {
  it("fills three steps, is told MM/YYYY is refused, and places the order with MM/YY", async () => {
    const opened = await browser.call("navigate", { url: `${apps.origin}/shop` });
    expect(opened).toMatchObject({ tab: "t1", title: "Cart", status: 200 });
    const cart = (await browser.call("snapshot")).snapshot as string;
    expect(cart).toContain('heading[1] "Your cart"');
    expect(cart).toContain('"Tea sampler"');
    const clicked = await browser.call("click", { ref: refIn(cart, /button "Checkout"/) });
    expect(clicked).toMatchObject({ title: "Shipping", navigated: true });

    const shipping = (await browser.call("snapshot")).snapshot as string;
    await browser.call("type", {
      ref: refIn(shipping, /textbox "Full name"/),
      text: "Ada Lovelace",
    });
    await browser.call("type", {
      ref: refIn(shipping, /textbox "Address"/),
      text: "12 St James's Square",
    });
    const selected = await browser.call("select", {
      ref: refIn(shipping, /combobox "Country"/),
      values: ["France"],
    });
    expect(selected.selected).toEqual(["fr"]);
    // The refs of one document stay the same from snapshot to snapshot.
    const again = (await browser.call("snapshot")).snapshot as string;
    expect(refIn(again, /textbox "Full name"/)).toBe(refIn(shipping, /textbox "Full name"/));
    expect(again).toContain('textbox "Full name"');
    expect(again).toContain('value="Ada Lovelace"');
    const continueRef = refIn(again, /button "Continue to payment"/);
    await browser.call("click", { ref: continueRef });

    // The shipping page's refs are refused now that the tab has left it.
    const stale = await browser.fail("click", { ref: continueRef });
    expect(stale.code).toBe("relic.browser.stale-ref");
    expect(stale.message).toContain("fresh snapshot");

    const payment = (await browser.call("snapshot")).snapshot as string;
    expect(payment).toContain('placeholder="MM/YY"');
    await browser.call("type", {
      ref: refIn(payment, /textbox "Card number"/),
      text: "4242424242424242",
    });
    await browser.call("type", {
      ref: refIn(payment, /textbox "Expiry"/),
      text: "12/2027",
      submit: true,
    });
    expect(apps.checkout.orders).toEqual([]);
    const refused = await browser.call("snapshot", { diff: true });
    // A new document: nothing to diff against, so the whole page, alert included.
    expect(refused.snapshot).toContain('alert "Invalid expiry format. Use MM/YY."');
    expect(refused.snapshot).toContain("invalid");
    const fixed = refused.snapshot as string;
    await browser.call("type", { ref: refIn(fixed, /textbox "Expiry"/), text: "12/27" });
    const changed = await browser.call("snapshot", { diff: true });
    expect(changed.diff).toBe(true);
    expect(changed.snapshot).toMatch(/^\+ +textbox "Expiry" \[e\d+\] value="12\/27"/m);
    expect(changed.snapshot).toMatch(/^- +textbox "Expiry" \[e\d+\] value="12\/2027"/m);
    expect(changed.snapshot).not.toContain("Card number");
    const paid = await browser.call("click", { ref: refIn(fixed, /button "Pay now"/) });
    expect(paid).toMatchObject({ title: "Order confirmed" });

    expect(apps.checkout.orders).toEqual([
      {
        id: "A-1001",
        name: "Ada Lovelace",
        address: "12 St James's Square",
        country: "fr",
        card: "4242",
        expiry: "12/27",
        items: ["Blue mug", "Tea sampler", "Linen towel"],
      },
    ]);
    const done = await browser.call("snapshot", { selector: "main p" });
    expect(done.snapshot).toBe('"Your order number is A-1001."');
  });

  it("goes back and forward through the history and scopes snapshots by ref", async () => {
    const back = await browser.call("back");
    expect(back).toMatchObject({ moved: true });
    const forward = await browser.call("forward");
    expect(forward).toMatchObject({ title: "Order confirmed", moved: true });
    await browser.call("navigate", { url: `${apps.origin}/shop` });
    const whole = (await browser.call("snapshot")).snapshot as string;
    const list = await browser.call("snapshot", { selector: "ul" });
    expect(list.snapshot).toBe('ul:\n  "Blue mug"\n  "Tea sampler"\n  "Linen towel"');
    const button = await browser.call("snapshot", { ref: refIn(whole, /button "Checkout"/) });
    expect(button.snapshot).toMatch(/^button "Checkout" \[e\d+\]$/);
    const small = await browser.call("snapshot", { max_chars: 200 });
    expect(small.truncated).toBe(false);
  });
});
