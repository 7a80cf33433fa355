import type { Locator, Page } from "playwright-core";
import { z } from "zod";
import { BrowserError, briefMessage, within } from "./browser-error.js";
import type { BrowserSession } from "./browser-session.js";
import { type FramedSnapshot, locateFrame, snapshotWithFrames } from "./frame-snapshot.js";
import { diffLines } from "./ref-book.js";

/** What a method is given besides its parameters. */
export interface MethodContext {
  session: BrowserSession;
  /** Environment variables `browser.type` may read secrets from (only the allowed ones). */
  secret(name: string): string | undefined;
  /** Stores an image and returns its artifact hash. */
  saveImage(bytes: Uint8Array, mediaType: string): Promise<string>;
}

/** One browser method: its schema and what it does. */
export interface BrowserMethod<S extends z.ZodType = z.ZodType> {
  description: string;
  parameters: S;
  run(parameters: z.output<S>, context: MethodContext): Promise<Record<string, unknown>>;
}

/** Declares a method; infers `run`'s parameter type from the schema. */
export const define = <S extends z.ZodType>(method: BrowserMethod<S>): BrowserMethod<S> => method;
/** A ref parameter: `e<n>` as snapshots hand them out. */
export const ref = z.string().regex(/^e\d+$/, "must be a ref from browser.snapshot, e.g. e12");
/** The optional `timeout_ms` parameter every method takes. */
export const timeout = z
  .number()
  .int()
  .min(100)
  .max(600_000)
  .optional()
  .describe("Milliseconds (default the manifest's timeout_ms).");
const NODES_MAX = 200_000;

/** The page's tab, URL and title: every method's result starts with it. */
export async function where(session: BrowserSession, tab: string, page: Page) {
  const title = await within(page.title(), 2_000, "reading the title").catch(() => "");
  return { tab, url: page.url(), title: session.redact(title) };
}

/**
 * The element `name` refers to, in the active tab. Refuses (typed) a ref no snapshot handed out,
 * one from another tab, one from a document the tab has since left, and one no longer on the page.
 */
export async function locate(session: BrowserSession, name: string, ms: number) {
  const { tab, page } = await session.activePage();
  const origin = session.refs.origin(name);
  if (!origin) {
    throw new BrowserError(
      "relic.browser.unknown-ref",
      `ref ${name} was not handed out by a snapshot of this browser`,
      {
        hint: "Take a fresh snapshot with browser.snapshot and use a ref from it (refs do not survive a browser restart)",
      },
    );
  }
  if (origin.tab !== tab) {
    throw new BrowserError(
      "relic.browser.other-tab-ref",
      `ref ${name} belongs to tab ${origin.tab}, not the active tab ${tab}`,
      {
        hint: `Switch with browser.tabs {"action":"switch","tab":"${origin.tab}"}, or take a fresh snapshot of this tab`,
      },
    );
  }
  const frame = await locateFrame(page, origin.doc, ms);
  if (!frame) {
    throw new BrowserError(
      "relic.browser.stale-ref",
      `ref ${name} is from a page or frame this tab has since left (it is now at ${page.url()})`,
      {
        hint: "Take a fresh snapshot with browser.snapshot and use its refs",
      },
    );
  }
  const locator = frame.locator(`[data-spool-ref="${name}"]`);
  if ((await within(locator.count(), ms, "finding the element")) === 0) {
    throw new BrowserError("relic.browser.not-found", `ref ${name} is no longer on the page`, {
      hint: "The page changed; take a fresh snapshot with browser.snapshot",
    });
  }
  return { tab, page, locator: locator.first() };
}

/** Runs a Playwright action on an element, as a typed error when it fails. */
export async function act(
  what: string,
  ms: number,
  work: () => Promise<unknown>,
  session: BrowserSession,
) {
  try {
    await within(work(), ms + 1_000, what);
  } catch (error) {
    if (error instanceof BrowserError) throw error;
    throw new BrowserError(
      "relic.browser.action-failed",
      `${what} failed: ${session.redact(briefMessage(error))}`,
      {
        hint: "Check the element with browser.snapshot (is it visible, enabled, the right kind?) and try again",
      },
    );
  }
}

const navigate = define({
  description:
    "Opens a URL in the active tab and waits for it to load; answers with status and title.",
  parameters: z.strictObject({
    url: z.string().min(1).describe("An absolute http(s) URL."),
    wait_until: z.enum(["load", "domcontentloaded", "networkidle"]).default("load"),
    timeout_ms: timeout,
  }),
  async run(p, { session }) {
    const url = session.checkUrl(p.url);
    const ms = p.timeout_ms ?? session.options.timeoutMs;
    const { tab, page } = await session.activePage(true);
    let status: number | undefined;
    try {
      const response = await within(
        page.goto(url.href, { waitUntil: p.wait_until, timeout: ms }),
        ms + 1_000,
        `opening ${url.href}`,
      );
      status = response?.status();
      if (response?.headers()["x-spool-refused"]) throw refusedRedirect(response.url());
    } catch (error) {
      if (error instanceof BrowserError) throw error;
      throw new BrowserError(
        "relic.browser.action-failed",
        `opening ${url.href} failed: ${briefMessage(error)}`,
        {
          retryable: true,
          hint: /TUNNEL_CONNECTION_FAILED/.test(briefMessage(error))
            ? "The host may be down, or a redirect led to a local or private address not in browser.allow_hosts (a page event says which)"
            : "Check the URL; the site may be down",
        },
      );
    }
    return { ...(await where(session, tab, page)), ...(status !== undefined ? { status } : {}) };
  },
});

function refusedRedirect(url: string) {
  return new BrowserError(
    "relic.browser.host-not-allowed",
    `the page led to ${url}, a local or private address this browser may not reach`,
    {
      hint: "Ask the operator to add the host to browser.allow_hosts in the agent manifest if it should be reachable",
    },
  );
}

const snapshot = define({
  description:
    "The page as an outline of headings, text and interactive elements, each element with a ref (e12) for click/type/select. Bounded in size; scope it with ref or selector; diff:true shows only what changed since the last snapshot of the same view.",
  parameters: z.strictObject({
    ref: ref.optional().describe("Only this element's part of the page."),
    selector: z
      .string()
      .min(1)
      .max(500)
      .optional()
      .describe("Only the first element matching this CSS selector."),
    diff: z.boolean().default(false),
    max_chars: z.number().int().min(200).max(1_000_000).optional(),
    timeout_ms: timeout,
  }),
  async run(p, { session }) {
    const ms = p.timeout_ms ?? session.options.timeoutMs;
    const { tab, page } = p.ref ? await locate(session, p.ref, ms) : await session.activePage();
    const maxChars = Math.min(
      p.max_chars ?? session.options.snapshotChars,
      session.options.snapshotChars * 10,
    );
    const start = session.refs.next;
    const args = {
      start,
      maxChars,
      maxNodes: NODES_MAX,
      scopeRef: p.ref,
      scopeSelector: p.selector,
    };
    let result: FramedSnapshot;
    try {
      result = await snapshotWithFrames(page.mainFrame(), args, ms);
    } catch (error) {
      if (error instanceof BrowserError) throw error;
      throw new BrowserError(
        "relic.browser.action-failed",
        `the snapshot failed: ${briefMessage(error)}`,
        {
          retryable: true,
          hint: "The page may be navigating; wait with browser.wait_for and try again",
        },
      );
    }
    if (result.missing) {
      throw new BrowserError(
        "relic.browser.not-found",
        `${p.ref ? `ref ${p.ref}` : `selector ${p.selector}`} is not on the page`,
        {
          hint: "Take a snapshot of the whole page first",
        },
      );
    }
    for (const segment of result.segments) {
      session.refs.record(segment.from, segment.to, tab, segment.doc);
    }
    const lines = result.lines.map((line) => session.redact(line));
    const view = `${tab}|${result.doc}|${p.ref ?? ""}|${p.selector ?? ""}`;
    const previous = session.refs.swap(view, lines);
    const shown = p.diff && previous ? diffLines(previous, lines) : lines;
    const note = result.truncated
      ? [`… (cut at ${maxChars} characters: scope the snapshot with ref or selector)`]
      : [];
    return {
      ...(await where(session, tab, page)),
      ...(p.diff ? { diff: previous !== undefined } : {}),
      snapshot:
        [...shown, ...note].join("\n") || (p.diff && previous ? "(no change)" : "(empty page)"),
      truncated: result.truncated,
    };
  },
});

const screenshot = define({
  description:
    "A PNG or JPEG of the viewport (or of the element with ref), at most screenshot_max_side pixels a side, stored as an artifact whose hash is returned.",
  parameters: z.strictObject({
    ref: ref.optional(),
    format: z.enum(["png", "jpeg"]).default("png"),
    timeout_ms: timeout,
  }),
  async run(p, { session, saveImage }) {
    const ms = p.timeout_ms ?? session.options.timeoutMs;
    const target: { tab: string; page: Page; locator?: Locator } = p.ref
      ? await locate(session, p.ref, ms)
      : await session.activePage();
    const side = session.options.screenshotMaxSide;
    const view = target.page.viewportSize() ?? session.options.viewport;
    const options = {
      type: p.format,
      timeout: ms,
      ...(p.format === "jpeg" ? { quality: 70 } : {}),
    } as const;
    let bytes: Buffer = Buffer.alloc(0);
    let size: { width: number; height: number } | undefined;
    await act(
      "taking the screenshot",
      ms,
      async () => {
        if (target.locator) {
          const box = await target.locator.boundingBox({ timeout: ms });
          if (box) size = { width: Math.round(box.width), height: Math.round(box.height) };
        } else {
          size = { width: Math.min(view.width, side), height: Math.min(view.height, side) };
        }
        bytes = target.locator
          ? await target.locator.screenshot(options)
          : await target.page.screenshot({
              ...options,
              clip: {
                x: 0,
                y: 0,
                width: Math.min(view.width, side),
                height: Math.min(view.height, side),
              },
            });
      },
      session,
    );
    const mediaType = p.format === "png" ? "image/png" : "image/jpeg";
    const artifact = await saveImage(bytes, mediaType);
    return {
      ...(await where(session, target.tab, target.page)),
      artifact,
      media_type: mediaType,
      bytes: bytes.length,
      // CSS pixels: what the image's token cost is estimated from (docs/stream-watch.md).
      ...(size && size.width > 0 && size.height > 0 ? size : {}),
    };
  },
});

/** The methods that open and read pages. */
export const PAGE_METHODS = { navigate, snapshot, screenshot };
