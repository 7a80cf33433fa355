/**
 * A real Chromium tab (the browser relic) watched through its CDP screencast: scripted actions
 * on a local page (typing, adding list items, scrolling, navigating to another page) give
 * change scores that order as the actions' visual weight, each scored against the frame noted
 * just before it. A small marker in the corner changes colour after each action has rendered, so
 * the test knows without sleeping which frame shows the action's whole effect.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type FrameSourceEvent,
  type ScoredFrame,
  screencastFrames,
  watchFrames,
} from "../src/frames/index.js";
import { type BrowserHarness, openBrowserHarness } from "./support/browser-harness.js";

const APP = `<!doctype html><html><head><style>
  html, body { margin: 0; background: #fff; font: 24px sans-serif; scroll-behavior: auto; }
  input { font: 24px sans-serif; width: 400px; margin: 40px 20px 10px; caret-color: transparent; border: 1px solid #999; outline: none; }
  li { height: 30px; background: #ccc; margin: 4px 0; list-style: none; }
  #marker { position: fixed; left: 0; top: 0; width: 12px; height: 12px; background: rgb(255,0,0); }
  .stripe { height: 60px; } .stripe:nth-child(odd) { background: #123; }
</style></head><body><div id="marker"></div><input id="name"><button id="add" style="font-size:14px">add</button>
<ul id="list"></ul><div style="height: 200px"></div><div>${'<div class="stripe"></div>'.repeat(30)}</div>
<script>document.getElementById("add").onclick = () => { const li = document.createElement("li"); li.textContent = "item"; document.getElementById("list").append(li); };</script>
</body></html>`;
const OTHER = `<!doctype html><html><body style="margin:0;background:#111;color:#eee;font:40px sans-serif">
<div id="marker" style="position:fixed;left:0;top:0;width:12px;height:12px;background:rgb(255,0,0)"></div>
<h1 style="margin:60px">Another page</h1><div style="background:#c33;height:120px"></div></body></html>`;

let server: Server;
let origin: string;
let browser: BrowserHarness;

beforeAll(async () => {
  server = createServer((request, response) => {
    response.writeHead(200, { "content-type": "text/html" });
    response.end(request.url === "/other" ? OTHER : APP);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
  browser = await openBrowserHarness({
    allow_hosts: [`127.0.0.1:${port}`],
    viewport: { width: 640, height: 360 },
  });
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

const MARKERS = ["rgb(255,0,0)", "rgb(0,0,255)"];
/** Resolves in the page once what was changed before it has been painted (two animation frames). */
const RENDERED = "new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))";

/** The marker's colour in a frame: 0 (red) or 1 (blue), or -1 when neither. */
async function markerOf(data: Buffer): Promise<number> {
  const { data: pixels } = await sharp(data)
    .extract({ left: 2, top: 2, width: 6, height: 6 })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const [r, , b] = [0, 1, 2].map((channel) => {
    let sum = 0;
    for (let at = channel; at < pixels.length; at += 3) sum += pixels[at]!;
    return sum / (pixels.length / 3);
  });
  if (r! > 200 && b! < 60) return 0;
  if (b! > 200 && r! < 60) return 1;
  return -1;
}

describe("screencast of a real tab", () => {
  it("scores typing < adding items < scrolling < navigating", async () => {
    await browser.call("navigate", { url: `${origin}/app` });
    const page: Page = await browser.relic.page();
    const events: FrameSourceEvent[] = [];
    const watch = watchFrames({
      source: "tab:t1",
      open: (hooks) => screencastFrames({ ...hooks, page }),
      limits: { maxFramesPerMinute: 100_000, burst: 1_000 },
      onEvent: (event) => events.push(event),
    });
    const frames = watch[Symbol.asyncIterator]();
    let marker = 0;
    /** Changes the marker once the page has rendered, then reads frames until one shows it. */
    const settle = async (): Promise<ScoredFrame> => {
      await page.evaluate(RENDERED);
      marker = 1 - marker;
      await page.evaluate(
        `document.getElementById("marker").style.background = "${MARKERS[marker]}"`,
      );
      for (;;) {
        const next = await frames.next();
        if (next.done) throw new Error(`the screencast ended: ${JSON.stringify(events)}`);
        const data = watch.storage.bytes(next.value.frame.hash);
        if (data && (await markerOf(data)) === marker) return next.value;
      }
    };
    /** Notes the settled frame, runs `action`, and returns the score of the frame after it. */
    const scoreOf = async (action: () => Promise<unknown>): Promise<number> => {
      watch.noted((await settle()).frame);
      await action();
      return (await settle()).change.score;
    };

    const typing = await scoreOf(async () => {
      await page.click("#name");
      await page.keyboard.type("hello world");
    });
    const items = await scoreOf(async () => {
      for (let n = 0; n < 3; n++) await page.click("#add");
    });
    const scrolling = await scoreOf(() => page.evaluate("window.scrollTo(0, 320)"));
    const navigating = await scoreOf(() => page.goto(`${origin}/other`));
    await frames.return?.(undefined);

    expect(typing).toBeGreaterThan(0);
    expect([typing, items, scrolling, navigating]).toEqual(
      [typing, items, scrolling, navigating].sort((a, b) => a - b),
    );
    expect(items).toBeGreaterThan(typing * 1.5);
    expect(scrolling).toBeGreaterThan(items * 1.5);
    expect(navigating).toBeGreaterThan(scrolling * 1.2);
    expect(events[0]).toMatchObject({
      type: "started",
      kind: "screencast",
      target: `${origin}/app`,
    });
    expect(events.at(-1)).toMatchObject({ type: "stopped", reason: "aborted" });
  });
});
