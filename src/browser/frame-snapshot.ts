import type { Frame, Page } from "playwright-core";
import { within } from "./browser-error.js";
import { DOCUMENT_ID_SCRIPT, SNAPSHOT_SCRIPT } from "./page-script.js";

/** How deep snapshots follow iframes inside iframes. */
const FRAME_DEPTH_MAX = 3;

/** What the snapshot script takes. */
export interface SnapshotArgs {
  start: number;
  maxChars: number;
  maxNodes: number;
  scopeRef?: string | undefined;
  scopeSelector?: string | undefined;
}

/** A snapshot of a document and of the frames inside it, with the refs each document numbered. */
export interface FramedSnapshot {
  /** The top document's identity. */
  doc: string;
  next: number;
  lines: string[];
  truncated: boolean;
  missing: boolean;
  /** The ranges of ref numbers each document handed out, in order. */
  segments: { from: number; to: number; doc: string }[];
}

interface ScriptResult {
  doc: string;
  next: number;
  lines: string[];
  frames: { mark: string; line: number; depth: number }[];
  truncated: boolean;
  missing: boolean;
}

/**
 * Snapshots `frame`'s document, then fills each `iframe` line with that frame's own snapshot
 * (indented under it, its refs numbered on from the parent's), to `FRAME_DEPTH_MAX` levels. Refs
 * in a frame are marked in the frame's document, so `locateFrame` finds them by its identity; a
 * frame that is gone or not yet loaded keeps its one line. The character budget is shared.
 */
export async function snapshotWithFrames(
  frame: Frame,
  args: SnapshotArgs,
  ms: number,
  depth = 0,
): Promise<FramedSnapshot> {
  const result = await within(
    frame.evaluate(`(${SNAPSHOT_SCRIPT})(${JSON.stringify(args)})`) as Promise<ScriptResult>,
    ms,
    "taking the snapshot",
  );
  const segments = [{ from: args.start, to: result.next, doc: result.doc }];
  const snapshot: FramedSnapshot = { ...result, segments };
  if (result.frames.length === 0 || depth >= FRAME_DEPTH_MAX) return snapshot;
  const children = await childrenByMark(frame);
  let budget = args.maxChars - result.lines.reduce((sum, line) => sum + line.length + 1, 0);
  const inserts: { at: number; lines: string[] }[] = [];
  for (const placeholder of result.frames) {
    const child = children.get(placeholder.mark);
    if (!child || budget <= 0) continue;
    const inner = await snapshotWithFrames(
      child,
      { start: snapshot.next, maxChars: budget, maxNodes: args.maxNodes },
      ms,
      depth + 1,
    ).catch(() => undefined);
    if (!inner) continue;
    const indent = "  ".repeat(placeholder.depth);
    const lines = inner.lines.map((line) => indent + line);
    inserts.push({ at: placeholder.line, lines });
    budget -= lines.reduce((sum, line) => sum + line.length + 1, 0);
    snapshot.next = inner.next;
    snapshot.segments.push(...inner.segments);
    if (inner.truncated) snapshot.truncated = true;
  }
  const lines = [...result.lines];
  for (const insert of inserts.reverse()) lines.splice(insert.at + 1, 0, ...insert.lines);
  snapshot.lines = lines;
  return snapshot;
}

/** The child frames of `frame`, by the `data-spool-frame` mark of their iframe element. */
async function childrenByMark(frame: Frame): Promise<Map<string, Frame>> {
  const found = new Map<string, Frame>();
  for (const child of frame.childFrames()) {
    const element = await child.frameElement().catch(() => undefined);
    const mark = await element?.getAttribute("data-spool-frame").catch(() => null);
    await element?.dispose().catch(() => undefined);
    if (mark) found.set(mark, child);
  }
  return found;
}

/**
 * The frame of `page` whose document is `doc` (the main frame first), or undefined when no frame
 * shows that document any more.
 */
export async function locateFrame(page: Page, doc: string, ms: number): Promise<Frame | undefined> {
  const main = page.mainFrame();
  if ((await within(main.evaluate(DOCUMENT_ID_SCRIPT), ms, "checking the page")) === doc) {
    return main;
  }
  for (const frame of page.frames()) {
    if (frame === main) continue;
    const id = await within(frame.evaluate(DOCUMENT_ID_SCRIPT), ms, "checking a frame").catch(
      () => undefined,
    );
    if (id === doc) return frame;
  }
  return undefined;
}
