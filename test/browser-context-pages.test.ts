/**
 * The browser's current page in a real run: a scripted model drives the real browser relic
 * through the shop; in the request after its second snapshot the first one is a line of history,
 * the screenshot arrives as an image part whose bytes are the artifact's, and `spool replay` of
 * the log is identical without a browser. Also: the runtime edge that reads a request's images
 * from the artifact store.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assembleAgent } from "../src/app/index.js";
import type { EventStore } from "../src/log/index.js";
import {
  createScriptedProvider,
  messageImages,
  type ProviderRequest,
  type UserPart,
} from "../src/providers/index.js";
import { createAgentRuntime, resolveImages, withArtifactImages } from "../src/runtime/index.js";
import { type BrowserApps, startBrowserApps } from "./support/browser-apps/index.js";
import { tool } from "./support/browser-model.js";
import { runSpool } from "./support/cli.js";
import { tempStore } from "./support/transcripts.js";

let apps: BrowserApps;
let store: EventStore;
let storeDir: string;
let cleanup: () => Promise<void>;
let workspace: string;
let home: string;

beforeAll(async () => {
  apps = await startBrowserApps();
  ({ store, cleanup, dir: storeDir } = await tempStore("spool-browser-pages-"));
  workspace = mkdtempSync(join(tmpdir(), "spool-browser-pages-ws-"));
  home = mkdtempSync(join(tmpdir(), "spool-browser-pages-home-"));
  mkdirSync(join(workspace, ".ai", "agents"), { recursive: true });
});
afterAll(async () => {
  await cleanup?.();
  await apps?.close();
  rmSync(workspace, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

type ImagePart = Extract<UserPart, { type: "image" }>;

describe("the browser's page in a running agent's context", () => {
  it("shrinks the first snapshot once a second is taken, sends the screenshot as an image, and replays identical", async () => {
    const after = "<result id=";
    const model = createScriptedProvider({
      model: "scripted",
      script: [
        {
          when: "Look at my cart",
          text: `${tool("a1", "browser.navigate", { url: `${apps.origin}/shop` })}${tool("a2", "browser.snapshot", {})}`,
        },
        {
          when: after,
          text: `${tool("b1", "browser.click", { ref: "e1" })}${tool("b2", "browser.snapshot", {})}${tool("b3", "browser.screenshot", {})}`,
        },
        { when: after, text: "<response>The cart leads to the shipping form.</response>" },
      ],
    });
    writeFileSync(
      join(workspace, ".ai", "agents", "shopper.yaml"),
      `directive: assistant\nbrowser:\n  allow_hosts: ["${apps.host}"]\n  screenshots_in_context: 1\n  events: false\n`,
    );
    const assembled = assembleAgent({
      workspace,
      home,
      store,
      continuity: "pages",
      env: {},
      agent: "shopper",
      provider: model,
    });
    const runtime = createAgentRuntime({ store, ...assembled.options });
    const result = await runtime.submit("pages", {
      text: "Look at my cart.",
      actor: "ada",
      origin: "t",
    });
    await runtime.settled("pages");
    await runtime.close();
    await assembled.close();
    expect(result.status).toBe("completed");

    expect(model.requests).toHaveLength(3);
    const second = JSON.stringify(model.requests[1]!.messages);
    const third = model.requests[2]!;
    // The second request holds the first snapshot whole; the third holds it as a line.
    expect(second).toMatch(/<result id=\\"a2\\"[^>]*>\{\\"snapshot\\":\\"main:/);
    const text = JSON.stringify(third.messages);
    expect(text).toMatch(
      new RegExp(
        `<result id=\\\\"a2\\\\"[^>]*>\\[browser.snapshot of ${apps.origin}/shop \\\\"[^"\\\\]*\\\\" \\(tab t1\\): superseded by a later snapshot\\]</result>`,
      ),
    );
    expect(text).toMatch(/<result id=\\"b2\\"[^>]*>\{\\"snapshot\\":\\"main:/);
    // The screenshot is an image part of the step's results, its bytes read from the artifact.
    const last = third.messages.at(-1)!;
    expect(last.role).toBe("user");
    const parts = (last as { content: UserPart[] }).content;
    const images = parts.filter((part): part is ImagePart => part.type === "image");
    expect(images).toHaveLength(1);
    const image = images[0]!;
    expect(image.mediaType).toBe("image/png");
    expect(image.artifact).toMatch(/^[0-9a-f]{64}$/);
    expect(image.data).toBe((await store.artifacts.get(image.artifact!)).toString("base64"));
    expect(Buffer.from(image.data, "base64").subarray(1, 4).toString()).toBe("PNG");

    // Replay assembles the agent from the manifest and sends the same requests, browser-less.
    const hits = [...apps.hits.values()].reduce((sum, n) => sum + n, 0);
    await store.close();
    const replayed = await runSpool(["replay", "pages", "--db", join(storeDir, "store")], {
      cwd: workspace,
      env: { HOME: home },
    });
    expect(replayed.stderr).toBe("");
    expect(replayed.stdout).toMatch(/^identical: /);
    expect(replayed.code).toBe(0);
    expect([...apps.hits.values()].reduce((sum, n) => sum + n, 0)).toBe(hits);
  });
});

describe("the images a request names by artifact", () => {
  it("reads them from the store right before the call, and says so where one is gone", async () => {
    const { store: local, cleanup: done } = await tempStore("spool-artifact-images-");
    try {
      const png = Buffer.from("\x89PNG fake image bytes");
      const { hash } = await local.artifacts.put(png, { mediaType: "image/png" });
      const gone = "0".repeat(64);
      const ref = (artifact: string): ImagePart => ({
        type: "image",
        mediaType: "image/png",
        data: "",
        artifact,
      });
      const plain: ProviderRequest = { model: "m", messages: [{ role: "user", content: "hi" }] };
      expect(await resolveImages(plain, local.artifacts)).toBe(plain);
      const request: ProviderRequest = {
        model: "m",
        messages: [
          { role: "user", content: "hi" },
          {
            role: "tool",
            results: [
              { toolCallId: "c1", output: "{}", images: [ref(hash)] },
              { toolCallId: "c2", output: "{}", images: [ref(gone)] },
            ],
          },
          {
            role: "user",
            content: [{ type: "text", text: "<action_results>…" }, ref(hash), ref(gone)],
          },
        ],
      };
      const resolved = await resolveImages(request, local.artifacts);
      const data = png.toString("base64");
      expect(resolved.messages[0]).toBe(request.messages[0]);
      expect(resolved.messages[1]).toEqual({
        role: "tool",
        results: [
          { toolCallId: "c1", output: "{}", images: [{ ...ref(hash), data }] },
          {
            toolCallId: "c2",
            output: `{}\n[image ${gone} is no longer in the artifact store]`,
          },
        ],
      });
      expect(resolved.messages[2]).toEqual({
        role: "user",
        content: [
          { type: "text", text: "<action_results>…" },
          { ...ref(hash), data },
          { type: "text", text: `[image ${gone} is no longer in the artifact store]` },
        ],
      });
      // The compiled request is left as it was: its digest names the images by hash.
      expect(
        (request.messages[1] as { results: { images?: ImagePart[] }[] }).results[0]!.images![0]!
          .data,
      ).toBe("");
    } finally {
      await done();
    }
  });

  it("reads an image once while the context keeps it, and again once it left", async () => {
    const { store: local, cleanup: done } = await tempStore("spool-artifact-images-");
    try {
      const first = await local.artifacts.put(Buffer.from("first screenshot"), {
        mediaType: "image/png",
      });
      const second = await local.artifacts.put(Buffer.from("second screenshot"), {
        mediaType: "image/png",
      });
      const reads: string[] = [];
      // The edge only asks whether an image is there and reads it.
      const artifacts = {
        has: (hash: string) => local.artifacts.has(hash),
        get: (hash: string) => {
          reads.push(hash);
          return local.artifacts.get(hash);
        },
      } as unknown as typeof local.artifacts;
      const sent: ProviderRequest[] = [];
      const model = createScriptedProvider({ model: "m", loop: true, script: ["ok"] });
      const provider = withArtifactImages(
        {
          name: model.name,
          format: model.format,
          stream: (request, options) => {
            sent.push(request);
            return model.stream(request, options);
          },
        },
        artifacts,
      );
      const shot = (hash: string): ProviderRequest => ({
        model: "m",
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "look" },
              { type: "image", mediaType: "image/png", data: "", artifact: hash },
            ],
          },
        ],
      });
      for (const hash of [first.hash, first.hash, second.hash, first.hash]) {
        for await (const _ of provider.stream(shot(hash))) {
          // drain
        }
      }
      expect(reads).toEqual([first.hash, second.hash, first.hash]);
      const images = sent.map((request) => messageImages(request.messages[0]!)[0]!.data);
      expect(images).toEqual(
        ["first screenshot", "first screenshot", "second screenshot", "first screenshot"].map(
          (text) => Buffer.from(text).toString("base64"),
        ),
      );
    } finally {
      await done();
    }
  });
});
