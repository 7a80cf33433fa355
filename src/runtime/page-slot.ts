import { z } from "zod";
import type { ContextMessage, PageResult } from "../continuity/index.js";
import type { ImagePart, ProviderMessage, UserPart } from "../providers/index.js";
import { type ReportedAction, replaceResultText, resultOpening } from "./action-results.js";

/** Screenshots a thread's context holds as images when the manifest says nothing. */
export const DEFAULT_SCREENSHOTS_IN_CONTEXT = 1;

/** The fields every browser tool answers with (the active tab's), as a page result needs them. */
const pageOutput = z.looseObject({
  tab: z.string().max(100),
  url: z.string().max(100_000),
  title: z.string().max(100_000),
  diff: z.boolean().optional(),
});
const screenshotOutput = pageOutput.extend({
  artifact: z.string().regex(/^[0-9a-f]{64}$/),
  media_type: z.string().min(1).max(100),
  width: z.number().int().positive().optional(),
  height: z.number().int().positive().optional(),
});

/** The page result kind of an action's name: the browser's snapshot and screenshot methods. */
function pageKind(name: string): PageResult["kind"] | undefined {
  if (name === "browser.snapshot") return "snapshot";
  if (name === "browser.screenshot") return "screenshot";
  return undefined;
}

/**
 * The page result of an action, when it is a `browser.snapshot` or `browser.screenshot` that
 * succeeded with the fields the browser answers (`tab`, `url`, `title`; a screenshot's `artifact`
 * and `media_type`); `undefined` for anything else. Pure: it reads the logged output's fields.
 */
export function pageResultOf(
  action: ReportedAction,
  native: boolean,
  position: number,
): PageResult | undefined {
  if (action.status !== "succeeded") return undefined;
  const kind = pageKind(action.name);
  if (kind === undefined) return undefined;
  const base = { actionId: action.id, native, position, type: action.type, name: action.name };
  if (kind === "snapshot") {
    const parsed = pageOutput.safeParse(action.output);
    if (!parsed.success) return undefined;
    const { tab, url, title, diff } = parsed.data;
    return { kind, ...base, tab, url, title, ...(diff === true ? { diff } : {}) };
  }
  const parsed = screenshotOutput.safeParse(action.output);
  if (!parsed.success) return undefined;
  const { tab, url, title, artifact, media_type: mediaType, width, height } = parsed.data;
  return {
    kind,
    ...base,
    tab,
    url,
    title,
    artifact,
    mediaType,
    ...(width !== undefined && height !== undefined ? { width, height } : {}),
  };
}

/** A screenshot's image as a request refers to it: by artifact, read in right before the call. */
export function pageImage(page: PageResult): ImagePart {
  return {
    type: "image",
    mediaType: page.mediaType ?? "image/png",
    data: "",
    artifact: page.artifact ?? "",
    ...(page.width !== undefined && page.height !== undefined
      ? { width: page.width, height: page.height }
      : {}),
  };
}

/**
 * The one line of history an earlier page result is replaced by, e.g.
 * `[browser.snapshot of http://shop.test/cart "Cart" (tab t1): superseded by a later snapshot]`;
 * `later` false for a screenshot left out because `screenshots_in_context` is 0.
 */
export function pageLine(page: PageResult, later = true): string {
  const where = `${page.url} ${JSON.stringify(page.title)} (tab ${page.tab})`;
  if (page.kind === "snapshot") {
    return `[${page.name}${page.diff ? " (diff)" : ""} of ${where}: superseded by a later snapshot]`;
  }
  const why = later
    ? "replaced by a later screenshot"
    : "not kept in the context (browser.screenshots_in_context is 0)";
  return `[screenshot of ${where}, artifact ${page.artifact}: ${why}]`;
}

/**
 * The page results of `pages` (oldest first) that a thread's context no longer holds whole: every
 * snapshot before the newest one that is not a diff (a diff is read against the snapshot before
 * it, so it replaces nothing and stays while that one does), and every screenshot but the newest
 * `screenshots`. Pure.
 */
export function supersededPages(
  pages: readonly PageResult[],
  screenshots: number,
): Set<PageResult> {
  const superseded = new Set<PageResult>();
  let current = -1;
  for (let index = pages.length - 1; index >= 0 && current < 0; index--) {
    const page = pages[index]!;
    if (page.kind === "snapshot" && !page.diff) current = index;
  }
  for (let index = 0; index < current; index++) {
    if (pages[index]!.kind === "snapshot") superseded.add(pages[index]!);
  }
  const shots = pages.filter((page) => page.kind === "screenshot");
  for (const page of shots.slice(0, Math.max(0, shots.length - screenshots))) superseded.add(page);
  return superseded;
}

/**
 * The browser's "current page" slot of a thread's history: it knows which messages hold page
 * results whole and, after each step's results (or a seed) are added, replaces the superseded
 * ones (`supersededPages`) by their line of history. Its decisions follow from the messages
 * alone, so a history folded from the same log shrinks the same messages (replay, resume).
 */
export class PageSlot {
  readonly #screenshots: number;
  /** Indexes, in the history's messages, of the messages that still hold page results. */
  #holders: number[] = [];

  constructor(screenshots: number = DEFAULT_SCREENSHOTS_IN_CONTEXT) {
    this.#screenshots = screenshots;
  }

  /** Screenshots kept as images. */
  get screenshots(): number {
    return this.#screenshots;
  }

  /** The indexes of the messages that hold page results, for `restore`. */
  snapshot(): readonly number[] {
    return [...this.#holders];
  }

  /** Goes back to what `snapshot` gave. */
  restore(holders: readonly number[]): void {
    this.#holders = [...holders];
  }

  /** Notes the message just added at `index` of the history's messages. */
  add(index: number, entry: ContextMessage): void {
    if (entry.pages && entry.pages.length > 0) this.#holders.push(index);
  }

  /**
   * Replaces each message that holds a superseded page result by its shrunk form (`shrinkPages`,
   * revised at `seq`), moving its whole texts in `wholes` along (a shrunk result's is dropped).
   */
  settle(
    messages: ContextMessage[],
    seq: number,
    wholes: WeakMap<ContextMessage, Map<string, string>>,
  ): void {
    // Oldest first: by the message's seq, then by the action's place in its step.
    const pages = this.#holders
      .flatMap((index) =>
        (messages[index]!.pages ?? []).map((page) => ({ seq: messages[index]!.seq, page })),
      )
      .sort((a, b) => a.seq - b.seq || a.page.position - b.page.position)
      .map(({ page }) => page);
    const superseded = supersededPages(pages, this.#screenshots);
    if (superseded.size === 0) return;
    const lines = new Map<PageResult, string>();
    for (const page of superseded) lines.set(page, pageLine(page, this.#screenshots > 0));
    for (const index of this.#holders) {
      const entry = messages[index]!;
      if (!entry.pages?.some((page) => superseded.has(page))) continue;
      const next = shrinkPages(entry, lines, seq, wholes.get(entry));
      if (next.wholes.size > 0) wholes.set(next.entry, next.wholes);
      messages[index] = next.entry;
    }
    this.#holders = this.#holders.filter((index) => (messages[index]!.pages?.length ?? 0) > 0);
  }
}

/**
 * `entry` with each of its page results in `shrink` replaced by the line it maps to: a native
 * call's output, or that action's `<result>` text in the results text (the other results stay as
 * they are). A result a cut left only the start of stays cut. Returns the new entry and its whole
 * texts (those of `wholes` still true of it). Pure.
 */
export function shrinkPages(
  entry: ContextMessage,
  shrink: ReadonlyMap<PageResult, string>,
  seq: number,
  wholes: ReadonlyMap<string, string> | undefined,
): { entry: ContextMessage; wholes: Map<string, string> } {
  const pages = entry.pages ?? [];
  const gone = pages.filter((page) => shrink.has(page));
  const kept = pages.filter((page) => !shrink.has(page));
  const nextWholes = new Map(wholes);
  let message: ProviderMessage = entry.message;
  if (message.role === "tool") {
    message = {
      role: "tool",
      results: message.results.map((result) => {
        const page = gone.find((one) => one.native && one.actionId === result.toolCallId);
        if (!page) return result;
        nextWholes.delete(result.toolCallId);
        const { images: _images, ...rest } = result;
        return { ...rest, output: shrink.get(page)! };
      }),
    };
  } else if (message.role === "user") {
    const parts: UserPart[] =
      typeof message.content === "string"
        ? [{ type: "text", text: message.content }]
        : [...message.content];
    let whole = nextWholes.get("");
    for (const page of gone) {
      if (page.native) continue;
      const opening = resultOpening({
        id: page.actionId,
        type: page.type as ReportedAction["type"],
        name: page.name,
        status: "succeeded",
      });
      const line = shrink.get(page)!;
      const at = parts.findIndex((part) => part.type === "text" && part.text.includes(opening));
      const text = parts[at];
      if (text?.type === "text") {
        parts[at] = {
          type: "text",
          text: replaceResultText(text.text, opening, line) ?? text.text,
        };
      }
      if (whole !== undefined) whole = replaceResultText(whole, opening, line) ?? whole;
      const image = parts.findIndex(
        (part) =>
          part.type === "image" && part.artifact !== undefined && part.artifact === page.artifact,
      );
      if (page.kind === "screenshot" && image >= 0) parts.splice(image, 1);
    }
    const only = parts.length === 1 ? parts[0] : undefined;
    const content = only?.type === "text" ? only.text : parts;
    message = { role: "user", content };
    if (whole !== undefined) {
      if (whole === content) nextWholes.delete("");
      else nextWholes.set("", whole);
    }
  }
  const { pages: _pages, ...rest } = entry;
  return {
    entry: { ...rest, message, revised: seq, ...(kept.length > 0 ? { pages: kept } : {}) },
    wholes: nextWholes,
  };
}
