/**
 * Pages that misbehave cannot hang, flood or mislead the browser relic: a page that never answers
 * ends in a typed timeout; an endless `alert()` loop is dismissed and reported without hanging
 * the next call; a 50 MB page gives a bounded snapshot; a ref from another tab is refused; and
 * no page (navigation, redirect or image) reaches a loopback service that `allow_hosts` does not
 * list, nor a `file:` URL.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrowserApps, startBrowserApps } from "./support/browser-apps/index.js";
import { type BrowserHarness, openBrowserHarness, refIn } from "./support/browser-harness.js";

let apps: BrowserApps;
let browser: BrowserHarness;
/** A "local service" on another loopback port, which the agent's browser may not reach. */
let service: Server;
let serviceHits = 0;
let serviceOrigin: string;

beforeAll(async () => {
  apps = await startBrowserApps();
  service = createServer((_req, res) => {
    serviceHits += 1;
    res.end("secret admin panel");
  });
  await new Promise<void>((resolve) => service.listen(0, "127.0.0.1", resolve));
  serviceOrigin = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
  browser = await openBrowserHarness({ allow_hosts: [apps.host], snapshot_chars: 5_000 });
});
afterAll(async () => {
  await browser?.close();
  await apps?.close();
  await new Promise((resolve) => service?.close(resolve));
});

describe("hostile and broken pages", () => {
  it("ends a navigation to a page that never answers with a typed timeout", async () => {
    const error = await browser.fail("navigate", {
      url: `${apps.origin}/never`,
      timeout_ms: 1_500,
    });
    expect(error.code).toBe("relic.browser.timeout");
    expect(error.message).toContain(`opening ${apps.origin}/never timed out`);
    const waited = await browser.fail("wait_for", { text: "never there", timeout_ms: 500 });
    expect(waited.code).toBe("relic.browser.timeout");
  });

  it("dismisses an endless alert() loop, reports the dialogs, and still answers", async () => {
    browser.takeEvents();
    const { active: tab } = await browser.call("tabs");
    const result = await browser.fail("navigate", {
      url: `${apps.origin}/alerts`,
      timeout_ms: 5_000,
    });
    expect(result.code).toMatch(/^relic\.browser\.(timeout|action-failed)$/);
    const events = browser.takeEvents();
    const dialogs = events.filter((line) => line.endsWith('dialog alert "again" dismissed'));
    expect(dialogs).toHaveLength(30);
    expect(events).toContain(
      `[${tab}] the page kept opening dialogs (over 30); its tab was closed`,
    );
    // Away from it, the browser works as before.
    const away = await browser.call("navigate", { url: `${apps.origin}/shop` });
    expect(away).toMatchObject({ title: "Cart" });
    expect(away.tab).not.toBe(tab);
  });

  it("gives a bounded snapshot of a 50 MB page", async () => {
    await browser.call("navigate", { url: `${apps.origin}/huge`, timeout_ms: 60_000 });
    const result = await browser.call("snapshot", { timeout_ms: 60_000 });
    expect(result.truncated).toBe(true);
    expect((result.snapshot as string).length).toBeLessThanOrEqual(5_000 + 200);
    expect(result.snapshot).toContain('button "First button"');
    expect(result.snapshot).toContain("scope the snapshot with ref or selector");
  });

  it("refuses a ref from another tab, and after switching takes it", async () => {
    const { tab: opener } = await browser.call("navigate", { url: `${apps.origin}/opener` });
    const first = (await browser.call("snapshot")).snapshot as string;
    // An icon hidden from assistive technology is no part of the button's name.
    expect(first).toMatch(/button "Open shop" \[e\d+\]/);
    const clicked = await browser.call("click", { ref: refIn(first, /link "Open to-do/) });
    // The click's answer already names the tab it opened, and the next call lists it.
    expect(clicked).toMatchObject({ tab: opener, navigated: false });
    expect(clicked.opened_tabs).toHaveLength(1);
    const popup = (clicked.opened_tabs as string[])[0]!;
    const listed = await browser.call("tabs", { action: "list" });
    const tabs = listed.tabs as { tab: string; url: string; active: boolean }[];
    expect(tabs.map((item) => [item.tab, item.active])).toEqual([
      [opener, true],
      [popup, false],
    ]);
    // A script's window.open is known the same way.
    const shop = await browser.call("click", { ref: refIn(first, /button "Open shop"/) });
    expect(shop.opened_tabs).toHaveLength(1);
    await browser.call("tabs", { action: "close", tab: (shop.opened_tabs as string[])[0]! });
    await browser.call("tabs", { action: "switch", tab: opener });
    await browser.call("tabs", { action: "switch", tab: popup });
    const todo = (await browser.call("snapshot")).snapshot as string;
    const add = refIn(todo, /button "Add"/);
    await browser.call("tabs", { action: "switch", tab: opener });
    const error = await browser.fail("click", { ref: add });
    expect(error.code).toBe("relic.browser.other-tab-ref");
    expect(error.message).toContain(`{"action":"switch","tab":"${popup}"}`);
    await browser.call("tabs", { action: "switch", tab: popup });
    await browser.call("type", { ref: refIn(todo, /textbox "New to-do"/), text: "water plants" });
    await browser.call("click", { ref: add });
    await browser.call("wait_for", { text: "1 left" });
    expect(apps.todo.todos).toEqual([{ id: 1, text: "water plants", done: false }]);
    const closed = await browser.call("tabs", { action: "close", tab: popup });
    expect((closed.tabs as { tab: string }[]).map((item) => item.tab)).toEqual([opener]);
    const unknown = await browser.fail("click", { ref: "e999999" });
    expect(unknown.code).toBe("relic.browser.unknown-ref");
  });

  it("never reaches a private address allow_hosts does not list: not by navigation, redirect or image", async () => {
    const direct = await browser.fail("navigate", { url: `${serviceOrigin}/admin` });
    expect(direct.code).toBe("relic.browser.host-not-allowed");
    expect(direct.message).toContain("browser.allow_hosts");
    const named = await browser.fail("navigate", { url: "http://localhost:9/" });
    expect(named.code).toBe("relic.browser.host-not-allowed");
    const file = await browser.fail("navigate", { url: "file:///etc/passwd" });
    expect(file.code).toBe("relic.browser.host-not-allowed");
    expect(file.message).toContain("allow_file");

    browser.takeEvents();
    const redirected = await browser.fail("navigate", {
      url: `${apps.origin}/redirect?to=${encodeURIComponent(`${serviceOrigin}/admin`)}`,
    });
    expect(redirected.code).toBe("relic.browser.host-not-allowed");
    await browser.call("navigate", {
      url: `${apps.origin}/embed?src=${encodeURIComponent(`${serviceOrigin}/pixel.png`)}`,
    });
    expect(serviceHits).toBe(0);
    const events = browser.takeEvents();
    const port = new URL(serviceOrigin).port;
    // At least the redirect and the image (Chromium may try a refused request more than once).
    expect(
      events.filter((line) => line.startsWith(`blocked request to 127.0.0.1:${port}`)).length,
    ).toBeGreaterThanOrEqual(2);
  });

  it("reports console errors and failed requests as page events", async () => {
    browser.takeEvents();
    const { tab } = await browser.call("navigate", {
      url: `${apps.origin}/console`,
      wait_until: "networkidle",
    });
    const events = browser.takeEvents();
    expect(events).toContain(`[${tab}] console error: boom from the page`);
    expect(events).toContain(`[${tab}] request failed: GET ${apps.origin}/missing (status 404)`);
    expect(events).toContain(`[${tab}] navigated to ${apps.origin}/console`);
  });
});
