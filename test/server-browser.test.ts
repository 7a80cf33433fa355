/**
 * The server against real browser clients in a real Chromium (`@sparticuz/chromium` through
 * playwright-core): the AI SDK's own `useChat` (`@ai-sdk/react`, with `resume: true`) streaming an
 * answer from `/api/chat` and reattaching to it after a reload mid-stream, and Chromium's own
 * `EventSource` on the live events route resuming with `Last-Event-ID` across a server restart
 * on the same port. The agent answers through the openai SDK from a loopback model server that
 * holds its stream until the test releases it; real server, real SQLite store, nothing mocked.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serve } from "../src/server/index.js";
import { type DashboardChromium, launchDashboardChromium } from "./support/dashboard-chromium.js";
import { type SpoolServer, startSpoolServer } from "./support/dashboard-server.js";
import { openaiTextFrames } from "./support/openai-sse.js";
import { type ReplayServer, startReplayServer } from "./support/replay-server.js";
import { buildServerPages } from "./support/server-pages.js";

let scratch: string;
let pages: string;
let replay: ReplayServer;
let chromium: DashboardChromium;
let server: SpoolServer;
const releases: (() => void)[] = [];

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "spool-server-browser-"));
  replay = await startReplayServer();
  [pages, chromium] = await Promise.all([buildServerPages(scratch), launchDashboardChromium()]);
  server = await startSpoolServer({
    scratch,
    dashboard: pages,
    env: {
      OPENAI_BASE_URL: `${replay.url}/v1`,
      OPENAI_API_KEY: "sk-loopback-000000000000",
      SPOOL_MODEL: "loopback",
    },
  });
}, 120_000);

afterAll(async () => {
  // A stream a failed test left held would keep its run, and the server's close, waiting.
  for (const release of releases) release();
  await server?.close();
  await chromium?.close();
  await replay?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** Queues a model answer that stops after its first `pieces` text pieces until released. */
function holdAnswer(pieces: readonly string[], after: number): () => void {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  releases.push(release);
  // Frame 0 is the role; the pieces follow it.
  replay.respond({
    chunks: openaiTextFrames(pieces),
    beforeChunk: (index) => (index === after + 1 ? released : undefined),
  });
  return release;
}

/** `expect.poll` with room for a loaded machine: it waits on the page, never on a clock. */
function poll<T>(read: () => Promise<T>, options: { timeout?: number } = {}) {
  return expect.poll(read, { timeout: options.timeout ?? 15_000 });
}

/** The texts of the page's messages of `role`, as rendered. */
function texts(page: Page, role: "user" | "assistant"): Promise<string[]> {
  return page.locator(`li[data-role="${role}"]`).allTextContents();
}

describe("useChat from @ai-sdk/react", () => {
  it("streams the answer, and after a reload mid-stream resumes it and shows it exactly once", async () => {
    const release = holdAnswer(
      ["<response>The answer ", "is forty", "-two, as computed.</response>"],
      2,
    );
    const { page } = await chromium.open(server.url, server.token);
    await page.goto("/chat.html?chat=resumed");
    await page.getByRole("textbox", { name: "Message" }).fill("What is six times seven?");
    await page.getByRole("button", { name: "Send" }).click();
    await poll(() => texts(page, "user")).toEqual(["What is six times seven?"]);
    await poll(() => texts(page, "assistant")).toEqual(["The answer is forty"]);
    await poll(() => page.getByTestId("status").textContent()).toBe("streaming");

    await page.reload();
    // The reloaded page holds no messages of its own: what shows is the resumed stream.
    await poll(() => texts(page, "assistant")).toEqual(["The answer is forty"]);
    await poll(() => page.getByTestId("status").textContent()).toBe("streaming");
    release();
    await poll(() => page.getByTestId("status").textContent()).toBe("ready");
    expect(await texts(page, "assistant")).toEqual(["The answer is forty-two, as computed."]);
    const body = (await page.locator("body").textContent()) ?? "";
    expect(body.split("forty-two").length - 1).toBe(1);
    // Once the turn is over, a fresh page finds no stream to resume (204) and shows nothing.
    await page.reload();
    await poll(() => page.getByTestId("status").textContent()).toBe("ready");
    expect(await texts(page, "assistant")).toEqual([]);
    await page.context().close();
  });
});

describe("Chromium's EventSource on the live events route", () => {
  it("resumes across a server restart on the same port: every event once, in order", async () => {
    const store = server.store;
    const append = (i: number) =>
      store.append({
        continuity: "browser-live",
        type: "turn.added",
        actor: "ada",
        origin: "test",
        data: { text: `t${i}` },
      });
    const start = (port = 0) =>
      serve({
        store,
        workspace: join(scratch, "workspace"),
        env: {},
        lease: { ttlMs: 5_000 },
        port,
        heartbeatMs: 60_000,
        dashboard: { dir: pages },
      });
    let live = await start();
    for (let i = 0; i < 5; i++) await append(i);
    const { page, context } = await chromium.open(live.url, server.token);
    try {
      await page.goto("/events.html?continuity=browser-live");
      const seen = async () => ((await page.locator("#seen").textContent()) ?? "").split(",");
      const expected = async () => {
        const seqs: string[] = [];
        for await (const event of store.read({ continuity: "browser-live" }))
          seqs.push(String(event.seq));
        return seqs;
      };
      await poll(seen).toEqual(await expected());
      await live.close();
      for (let i = 5; i < 10; i++) await append(i);
      live = await start(live.port);
      await poll(seen, { timeout: 20_000 }).toEqual(await expected());
      expect((await expected()).length).toBe(10);
      // The browser saw the connection drop and came back on its own.
      expect(Number(await page.locator("body").getAttribute("data-errors"))).toBeGreaterThan(0);
    } finally {
      await context.close();
      await live.close();
    }
  });
});
