/**
 * The rest of the browser tools against real pages: a script-driven to-do list (typing with
 * submit, pressing Enter, checking and deleting items, waiting for the page's own updates), a
 * long page (scrolling by pixels and to an element), screenshots stored as bounded images, a
 * download saved into the workspace and an upload taken only from it.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrowserApps, startBrowserApps } from "./support/browser-apps/index.js";
import { type BrowserHarness, openBrowserHarness, refIn } from "./support/browser-harness.js";

let apps: BrowserApps;
let browser: BrowserHarness;

beforeAll(async () => {
  apps = await startBrowserApps();
  browser = await openBrowserHarness({
    allow_hosts: [apps.host],
    viewport: { width: 1000, height: 700 },
  });
});
afterAll(async () => {
  await browser?.close();
  await apps?.close();
});

/** Width and height of a PNG, from its IHDR chunk. */
const pngSize = (bytes: Buffer) => ({
  width: bytes.readUInt32BE(16),
  height: bytes.readUInt32BE(20),
});

describe("the to-do list, scrolling, screenshots and files", () => {
  it("adds, checks and deletes to-dos the way a person would", async () => {
    await browser.call("navigate", { url: `${apps.origin}/todo` });
    const page = (await browser.call("snapshot")).snapshot as string;
    const input = refIn(page, /textbox "New to-do"/);
    await browser.call("type", { ref: input, text: "buy milk", submit: true });
    await browser.call("wait_for", { text: "1 left" });
    await browser.call("type", { ref: input, text: "call mum" });
    await browser.call("press", { ref: input, key: "Enter" });
    await browser.call("wait_for", { text: "2 left" });
    const listed = (await browser.call("snapshot", { selector: "ul" })).snapshot as string;
    await browser.call("click", { ref: refIn(listed, /checkbox "Done: buy milk"/) });
    await browser.call("wait_for", { text: "1 left" });
    const checked = await browser.call("snapshot", { selector: "ul", diff: true });
    expect(checked.snapshot).toMatch(/^\+ +checkbox "Done: buy milk" \[e\d+\] checked$/m);
    // The list re-rendered its items: their old refs are gone, and the model is told so.
    const gone = await browser.fail("click", { ref: refIn(listed, /button "Delete call mum"/) });
    expect(gone.code).toBe("relic.browser.not-found");
    await browser.call("click", { ref: refIn(checked.snapshot, /^\+ +button "Delete call mum"/) });
    await browser.call("wait_for", { text: "0 left" });
    expect(apps.todo.todos).toEqual([{ id: 1, text: "buy milk", done: true }]);
  });

  it("scrolls by pixels and to an element", async () => {
    await browser.call("navigate", { url: `${apps.origin}/long` });
    const down = await browser.call("scroll", { direction: "down", pixels: 500 });
    expect(down.scroll_y).toBe(500);
    const up = await browser.call("scroll", { direction: "up", pixels: 200 });
    expect(up.scroll_y).toBe(300);
    const page = (await browser.call("snapshot")).snapshot as string;
    await browser.call("scroll", { ref: refIn(page, /button "Bottom"/) });
    const at = await browser.call("scroll", { direction: "down", pixels: 1 });
    expect(at.scroll_y as number).toBeGreaterThan(3_000);
  });

  it("stores screenshots as images no larger than the viewport", async () => {
    const shot = await browser.call("screenshot");
    expect(shot.media_type).toBe("image/png");
    const bytes = await browser.store.artifacts.get(shot.artifact as string);
    expect(bytes.subarray(1, 4).toString()).toBe("PNG");
    expect(pngSize(bytes)).toEqual({ width: 1000, height: 700 });
    const jpeg = await browser.call("screenshot", { format: "jpeg" });
    const jpegBytes = await browser.store.artifacts.get(jpeg.artifact as string);
    expect([...jpegBytes.subarray(0, 2)]).toEqual([0xff, 0xd8]);
    const page = (await browser.call("snapshot")).snapshot as string;
    const button = await browser.call("screenshot", { ref: refIn(page, /button "Bottom"/) });
    const small = pngSize(await browser.store.artifacts.get(button.artifact as string));
    expect(small.width).toBeLessThan(300);
  });

  it("saves downloads into the workspace and uploads only from it", async () => {
    await browser.call("navigate", { url: `${apps.origin}/files` });
    const page = (await browser.call("snapshot")).snapshot as string;
    const saved = browser.nextEvent(/download saved to/);
    await browser.call("click", { ref: refIn(page, /link "Download report"/) });
    const line = await saved;
    const path = /download saved to (downloads\/\S+report\.csv)/.exec(line)?.[1];
    expect(path).toBeDefined();
    expect(readFileSync(join(browser.workspace, path!), "utf8")).toBe("month,total\njanuary,12\n");
    expect((await browser.call("tabs")).downloads).toEqual([path]);

    writeFileSync(join(browser.workspace, "note.txt"), "hello from the workspace\n");
    const input = refIn(page, /^file "Attachment"/m);
    const outside = await browser.fail("upload", { ref: input, paths: ["../../etc/passwd"] });
    expect(outside.code).toBe("tool.path-outside-workspace");
    await browser.call("upload", { ref: input, paths: ["note.txt"] });
    await browser.call("wait_for", { text: "Chose note.txt: hello from the workspace" });
  });
});
