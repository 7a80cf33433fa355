import type { BrowserContext, Page } from "playwright-core";
import { within } from "./browser-error.js";

/**
 * Runs in every document before its own scripts: counts the windows the document asks to open
 * (`window.open`, a plain click on a link or area whose target is a new window, a form submitted
 * to one), so an action can tell whether it opened a tab without guessing how long to wait.
 * The count is read through `window.__spoolOpened`; a page that tampers with it only loses the
 * wait, never breaks an action.
 */
export const OPEN_COUNTER_SCRIPT = `(() => {
  if (Object.prototype.hasOwnProperty.call(window, "__spoolOpened")) return;
  let opened = 0;
  const native = window.open;
  window.open = function (...args) { opened += 1; return native.apply(this, args); };
  Object.defineProperty(window, "__spoolOpened", { get: () => opened });
  const elsewhere = (target) => typeof target === "string" && target !== "" && !/^_(self|top|parent)$/i.test(target);
  window.addEventListener("click", (event) => {
    if (event.defaultPrevented || event.button !== 0) return;
    const node = event.target;
    const link = node && typeof node.closest === "function" ? node.closest("a[href], area[href]") : null;
    if (link && elsewhere(link.target)) opened += 1;
  });
  window.addEventListener("submit", (event) => {
    if (event.defaultPrevented) return;
    const form = event.target;
    const target = event.submitter?.getAttribute?.("formtarget") ?? form?.target;
    if (elsewhere(target)) opened += 1;
  });
})()`;

const OPENED = "window.__spoolOpened ?? 0";

/** How long an action waits at most for the tabs its page said it opened. */
const NEW_TAB_WAIT_MS = 5_000;

/**
 * Runs `work` (a click, a key press) on `page` and returns its value with the pages it opened.
 * When the document counted more windows opened than have arrived, it waits for them (up to
 * `NEW_TAB_WAIT_MS` or `ms`, whichever is shorter), so the next call already lists the tab.
 * A window opened by name into an existing one, or one a page script swallowed, only costs that
 * bounded wait.
 */
export async function withNewTabs<T>(
  context: BrowserContext,
  page: Page,
  ms: number,
  work: () => Promise<T>,
): Promise<{ value: T; opened: Page[] }> {
  const opened: Page[] = [];
  let wanted = Number.POSITIVE_INFINITY;
  let arrived: () => void = () => undefined;
  const onPage = (added: Page) => {
    opened.push(added);
    if (opened.length >= wanted) arrived();
  };
  context.on("page", onPage);
  try {
    const before = await count(page);
    const value = await work();
    wanted = Math.max(0, (await count(page)) - before);
    if (opened.length < wanted) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        arrived = resolve;
        timer = setTimeout(resolve, Math.min(ms, NEW_TAB_WAIT_MS));
      });
      clearTimeout(timer);
    }
    return { value, opened: [...opened] };
  } finally {
    context.off("page", onPage);
  }
}

/** The document's count of windows opened; 0 when it cannot be read (navigated, busy). */
async function count(page: Page): Promise<number> {
  const value = await within(page.evaluate(OPENED), 2_000, "counting opened windows").catch(
    () => 0,
  );
  return typeof value === "number" ? value : 0;
}
