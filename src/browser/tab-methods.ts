import type { Frame, Locator } from "playwright-core";
import { z } from "zod";
import { BrowserError, briefMessage, within } from "./browser-error.js";
import { define, locate, type MethodContext, ref, timeout, where } from "./browser-methods.js";

const waitFor = define({
  description:
    "Waits until text is visible, a CSS selector is visible (in the page or any of its frames), the next navigation has loaded, or the network is idle (give one), up to timeout_ms.",
  parameters: z
    .strictObject({
      text: z.string().min(1).max(1_000).optional(),
      selector: z.string().min(1).max(500).optional(),
      navigation: z.literal(true).optional(),
      network_idle: z.literal(true).optional(),
      timeout_ms: timeout,
    })
    .refine(
      (p) =>
        [p.text, p.selector, p.navigation, p.network_idle].filter((v) => v !== undefined).length ===
        1,
      "give exactly one of text, selector, navigation, network_idle",
    ),
  async run(p, { session }) {
    const ms = p.timeout_ms ?? session.options.timeoutMs;
    const { tab, page } = await session.activePage();
    const what =
      p.text !== undefined
        ? `text "${p.text}"`
        : p.selector !== undefined
          ? `selector ${p.selector}`
          : p.navigation
            ? "a navigation"
            : "network idle";
    // Text and selectors are looked for in every frame of the page (as snapshots show them).
    const inAnyFrame = (find: (frame: Frame) => Locator) =>
      Promise.any(
        page
          .frames()
          .map((frame) => find(frame).first().waitFor({ state: "visible", timeout: ms })),
      ).catch((error: unknown) => {
        throw error instanceof AggregateError ? error.errors[0] : error;
      });
    const work = async () => {
      if (p.text !== undefined) await inAnyFrame((frame) => frame.getByText(p.text as string));
      else if (p.selector !== undefined)
        await inAnyFrame((frame) => frame.locator(p.selector as string));
      else if (p.navigation) {
        await page.waitForEvent("framenavigated", {
          predicate: (frame) => frame === page.mainFrame(),
          timeout: ms,
        });
        await page.waitForLoadState("load", { timeout: ms });
      } else await page.waitForLoadState("networkidle", { timeout: ms });
    };
    try {
      await within(work(), ms + 1_000, `waiting for ${what}`);
    } catch (error) {
      if (error instanceof BrowserError) throw error;
      throw new BrowserError(
        "relic.browser.timeout",
        `waiting for ${what} failed: ${briefMessage(error)}`,
        {
          retryable: true,
          hint: "Check the page with browser.snapshot; it may look different than expected",
        },
      );
    }
    return { ...(await where(session, tab, page)), found: what };
  },
});

async function tabList(context: MethodContext) {
  const { session } = context;
  const tabs = await Promise.all(
    session.tabs().map(async ({ tab, page }) => ({
      ...(await where(session, tab, page)),
      active: tab === session.activeTab,
    })),
  );
  return { active: session.activeTab, tabs, downloads: [...session.downloads] };
}

const tabs = define({
  description:
    'Lists tabs, opens one (optionally at url; it becomes active), switches to one, or closes one (default the active). action: "list" | "open" | "switch" | "close".',
  parameters: z.strictObject({
    action: z.enum(["list", "open", "switch", "close"]).default("list"),
    tab: z
      .string()
      .regex(/^t\d+$/, "must be a tab id from the list, e.g. t2")
      .optional(),
    url: z.string().min(1).optional(),
    timeout_ms: timeout,
  }),
  async run(p, context) {
    const { session } = context;
    session.alive();
    const ms = p.timeout_ms ?? session.options.timeoutMs;
    if (p.action === "open") {
      const url = p.url !== undefined ? session.checkUrl(p.url) : undefined;
      const { tab, page } = await session.openTab();
      if (url)
        await within(page.goto(url.href, { timeout: ms }), ms + 1_000, `opening ${url.href}`);
      return { ...(await tabList(context)), opened: tab };
    }
    if (p.action === "switch") {
      if (p.tab === undefined) throw missingTab("switch");
      const page = session.activate(p.tab);
      await page.bringToFront().catch(() => undefined);
      // A tab a click just opened may still be loading: the next snapshot sees its document.
      await page.waitForLoadState("domcontentloaded", { timeout: ms }).catch(() => undefined);
      return tabList(context);
    }
    if (p.action === "close") {
      const tab = p.tab ?? session.activeTab;
      if (tab === undefined) throw missingTab("close");
      await session.page(tab).close();
      return tabList(context);
    }
    return tabList(context);
  },
});

function missingTab(action: string) {
  return new BrowserError("relic.browser.unknown-tab", `tabs ${action} needs a tab`, {
    hint: `Give "tab", e.g. {"action":"${action}","tab":"t2"}; {"action":"list"} lists them`,
  });
}

const history = (direction: "back" | "forward") =>
  define({
    description: `Goes ${direction} in the active tab's history.`,
    parameters: z.strictObject({ timeout_ms: timeout }),
    async run(p, { session }) {
      const ms = p.timeout_ms ?? session.options.timeoutMs;
      const { tab, page } = await session.activePage();
      const go =
        direction === "back" ? page.goBack({ timeout: ms }) : page.goForward({ timeout: ms });
      const response = await within(go, ms + 1_000, `going ${direction}`);
      return { ...(await where(session, tab, page)), moved: response !== null };
    },
  });

const upload = define({
  description:
    "Sets the files of the file input with this ref, from paths relative to the workspace.",
  parameters: z.strictObject({
    ref,
    paths: z.array(z.string().min(1)).min(1).max(20),
    timeout_ms: timeout,
  }),
  async run(p, { session }) {
    const ms = p.timeout_ms ?? session.options.timeoutMs;
    const files: string[] = [];
    for (const path of p.paths) {
      const found = await session.workspace.resolve(path, "read");
      if (!found.exists) {
        throw new BrowserError(
          "relic.browser.bad-path",
          `${found.relative} does not exist in the workspace`,
          {
            hint: "Upload files from the workspace; check the path with fs.list",
          },
        );
      }
      files.push(found.real);
    }
    const { tab, page, locator } = await locate(session, p.ref, ms);
    try {
      await within(
        locator.setInputFiles(files, { timeout: ms }),
        ms + 1_000,
        `uploading to ${p.ref}`,
      );
    } catch (error) {
      if (error instanceof BrowserError) throw error;
      throw new BrowserError(
        "relic.browser.action-failed",
        `uploading to ${p.ref} failed: ${briefMessage(error)}`,
        {
          hint: "The ref must be an <input type=file>; check it with browser.snapshot",
        },
      );
    }
    return { ...(await where(session, tab, page)), uploaded: p.paths };
  },
});

/** The methods of waiting, tabs, history and uploads. */
export const TAB_METHODS = {
  wait_for: waitFor,
  tabs,
  back: history("back"),
  forward: history("forward"),
  upload,
};
