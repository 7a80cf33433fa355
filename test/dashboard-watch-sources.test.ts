/**
 * The stream-watch and sources pages in a real Chromium against the real server over a real
 * SQLite store: an agent whose manifest reads a file source and watches pushed frames. A frame
 * is pushed over `POST …/frames` (as a capture client would); the watch page shows it (fetched by
 * hash from `…/artifacts/<hash>` with the token), the note the note-taker wrote about it through
 * the loopback model, and the settings form, which saves a valid change (the server logs it
 * through the running watch) and shows the server's own message for a value out of range. The
 * sources page shows the source's status, cursor and lag, and its Pause button pauses it through
 * the server (logged `by: "http"`).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Locator, Page } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SpoolEvent } from "../src/spec/index.js";
import { type DashboardWorld, startDashboardWorld } from "./support/dashboard-world.js";
import { openaiTextFrames } from "./support/openai-sse.js";

let world: DashboardWorld;
const CONTINUITY = "desk";
const NOTE = "A red login screen.";

const MANIFEST = `directive: assistant
description: reads the app log and watches the screen
sources:
  - id: app-log
    kind: file
    target: app.log
watch:
  autonomousCommentaryEnabled: false
  source: { push: true }
`;

/** Resolves with the first event of `types` that `match` accepts. */
async function until(types: string[], match: (event: SpoolEvent) => boolean = () => true) {
  const stop = new AbortController();
  for await (const message of world.store.subscribe({
    continuity: CONTINUITY,
    types,
    signal: stop.signal,
  })) {
    if (message.type === "event" && match(message.event)) {
      stop.abort();
      return message.event;
    }
  }
  throw new Error(`the log ended without ${types.join(", ")}`);
}

/** What a person reads in `locator` (Playwright's `innerText`: rendered text, as laid out). */
function text(locator: Locator): Promise<string> {
  // biome-ignore lint/performance/useDomNodeTextContent: Playwright's method, not the DOM property
  return locator.innerText();
}

function shown(page: Page, selector: string): Promise<string> {
  return text(page.locator(selector).first());
}

describe("the stream-watch and sources pages", () => {
  beforeAll(async () => {
    world = await startDashboardWorld("spool-dashboard-watch-");
    mkdirSync(join(world.workspace, ".ai", "agents"), { recursive: true });
    writeFileSync(join(world.workspace, ".ai", "agents", "watcher.yaml"), MANIFEST);
    writeFileSync(join(world.workspace, "app.log"), "GET /login 200\nPOST /login 302\n");
    // Every model call (the note-taker's, the delivery turn's) gets this answer.
    world.model.answer(openaiTextFrames([NOTE]));
    await world.createContinuity(CONTINUITY, "Desk", "watcher");
    const frame = await sharp({
      create: { width: 64, height: 36, channels: 3, background: { r: 220, g: 20, b: 20 } },
    })
      .jpeg()
      .toBuffer();
    const pushed = await fetch(`${world.url}/api/continuities/${CONTINUITY}/frames`, {
      method: "POST",
      headers: { authorization: `Bearer ${world.token}`, "content-type": "image/jpeg" },
      body: new Uint8Array(frame),
    });
    expect(pushed.status).toBe(202);
    await until(["note.added"]);
    await until(["source.chunk"]);
  }, 180_000);

  afterAll(async () => {
    await world?.close();
  });

  it("shows the latest frame and the notes, saves a valid setting and shows the server's refusal of a bad one", async () => {
    const page = await world.page(`/c/${CONTINUITY}/watch`);
    try {
      const image = page.getByRole("img", { name: "Latest frame from push" });
      await image.waitFor();
      await expect
        .poll(() => image.evaluate((element) => (element as { naturalWidth: number }).naturalWidth))
        .toBe(64);
      await page.getByRole("list", { name: "Rolling notes" }).getByText(NOTE).waitFor();

      const form = page.getByRole("form", { name: "Stream-watch settings" });
      const threshold = form.locator('input[name="changeThreshold"]');
      await threshold.fill("0.2");
      await form.getByRole("button", { name: "Save" }).click();
      await form.getByRole("status").getByText("Saved.").waitFor();
      const changed = await until(
        ["watch.settings-changed"],
        (event) => (event.data as { by: string }).by === "http",
      );
      expect([
        (changed.data as { settings: { changeThreshold: number } }).settings.changeThreshold,
        changed.actor,
      ]).toEqual([0.2, "ada"]);

      await threshold.fill("5");
      await form.getByRole("button", { name: "Save" }).click();
      const alert = form.getByRole("alert");
      await alert.waitFor();
      expect(await text(alert)).toContain(
        "changeThreshold must be a number from 0.005 to 1 (default 0.01)",
      );
      expect(await threshold.getAttribute("aria-invalid")).toBe("true");
    } finally {
      await page.context().close();
    }
  });

  it("shows each source's status, cursor and lag, and pauses one through the server", async () => {
    const page = await world.page(`/c/${CONTINUITY}/sources`);
    try {
      const row = page.locator('[data-source="app-log"]');
      await row.waitFor();
      await expect.poll(() => shown(page, '[data-source="app-log"] .badge')).toBe("running");
      // The cursor after the file's chunk, in a few characters: the file's offset.
      await expect
        .poll(() => shown(page, '[data-source="app-log"] td.mono:nth-child(4)'))
        .toMatch(/^@\d[\d,]*$/);
      expect(await text(row)).toMatch(/up to date|\d+ chunks/);
      await row.getByRole("button", { name: "Pause app-log" }).click();
      await expect.poll(() => shown(page, '[data-source="app-log"] .badge')).toBe("paused");
      const paused = await until(["source.paused"]);
      expect([(paused.data as { by: string }).by, paused.actor]).toEqual(["http", "ada"]);
      await row.getByRole("button", { name: "Resume app-log" }).waitFor();
    } finally {
      await page.context().close();
    }
  });
});
