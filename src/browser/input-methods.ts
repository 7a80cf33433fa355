import { z } from "zod";
import { BrowserError, within } from "./browser-error.js";
import { act, define, locate, ref, timeout, where } from "./browser-methods.js";

/** Marks a field that holds a secret: snapshots show its value as `[hidden]`. */
const MARK_SECRET = new Function("el", "el.setAttribute('data-spool-secret', '')") as (
  el: unknown,
) => void;

const click = define({
  description:
    "Clicks the element with this ref (from browser.snapshot), then waits for the page to settle. Tabs the click opened are listed in opened_tabs (switch to one with browser.tabs).",
  parameters: z.strictObject({ ref, double: z.boolean().default(false), timeout_ms: timeout }),
  async run(p, { session }) {
    const ms = p.timeout_ms ?? session.options.timeoutMs;
    const { tab, page, locator } = await locate(session, p.ref, ms);
    const before = page.url();
    const { tabs } = await session.opening(page, ms, () =>
      act(
        `clicking ${p.ref}`,
        ms,
        () => (p.double ? locator.dblclick({ timeout: ms }) : locator.click({ timeout: ms })),
        session,
      ),
    );
    await page.waitForLoadState("domcontentloaded", { timeout: ms }).catch(() => undefined);
    return {
      ...(await where(session, tab, page)),
      navigated: page.url() !== before,
      ...openedTabs(tabs),
    };
  },
});

const type = define({
  description:
    'Types into the text field with this ref, replacing its value. Give text, or secret: "ENV_NAME" to type an allowed secret (never shown or logged). submit:true presses Enter after.',
  parameters: z
    .strictObject({
      ref,
      text: z.string().max(100_000).optional(),
      secret: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name")
        .optional(),
      submit: z.boolean().default(false),
      timeout_ms: timeout,
    })
    .refine(
      (p) => (p.text === undefined) !== (p.secret === undefined),
      "give exactly one of text or secret",
    ),
  async run(p, { session, secret }) {
    const ms = p.timeout_ms ?? session.options.timeoutMs;
    let value = p.text ?? "";
    if (p.secret !== undefined) {
      const found = secret(p.secret);
      if (found === undefined) {
        throw new BrowserError(
          "relic.browser.secret-missing",
          `secret ${p.secret} is not available to the browser`,
          {
            hint: `The operator must list ${p.secret} in browser.secrets in the agent manifest and set it in the environment`,
          },
        );
      }
      session.secrets.set(p.secret, found);
      value = found;
    }
    const { tab, page, locator } = await locate(session, p.ref, ms);
    const { tabs } = await session.opening(page, ms, () =>
      act(
        `typing into ${p.ref}`,
        ms,
        async () => {
          await locator.fill(value, { timeout: ms });
          if (p.secret !== undefined) await locator.evaluate(MARK_SECRET);
          if (p.submit) await locator.press("Enter", { timeout: ms });
        },
        session,
      ),
    );
    if (p.submit)
      await page.waitForLoadState("domcontentloaded", { timeout: ms }).catch(() => undefined);
    return {
      ...(await where(session, tab, page)),
      typed: p.secret !== undefined ? `secret ${p.secret}` : `${value.length} characters`,
      ...openedTabs(tabs),
    };
  },
});

const select = define({
  description: "Chooses options (by value or visible label) in the select element with this ref.",
  parameters: z.strictObject({
    ref,
    values: z.array(z.string()).min(1).max(100),
    timeout_ms: timeout,
  }),
  async run(p, { session }) {
    const ms = p.timeout_ms ?? session.options.timeoutMs;
    const { tab, page, locator } = await locate(session, p.ref, ms);
    let chosen: string[] = [];
    await act(
      `selecting in ${p.ref}`,
      ms,
      async () => {
        // A string matches an option by its value or its label.
        chosen = await locator.selectOption(p.values, { timeout: ms });
      },
      session,
    );
    return { ...(await where(session, tab, page)), selected: chosen };
  },
});

const press = define({
  description:
    'Presses a key or chord ("Enter", "Escape", "Control+A"), on the element with ref or on the page.',
  parameters: z.strictObject({
    key: z
      .string()
      .regex(/^[A-Za-z0-9+_-]{1,40}$/, 'must be a key name, e.g. "Enter" or "Control+A"'),
    ref: ref.optional(),
    timeout_ms: timeout,
  }),
  async run(p, { session }) {
    const ms = p.timeout_ms ?? session.options.timeoutMs;
    const target = p.ref
      ? await locate(session, p.ref, ms)
      : { ...(await session.activePage()), locator: undefined };
    const { tabs } = await session.opening(target.page, ms, () =>
      act(
        `pressing ${p.key}`,
        ms,
        () =>
          target.locator
            ? target.locator.press(p.key, { timeout: ms })
            : target.page.keyboard.press(p.key),
        session,
      ),
    );
    return { ...(await where(session, target.tab, target.page)), ...openedTabs(tabs) };
  },
});

const scroll = define({
  description:
    "Scrolls the element with ref into view, or the page up or down by pixels (default most of a screen).",
  parameters: z.strictObject({
    ref: ref.optional(),
    direction: z.enum(["up", "down"]).default("down"),
    pixels: z.number().int().min(1).max(100_000).optional(),
    timeout_ms: timeout,
  }),
  async run(p, { session }) {
    const ms = p.timeout_ms ?? session.options.timeoutMs;
    if (p.ref) {
      const { tab, page, locator } = await locate(session, p.ref, ms);
      await act(
        `scrolling to ${p.ref}`,
        ms,
        () => locator.scrollIntoViewIfNeeded({ timeout: ms }),
        session,
      );
      return where(session, tab, page);
    }
    const { tab, page } = await session.activePage();
    const dy =
      (p.pixels ?? Math.round(session.options.viewport.height * 0.8)) *
      (p.direction === "up" ? -1 : 1);
    const y = await within(
      page.evaluate(`(() => { window.scrollBy(0, ${dy}); return window.scrollY; })()`),
      ms,
      "scrolling",
    );
    return { ...(await where(session, tab, page)), scroll_y: y };
  },
});

/** `opened_tabs` for a result when the input opened tabs (they stay in the background). */
function openedTabs(tabs: string[]) {
  return tabs.length > 0 ? { opened_tabs: tabs } : {};
}

/** The methods that act on elements and the keyboard. */
export const INPUT_METHODS = { click, type, select, press, scroll };
