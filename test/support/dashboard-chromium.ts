/**
 * One real Chromium (`@sparticuz/chromium` through playwright-core) for a dashboard test file:
 * headless, loopback only, a fresh context per page so each test starts with empty storage.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";

/** A launched Chromium and a way to open a fresh page in it. */
export interface DashboardChromium {
  browser: Browser;
  /** A page in a new context (its own localStorage), with `token` stored if given. */
  open(baseUrl: string, token?: string): Promise<{ page: Page; context: BrowserContext }>;
  close(): Promise<void>;
}

/** Starts Chromium; rejects when it cannot start. */
export async function launchDashboardChromium(): Promise<DashboardChromium> {
  const [{ chromium }, { default: sparticuz }] = await Promise.all([
    import("playwright-core"),
    import("@sparticuz/chromium"),
  ]);
  const browser = await chromium.launch({
    executablePath: await sparticuz.executablePath(),
    args: ["--no-sandbox", "--disable-gpu", "--no-proxy-server"],
    headless: true,
    timeout: 60_000,
  });
  return {
    browser,
    async open(baseUrl, token) {
      const context = await browser.newContext({
        baseURL: baseUrl,
        viewport: { width: 1280, height: 900 },
      });
      if (token !== undefined) {
        // Runs in the page (a string: the test's own typings have no DOM).
        const value = JSON.stringify(token);
        await context.addInitScript({
          content: `if (!localStorage.getItem("spool.token")) localStorage.setItem("spool.token", ${value});`,
        });
      }
      const page = await context.newPage();
      return { page, context };
    },
    close: () => browser.close(),
  };
}
