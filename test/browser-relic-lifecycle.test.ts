/**
 * The browser relic's life: Chromium starts on the first call, signs in with a secret typed from
 * the environment (never in the log, a result, an error or a page event), keeps the session
 * cookie in its persistent profile, and when its process is killed the relic logs
 * `browser.crashed`, the next call restarts it (`relic.started` restart 1) and says so in its
 * result, still signed in. Closing the host stops it (`relic.stopped`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventData } from "../src/spec/index.js";
import {
  type BrowserApps,
  LOGIN_PASSWORD,
  startBrowserApps,
} from "./support/browser-apps/index.js";
import { type BrowserHarness, openBrowserHarness, refIn } from "./support/browser-harness.js";
import { chromiumPid, renderers } from "./support/browser-processes.js";
import { readAll } from "./support/transcripts.js";

let apps: BrowserApps;
let browser: BrowserHarness;

beforeAll(async () => {
  apps = await startBrowserApps();
  browser = await openBrowserHarness(
    { allow_hosts: [apps.host], secrets: ["SHOP_PASSWORD"] },
    { SHOP_PASSWORD: LOGIN_PASSWORD, OTHER_SECRET: "not-for-the-browser" },
  );
});
afterAll(async () => {
  await browser?.close();
  await apps?.close();
});

/** Resolves once the log has a `browser.crashed` event. */
async function crashLogged(): Promise<EventData<"browser.crashed">> {
  const stop = new AbortController();
  for await (const message of browser.store.subscribe({
    continuity: browser.continuity,
    types: ["browser.crashed"],
    signal: stop.signal,
  })) {
    if (message.type !== "event") continue;
    stop.abort();
    return message.event.data as EventData<"browser.crashed">;
  }
  throw new Error("the subscription ended before the crash was logged");
}

describe("the browser relic's lifecycle", () => {
  it("types a secret from the environment that never shows anywhere", async () => {
    await browser.call("navigate", { url: `${apps.origin}/login` });
    const form = (await browser.call("snapshot")).snapshot as string;
    await browser.call("type", { ref: refIn(form, /textbox "User name"/), text: "ada" });
    const password = refIn(form, /textbox "Password"/);
    const refused = await browser.fail("type", { ref: password, secret: "OTHER_SECRET" });
    expect(refused.code).toBe("relic.browser.secret-missing");
    expect(refused.message).toContain("browser.secrets");
    // A failing secret type (a button takes no text) says nothing of the value either.
    const wrong = await browser.fail("type", {
      ref: refIn(form, /button "Sign in"/),
      secret: "SHOP_PASSWORD",
    });
    expect(wrong.code).toBe("relic.browser.action-failed");
    const typed = await browser.call("type", { ref: password, secret: "SHOP_PASSWORD" });
    expect(typed.typed).toBe("secret SHOP_PASSWORD");
    const filled = (await browser.call("snapshot")).snapshot as string;
    expect(filled).toMatch(/textbox "Password" \[e\d+\] value=\[hidden\]/);
    const signedIn = await browser.call("click", { ref: refIn(form, /button "Sign in"/) });
    expect(signedIn).toMatchObject({ title: "Account" });
    expect(apps.login.attempts).toEqual([{ user: "ada", ok: true }]);

    const everything = JSON.stringify([
      await readAll(browser.store, browser.continuity),
      typed,
      filled,
      wrong.message,
      browser.takeEvents(),
    ]);
    expect(everything).not.toContain(LOGIN_PASSWORD);
    expect(everything).not.toContain("not-for-the-browser");
  });

  it("answers a crashed renderer with a typed error, and a navigation loads the page again", async () => {
    const { tab } = await browser.call("navigate", { url: `${apps.origin}/todo` });
    browser.takeEvents();
    for (const pid of renderers(chromiumPid(browser.workspace))) process.kill(pid, "SIGKILL");
    await browser.nextEvent(/the page crashed/);
    const error = await browser.fail("snapshot");
    expect(error.code).toBe("relic.browser.page-crashed");
    expect(error.message).toContain("crashed");
    const again = await browser.call("navigate", { url: `${apps.origin}/todo` });
    // The same tab, with a fresh page in it.
    expect(again).toMatchObject({ tab, title: "To-do" });
    expect(browser.takeEvents()).toContain(`[${tab}] tab reopened after its page crashed`);
    expect((await browser.call("snapshot")).snapshot).toContain('textbox "New to-do"');
  });

  it("restarts Chromium after it is killed, tells the agent, and is still signed in", async () => {
    const crashed = crashLogged();
    process.kill(chromiumPid(browser.workspace), "SIGKILL");
    expect((await crashed).reason).toContain("exited unexpectedly");
    expect(browser.takeEvents()).toContain(
      "browser crashed: Chromium exited unexpectedly (killed or crashed); it restarts on the next browser call",
    );

    const back = await browser.call("navigate", { url: `${apps.origin}/account` });
    expect(back).toMatchObject({ title: "Account", notice: expect.stringContaining("restarted") });
    const account = await browser.call("snapshot");
    expect(account.snapshot).toContain('"Signed in as ada"');
    const after = browser.takeEvents();
    const started = after.indexOf("browser started");
    expect(started).toBeGreaterThanOrEqual(0);
    expect(started).toBeLessThan(after.findIndex((line) => line.includes("navigated to")));

    await browser.host.close();
    const lifecycle = (await readAll(browser.store, browser.continuity))
      .filter((event) => event.type !== "relic.called")
      .map((event) => [event.type, (event.data as { restart?: number }).restart ?? ""]);
    expect(lifecycle).toEqual([
      ["relic.started", 0],
      ["browser.crashed", ""],
      ["relic.failed", ""],
      ["relic.stopped", ""],
      ["relic.started", 1],
      ["relic.stopped", ""],
    ]);
  });
});
