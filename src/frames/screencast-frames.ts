import type { CDPSession, Page } from "playwright-core";
import { FrameError } from "./frame-error.js";
import { DEFAULT_MAX_FRAME_BYTES, type FrameSourceOptions, report } from "./frame-source.js";
import type { IncomingFrame } from "./frame-types.js";

/** Options of `screencastFrames`. */
export interface ScreencastFramesOptions extends FrameSourceOptions {
  /** The tab's page (from the browser relic: `relic.page(tab)`). */
  page: Page;
  /** JPEG quality 1–100 (default 70). */
  quality?: number;
  /** Frames are scaled to fit these (default: the viewport's size). */
  maxWidth?: number;
  maxHeight?: number;
  /** Take every nth compositor frame (default 1: every change). */
  everyNthFrame?: number;
  /** What the `started` event names as the target (default the page's URL). */
  target?: string;
}

/**
 * A browser tab's screen as frames, through the Chrome DevTools Protocol's `Page.startScreencast`
 * (JPEG). Chromium sends a frame when the page's pixels change; each is acknowledged at once, and
 * only the newest unread frame is held (an older one is dropped): the latest frame wins and
 * memory stays at one frame.
 *
 * Contract: the tab closing gives `stopped` `ended`; Chromium or the renderer going away, or the
 * screencast failing to start, gives a final `failed` (`frame.screencast-failed`); aborting stops
 * the screencast and detaches (`stopped` `aborted`). Never throws.
 */
export async function* screencastFrames(
  options: ScreencastFramesOptions,
): AsyncGenerator<IncomingFrame> {
  const { source, page } = options;
  const clock = options.clock ?? Date.now;
  const limit = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const signal = options.signal ?? new AbortController().signal;
  let cdp: CDPSession;
  try {
    cdp = await page.context().newCDPSession(page);
    const viewport = page.viewportSize();
    await cdp.send("Page.startScreencast", {
      format: "jpeg",
      quality: options.quality ?? 70,
      ...((options.maxWidth ?? viewport?.width)
        ? { maxWidth: options.maxWidth ?? viewport?.width }
        : {}),
      ...((options.maxHeight ?? viewport?.height)
        ? { maxHeight: options.maxHeight ?? viewport?.height }
        : {}),
      everyNthFrame: options.everyNthFrame ?? 1,
    });
  } catch (error) {
    report(options, {
      type: "failed",
      source,
      final: true,
      error: screencastError("could not start", error),
    });
    return;
  }
  report(options, {
    type: "started",
    source,
    kind: "screencast",
    target: options.target ?? page.url(),
  });
  let latest: IncomingFrame | undefined;
  let ended: "closed" | "crashed" | undefined;
  let wake: (() => void) | undefined;
  const wakeReader = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  const onFrame = (event: { data: string; sessionId: number }) => {
    cdp.send("Page.screencastFrameAck", { sessionId: event.sessionId }).catch(() => undefined);
    const bytes = Math.floor((event.data.length * 3) / 4);
    const at = clock();
    if (bytes > limit) {
      report(options, {
        type: "rejected",
        source,
        reason: "too-big",
        bytes,
        at,
        detail: `a ${bytes}-byte screencast frame`,
      });
      return;
    }
    latest = { data: Buffer.from(event.data, "base64"), mime: "image/jpeg", at, source };
    wakeReader();
  };
  const onClose = () => {
    ended ??= "closed";
    wakeReader();
  };
  const onCrash = () => {
    ended ??= "crashed";
    wakeReader();
  };
  cdp.on("Page.screencastFrame", onFrame);
  page.on("close", onClose);
  page.on("crash", onCrash);
  signal.addEventListener("abort", wakeReader, { once: true });
  let frames = 0;
  try {
    for (;;) {
      if (signal.aborted || ended) break;
      const frame = latest;
      if (frame) {
        latest = undefined;
        frames += 1;
        yield frame;
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
    if (ended === "crashed") {
      report(options, {
        type: "failed",
        source,
        final: true,
        error: screencastError("stopped: the page crashed", undefined),
      });
    } else {
      report(options, {
        type: "stopped",
        source,
        reason: signal.aborted ? "aborted" : "ended",
        frames,
      });
    }
  } finally {
    cdp.off("Page.screencastFrame", onFrame);
    page.off("close", onClose);
    page.off("crash", onCrash);
    signal.removeEventListener("abort", wakeReader);
    if (!ended) await cdp.send("Page.stopScreencast").catch(() => undefined);
    await cdp.detach().catch(() => undefined);
  }
}

function screencastError(what: string, error: unknown): FrameError {
  const detail =
    error instanceof Error ? `: ${(error.message.split("\n")[0] ?? "").slice(0, 300)}` : "";
  return new FrameError("frame.screencast-failed", `the tab's screencast ${what}${detail}`, {
    cause: error,
    retryable: true,
    hint: "Reload the tab (browser.navigate) or open another, then start the frame source again",
  });
}
