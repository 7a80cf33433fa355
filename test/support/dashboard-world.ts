/**
 * What a dashboard test file runs against: the real server (`src/server`) on loopback over a real
 * SQLite store in a temporary workspace, its agent answering through the openai SDK from a
 * loopback model server whose streams a test scripts (and can hold open between two pieces), the
 * built dashboard, and one real Chromium. One world serves a whole test file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import type { EventStore } from "../../src/log/index.js";
import { dashboardBuild } from "./dashboard-build.js";
import { type DashboardChromium, launchDashboardChromium } from "./dashboard-chromium.js";
import { type SpoolServer, startSpoolServer } from "./dashboard-server.js";
import { type ReplayServer, startReplayServer } from "./replay-server.js";

/** A model answer held open until the test releases it. */
export interface HeldAnswer {
  release(): void;
}

/** The loopback model: each model call takes the next scripted answer. */
export interface LoopbackModel {
  /** Queues answers (the frames of one chat completion stream each) for the next calls. */
  answer(...streams: string[][]): void;
  /** Queues one answer that stops after its first `pieces` text pieces until released. */
  hold(stream: string[], pieces: number): HeldAnswer;
}

/** A running dashboard world. */
export interface DashboardWorld {
  store: EventStore;
  model: LoopbackModel;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** The server's workspace (agent manifests go in its `.ai/agents/`). */
  workspace: string;
  /** The owner token's secret. */
  token: string;
  /** Creates a continuity over the API (as its owner), for the agent manifest `agent` if given. */
  createContinuity(id: string, title?: string, agent?: string): Promise<string>;
  /** Adds a turn over the API and resolves once its run has completed. */
  turn(continuity: string, text: string): Promise<void>;
  /** A fresh browser context (empty storage, `token` stored) on `path`. */
  page(path: string, token?: string): Promise<Page>;
  close(): Promise<void>;
}

/** Starts a world; `prefix` names its temporary folder. */
export async function startDashboardWorld(prefix: string): Promise<DashboardWorld> {
  const scratch = mkdtempSync(join(tmpdir(), prefix));
  const cleanups: (() => Promise<void> | void)[] = [
    () => rmSync(scratch, { recursive: true, force: true }),
  ];
  try {
    const replay = await startReplayServer();
    cleanups.push(() => replay.close());
    const [dashboard, chromium] = await Promise.all([
      dashboardBuild(scratch),
      launchDashboardChromium(),
    ]);
    cleanups.push(() => chromium.close());
    const server = await startSpoolServer({
      scratch,
      dashboard,
      env: {
        OPENAI_BASE_URL: `${replay.url}/v1`,
        OPENAI_API_KEY: "sk-loopback-000000000000",
        SPOOL_MODEL: "loopback",
      },
    });
    cleanups.push(() => server.close());
    return world(server, replay, chromium, cleanups);
  } catch (error) {
    for (const cleanup of cleanups.reverse()) await cleanup();
    throw error;
  }
}

function world(
  server: SpoolServer,
  replay: ReplayServer,
  chromium: DashboardChromium,
  cleanups: (() => Promise<void> | void)[],
): DashboardWorld {
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!response.ok)
      throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<Record<string, unknown>>;
  };
  const held: (() => void)[] = [];
  const model: LoopbackModel = {
    answer(...streams) {
      replay.respond(...streams.map((chunks) => ({ chunks })));
    },
    hold(stream, pieces) {
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      held.push(release);
      // Frame 0 is the role; the pieces follow it.
      replay.respond({
        chunks: stream,
        beforeChunk: (index) => (index === pieces + 1 ? released : undefined),
      });
      return { release };
    },
  };
  return {
    store: server.store,
    model,
    url: server.url,
    workspace: server.workspace,
    token: server.token,
    async createContinuity(id, title, agent) {
      await api("POST", "/api/continuities", {
        id,
        ...(title ? { title } : {}),
        ...(agent ? { agent } : {}),
      });
      return id;
    },
    async turn(continuity, text) {
      const accepted = await api("POST", `/api/continuities/${continuity}/turns`, { text });
      const turn = (accepted.turn as { seq: number }).seq;
      for await (const message of server.store.subscribe({
        continuity,
        after: turn,
        types: ["run.completed"],
      })) {
        if (message.type === "event") return;
      }
    },
    async page(path, token = server.token) {
      const { page } = await chromium.open(server.url, token);
      await page.goto(path);
      return page;
    },
    async close() {
      // A stream a failed test left held would keep its run, and the server's close, waiting.
      for (const release of held) release();
      for (const cleanup of cleanups.reverse()) await cleanup();
    },
  };
}
