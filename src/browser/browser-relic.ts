import { join } from "node:path";
import type { Page } from "playwright-core";
import type { Relic, RelicContext, RelicDescription } from "../relics/index.js";
import { createWorkspace } from "../tools/index.js";
import { BrowserError } from "./browser-error.js";
import { type BrowserMethod, PAGE_METHODS } from "./browser-methods.js";
import type { BrowserOptions } from "./browser-options.js";
import { BrowserSession } from "./browser-session.js";
import { INPUT_METHODS } from "./input-methods.js";
import { PageEventHub } from "./page-events.js";
import { TAB_METHODS } from "./tab-methods.js";

/** Every method of the browser relic, by name (`navigate`, `snapshot`, …). */
export const BROWSER_METHODS: Readonly<Record<string, BrowserMethod>> = {
  navigate: PAGE_METHODS.navigate,
  snapshot: PAGE_METHODS.snapshot,
  ...INPUT_METHODS,
  screenshot: PAGE_METHODS.screenshot,
  ...TAB_METHODS,
};

/** What `createBrowserRelic` needs. */
export interface BrowserRelicOptions {
  options: BrowserOptions;
  /** The agent's workspace (absolute): the profile lives in `.spool/browser/<continuity>/`. */
  workspace: string;
  /** Where `browser.type`'s `secret` values are read from (only names in `options.secrets`). */
  env: Readonly<Record<string, string | undefined>>;
  /** The page events, for the `browser` source (a new hub when absent). */
  events?: PageEventHub;
  /** The relic's name (default `browser`). */
  name?: string;
}

/** The browser relic, with the page-event hub its source reads. */
export interface BrowserRelic extends Relic {
  readonly events: PageEventHub;
  /**
   * The Playwright page of `tab` (default the active tab), for readers of the screen such as
   * the frames module's screencast. Rejects with `relic.browser.crashed` while the browser is
   * not running (its host starts it on the first browser call), `relic.browser.unknown-tab` for
   * a tab that is not open.
   */
  page(tab?: string): Promise<Page>;
}

/**
 * The `browser` relic: one Chromium with a persistent profile in
 * `<workspace>/.spool/browser/<continuity>/profile` (cookies and logins survive restarts),
 * started by its host on first use. When Chromium goes away on its own (killed, crashed), the
 * relic appends `browser.crashed` at once and fails its next call with the fatal
 * `relic.browser.crashed`, so the host stops it and starts it again on the call after
 * (`relic.failed`, `relic.stopped`, `relic.started` with `restart` > 0). `stop` closes Chromium.
 */
export function createBrowserRelic(relicOptions: BrowserRelicOptions): BrowserRelic {
  const { options } = relicOptions;
  const name = relicOptions.name ?? "browser";
  const events = relicOptions.events ?? new PageEventHub();
  const workspace = createWorkspace(relicOptions.workspace);
  let session: BrowserSession | undefined;
  // Kept across restarts: a page that shows a secret typed before a crash is still redacted.
  const secrets = new Map<string, string>();
  let context: RelicContext | undefined;
  const description: RelicDescription = {
    description:
      "A real Chromium the agent drives: navigate, snapshot with refs, click, type, tabs.",
    methods: Object.fromEntries(
      Object.entries(BROWSER_METHODS).map(([method, spec]) => [
        method,
        { description: spec.description, parameters: spec.parameters },
      ]),
    ),
  };
  const secret = (key: string) =>
    options.secrets.includes(key) && relicOptions.env[key] ? relicOptions.env[key] : undefined;
  return {
    name,
    events,
    describe: () => description,
    async page(tab) {
      if (!session) {
        throw new BrowserError("relic.browser.crashed", "the browser is not running", {
          retryable: true,
          hint: "Make a browser call first (its host starts Chromium on the first one)",
        });
      }
      return tab === undefined ? (await session.activePage()).page : session.page(tab);
    },
    async start(given) {
      context = given;
      const folder = given.continuity.replace(/[^A-Za-z0-9_.-]/g, "_");
      const profileDir = join(relicOptions.workspace, ".spool", "browser", folder, "profile");
      const started = await BrowserSession.open({
        options,
        profileDir,
        workspace,
        events,
        secrets,
        onCrash: (reason) => {
          void given.store
            .append({
              continuity: given.continuity,
              type: "browser.crashed",
              data: { relic: name, reason },
            })
            .catch(() => undefined);
        },
      });
      session = started;
    },
    async call(method, parameters, signal) {
      const spec = BROWSER_METHODS[method];
      if (!session || !context || !spec) {
        throw new BrowserError("relic.browser.crashed", "the browser is not running", {
          fatal: true,
          retryable: true,
        });
      }
      session.alive();
      const store = context.store;
      const running = spec.run(parameters, {
        session,
        secret,
        saveImage: async (bytes, mediaType) =>
          (await store.artifacts.put(bytes, { mediaType })).hash,
      });
      try {
        return await abortable(running, signal, method);
      } catch (error) {
        if (error instanceof BrowserError && error.code === "relic.browser.timeout") {
          const closed = await session.closeIfHung();
          if (closed)
            throw new BrowserError(error.code, `${error.message}. ${closed}`, { retryable: true });
        }
        throw error;
      } finally {
        await session.saveCookies();
      }
    },
    async stop() {
      const closing = session;
      session = undefined;
      await closing?.close();
    },
  };
}

function abortable<T>(work: Promise<T>, signal: AbortSignal, method: string): Promise<T> {
  if (signal.aborted) return Promise.reject(stopped(method));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(stopped(method));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function stopped(method: string) {
  return new BrowserError(
    "relic.browser.timeout",
    `browser.${method} was stopped: the action timed out or was cancelled`,
    {
      retryable: true,
      hint: "Run it again, with a longer timeout",
    },
  );
}
