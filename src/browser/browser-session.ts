import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { BrowserContext, Dialog, Download, Page } from "playwright-core";
import type { Workspace } from "../tools/index.js";
import { type AddressPolicy, checkBrowserUrl } from "./address-policy.js";
import { BrowserError, briefMessage, within } from "./browser-error.js";
import type { BrowserOptions } from "./browser-options.js";
import { launchChromium } from "./chromium-launch.js";
import { OPEN_COUNTER_SCRIPT, withNewTabs } from "./new-tabs.js";
import type { PageEventHub } from "./page-events.js";
import { type PolicyProxy, startPolicyProxy } from "./policy-proxy.js";
import { RefBook } from "./ref-book.js";

/** What a browser session is opened with. */
export interface BrowserSessionOptions {
  options: BrowserOptions;
  /** The persistent profile folder (absolute). */
  profileDir: string;
  workspace: Workspace;
  events: PageEventHub;
  /** Called once when Chromium goes away without being asked to (killed, crashed). */
  onCrash(reason: string): void;
  /** Secret values typed so far (name → value), kept by the relic across restarts. */
  secrets: Map<string, string>;
}

/** Dialogs one document may open before its tab is closed as a runaway. */
export const DIALOGS_PER_PAGE = 30;

/** Downloads remembered for `browser.tabs` `list` at most. */
const DOWNLOADS_KEPT = 20;

/**
 * One running Chromium with its persistent profile, its tabs (`t1`, `t2`, … in the order they
 * opened), the refs its snapshots handed out, and its page events. The policy proxy is started
 * first and every connection goes through it. `close` stops Chromium and the proxy; a session
 * whose browser went away on its own is `crashed` and refuses further work with a fatal
 * `relic.browser.crashed`.
 */
export class BrowserSession {
  readonly options: BrowserOptions;
  readonly policy: AddressPolicy;
  readonly refs = new RefBook();
  readonly events: PageEventHub;
  readonly workspace: Workspace;
  /** Secret values typed so far (name → value): never shown in results, errors or events. */
  readonly secrets: Map<string, string>;
  readonly downloads: string[] = [];
  #context!: BrowserContext;
  #proxy!: PolicyProxy;
  #tabs = new Map<string, Page>();
  #ids = new WeakMap<Page, string>();
  #nextTab = 1;
  #active: string | undefined;
  #closing = false;
  /** Pages whose renderer died (Playwright can do nothing more with them). */
  #crashedPages = new WeakSet<Page>();
  /** The tab a crashed page's replacement takes over, while it opens. */
  #revivingAs: string | undefined;
  #cookieFile = "";
  crashed: string | undefined;

  private constructor(session: BrowserSessionOptions) {
    this.options = session.options;
    this.policy = { allowHosts: session.options.allowHosts, allowFile: session.options.allowFile };
    this.events = session.events;
    this.workspace = session.workspace;
    this.secrets = session.secrets;
  }

  /** Starts the proxy and Chromium; rejects with `relic.browser.launch-failed` when it cannot. */
  static async open(session: BrowserSessionOptions): Promise<BrowserSession> {
    const self = new BrowserSession(session);
    self.events.setRedactor((text) => self.redact(text));
    self.#proxy = await startPolicyProxy(self.policy, (refusal) =>
      self.events.push(
        `blocked request to ${refusal.host}:${refusal.port}${refusal.address && refusal.address !== refusal.host ? ` (${refusal.address})` : ""}: a local or private address not in browser.allow_hosts`,
      ),
    );
    const downloadsDir = join(
      session.profileDir,
      "..",
      `${session.profileDir.split("/").pop()}-downloads`,
    );
    try {
      await mkdir(session.profileDir, { recursive: true });
      self.#context = await launchChromium({
        profileDir: session.profileDir,
        headless: session.options.headless,
        viewport: session.options.viewport,
        proxy: self.#proxy.url,
        downloadsDir,
      });
    } catch (error) {
      await self.#proxy.close();
      throw new BrowserError(
        "relic.browser.launch-failed",
        `Chromium did not start: ${briefMessage(error)}`,
        {
          cause: error,
          retryable: true,
          hint: "The next call tries again; if it keeps failing, the operator should check that the machine can run Chromium (docs/browser.md)",
        },
      );
    }
    self.#cookieFile = join(session.profileDir, "..", "cookies.json");
    await self.#restoreCookies();
    self.#context.on("close", () => {
      if (self.#closing) return;
      self.crashed = "Chromium exited unexpectedly (killed or crashed)";
      self.events.push(`browser crashed: ${self.crashed}; it restarts on the next browser call`);
      session.onCrash(self.crashed);
    });
    await self.#context.addInitScript({ content: OPEN_COUNTER_SCRIPT });
    self.#context.on("page", (page) => self.#adopt(page, true));
    for (const page of self.#context.pages()) self.#adopt(page, false);
    self.events.push("browser started");
    return self;
  }

  /** The value of every typed secret replaced by `[secret NAME]`. */
  redact(text: string): string {
    let out = text;
    for (const [name, value] of this.secrets) {
      if (value !== "") out = out.split(value).join(`[secret ${name}]`);
    }
    return out;
  }

  /** Throws the fatal crash error when Chromium went away. */
  alive(): void {
    if (this.crashed === undefined) return;
    throw new BrowserError("relic.browser.crashed", `the browser is down: ${this.crashed}`, {
      fatal: true,
      retryable: true,
      hint: "It is restarted with the same profile on the next call; open pages are lost",
    });
  }

  /**
   * The active tab's id and page, opening a blank tab when none is left. A tab whose renderer
   * crashed is refused (`relic.browser.page-crashed`), unless `reviving` (a navigation): then the
   * tab gets a fresh page under the same id.
   */
  async activePage(reviving = false): Promise<{ tab: string; page: Page }> {
    this.alive();
    const page = this.#active ? this.#tabs.get(this.#active) : undefined;
    if (page && !page.isClosed()) {
      if (this.#crashedPages.has(page) && reviving) {
        return {
          tab: this.#active as string,
          page: await this.#revive(this.#active as string, page),
        };
      }
      if (this.#crashedPages.has(page)) {
        throw new BrowserError(
          "relic.browser.page-crashed",
          `the page in tab ${this.#active} crashed (its renderer died) and shows nothing`,
          {
            retryable: true,
            hint: "Load it again with browser.navigate (the URL you were on), or switch to another tab",
          },
        );
      }
      return { tab: this.#active as string, page };
    }
    const opened = await this.#context.newPage();
    const tab = this.#adopt(opened, false);
    this.#active = tab;
    return { tab, page: opened };
  }

  /**
   * Runs `work` (an input on `page`) and returns its value with the ids of the tabs it opened,
   * waiting for each tab the page said it opened, so the result and the next call know of it.
   */
  async opening<T>(page: Page, ms: number, work: () => Promise<T>) {
    const { value, opened } = await withNewTabs(this.#context, page, ms, work);
    return { value, tabs: opened.map((added) => this.#adopt(added, true)) };
  }

  /** The page of `tab`, or throws `relic.browser.unknown-tab` listing the open tabs. */
  page(tab: string): Page {
    const page = this.#tabs.get(tab);
    if (page && !page.isClosed()) return page;
    throw new BrowserError("relic.browser.unknown-tab", `there is no open tab "${tab}"`, {
      hint: `Use one of: ${[...this.#tabs.keys()].join(", ") || "(none)"}; browser.tabs {"action":"list"} lists them`,
    });
  }

  get activeTab(): string | undefined {
    return this.#active;
  }

  /** Makes `tab` the one later calls act on. */
  activate(tab: string): Page {
    const page = this.page(tab);
    this.#active = tab;
    return page;
  }

  /** The open tabs, in the order they opened. */
  tabs(): { tab: string; page: Page }[] {
    return [...this.#tabs]
      .filter(([, page]) => !page.isClosed())
      .map(([tab, page]) => ({ tab, page }));
  }

  /** Opens a new tab (at `url`, checked first) and makes it active. */
  async openTab(): Promise<{ tab: string; page: Page }> {
    this.alive();
    const page = await this.#context.newPage();
    const tab = this.#ids.get(page) ?? this.#adopt(page, false);
    this.#active = tab;
    return { tab, page };
  }

  /** Checks a URL the agent asked for against the host policy. */
  checkUrl(url: string): URL {
    return checkBrowserUrl(this.policy, url);
  }

  /**
   * After a call timed out: when the active tab no longer runs even a trivial script (a page stuck
   * in a loop, an endless run of dialogs), closes it without its unload handlers and says so.
   * Returns the sentence to add to the error, or undefined when the tab still responds.
   */
  async closeIfHung(): Promise<string | undefined> {
    const tab = this.#active;
    const page = tab ? this.#tabs.get(tab) : undefined;
    if (!tab || !page || page.isClosed() || this.crashed) return undefined;
    const alive = await within(page.evaluate("1"), 1_000, "probing the page").then(
      () => true,
      () => false,
    );
    if (alive) return undefined;
    this.events.push(`[${tab}] the page stopped responding (a script loop?); its tab was closed`);
    await within(page.close({ runBeforeUnload: false }), 5_000, "closing the tab").catch(
      () => undefined,
    );
    return `Tab ${tab} stopped responding (a script loop or endless dialogs) and was closed; the next call opens a fresh tab`;
  }

  /**
   * Writes the browser's cookies (session cookies included) beside the profile. Chromium writes its
   * own cookie store only now and then, so a killed browser would lose a fresh login; the relic
   * calls this after every call and the next start puts them back. Never rejects.
   */
  async saveCookies(): Promise<void> {
    if (this.crashed || this.#closing) return;
    try {
      const cookies = await within(this.#context.cookies(), 2_000, "reading cookies");
      await writeFile(this.#cookieFile, JSON.stringify(cookies), { mode: 0o600 });
    } catch {
      // Best effort: Chromium's own store still has every cookie it flushed.
    }
  }

  async #restoreCookies(): Promise<void> {
    let saved: unknown;
    try {
      saved = JSON.parse(await readFile(this.#cookieFile, "utf8"));
    } catch {
      return;
    }
    if (!Array.isArray(saved)) return;
    await this.#context.addCookies(saved).catch(() => undefined);
  }

  /** Stops Chromium and the proxy. Never rejects. */
  async close(): Promise<void> {
    await this.saveCookies();
    this.#closing = true;
    await this.#context?.close().catch(() => undefined);
    await this.#proxy?.close().catch(() => undefined);
  }

  /** Replaces the crashed page of `tab` by a fresh one under the same id. */
  async #revive(tab: string, crashed: Page): Promise<Page> {
    this.#revivingAs = tab;
    let fresh: Page;
    try {
      fresh = await this.#context.newPage();
      this.#adopt(fresh, false);
    } finally {
      this.#revivingAs = undefined;
    }
    crashed.removeAllListeners("close");
    await crashed.close({ runBeforeUnload: false }).catch(() => undefined);
    this.events.push(`[${tab}] tab reopened after its page crashed`);
    return fresh;
  }

  /** Gives `page` a tab id and wires its events; `popup` when the page opened it itself. */
  #adopt(page: Page, popup: boolean): string {
    const known = this.#ids.get(page);
    if (known) return known;
    const reviving = this.#revivingAs;
    const tab = reviving ?? `t${this.#nextTab++}`;
    this.#ids.set(page, tab);
    this.#tabs.set(tab, page);
    this.#active ??= tab;
    const say = (line: string) => this.events.push(`[${tab}] ${line}`);
    if (popup && reviving === undefined) {
      const opener = page.opener();
      void opener.then(
        (by) =>
          say(`new tab${by ? ` opened by ${this.#ids.get(by) ?? "a page"}` : ""}: ${page.url()}`),
        () => say(`new tab: ${page.url()}`),
      );
    }
    page.setDefaultTimeout(this.options.timeoutMs);
    page.on("framenavigated", (frame) => {
      if (frame === page.mainFrame()) {
        dialogs = 0;
        say(`navigated to ${frame.url()}`);
        if (frame.url().startsWith("file:") && !this.options.allowFile) {
          void page.goto("about:blank").catch(() => undefined);
        }
      }
    });
    page.on("load", () => say(`loaded ${page.url()}`));
    page.on("console", (message) => {
      if (message.type() === "error") say(`console error: ${message.text()}`);
    });
    page.on("pageerror", (error) => say(`page error: ${briefMessage(error)}`));
    page.on("requestfailed", (request) =>
      say(
        `request failed: ${request.method()} ${request.url()} (${request.failure()?.errorText ?? "failed"})`,
      ),
    );
    page.on("response", (response) => {
      if (response.status() >= 400) {
        say(
          `request failed: ${response.request().method()} ${response.url()} (status ${response.status()})`,
        );
      }
    });
    let dialogs = 0;
    page.on("dialog", (dialog) => {
      dialogs += 1;
      if (dialogs <= DIALOGS_PER_PAGE) return this.#dialog(dialog, say);
      void dialog.dismiss().catch(() => undefined);
      if (dialogs === DIALOGS_PER_PAGE + 1) {
        say(`the page kept opening dialogs (over ${DIALOGS_PER_PAGE}); its tab was closed`);
        void page.close({ runBeforeUnload: false }).catch(() => undefined);
      }
    });
    page.on("download", (download) => void this.#download(download, say));
    page.on("crash", () => {
      this.#crashedPages.add(page);
      say("the page crashed (its renderer died); navigate to load it again");
    });
    page.on("close", () => {
      say("tab closed");
      this.#tabs.delete(tab);
      if (this.#active === tab) this.#active = [...this.#tabs.keys()].at(-1);
    });
    return tab;
  }

  #dialog(dialog: Dialog, say: (line: string) => void): void {
    // Leaving a page is the agent's decision: a beforeunload prompt never keeps it there.
    const policy = dialog.type() === "beforeunload" ? "accept" : this.options.dialogs;
    say(
      `dialog ${dialog.type()} ${JSON.stringify(dialog.message().slice(0, 300))} ${policy === "accept" ? "accepted" : "dismissed"}`,
    );
    const answer = policy === "accept" ? dialog.accept() : dialog.dismiss();
    void answer.catch(() => undefined);
  }

  async #download(download: Download, say: (line: string) => void): Promise<void> {
    const name = download.suggestedFilename().replace(/[/\\]/g, "_") || "download";
    try {
      const target = await this.workspace.resolve(
        `downloads/${Date.now().toString(36)}-${name}`,
        "write",
      );
      await mkdir(dirname(target.real), { recursive: true });
      await download.saveAs(target.real);
      await rm(await download.path(), { force: true }).catch(() => undefined);
      this.downloads.push(target.relative);
      if (this.downloads.length > DOWNLOADS_KEPT) this.downloads.shift();
      say(`download saved to ${target.relative} (from ${download.url()})`);
    } catch (error) {
      say(`download of ${name} failed: ${briefMessage(error)}`);
    }
  }
}
