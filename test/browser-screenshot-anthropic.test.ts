/**
 * A screenshot reaches a real provider SDK as an image: the runtime reads the artifact a
 * compiled request names right before the call, so the Anthropic SDK (talking to a loopback
 * server) sends the bytes as a base64 image block, while the log and the replay hold only the
 * hash.
 */
import { describe, expect, it } from "vitest";
import { anthropicTextFrames } from "./support/anthropic-sse.js";
import { useProviderE2e } from "./support/provider-e2e.js";
import { agentSpec, recordingTool } from "./support/runtime-e2e.js";

const e2e = useProviderE2e();

describe("a screenshot in the context of a run over the Anthropic SDK", () => {
  it("is sent as a base64 image block read from the artifact store, and replays identical", async () => {
    const png = Buffer.from("\x89PNG\r\n\x1a\n not a real image, but bytes all the same");
    const screenshot = recordingTool("browser.screenshot", async () => {
      const { hash } = await e2e.store.artifacts.put(png, { mediaType: "image/png" });
      return {
        tab: "t1",
        url: "http://127.0.0.1:8080/shop",
        title: "Cart",
        artifact: hash,
        media_type: "image/png",
        bytes: png.length,
      };
    });
    const agent = agentSpec("claude-haiku-4-5", [screenshot.tool]);
    e2e.server.respond(
      {
        chunks: anthropicTextFrames([
          '<action type="tool" mode="sync" id="a1">{"name":"browser.screenshot","parameters":{}}</action>',
        ]),
      },
      { chunks: anthropicTextFrames(["<response>The cart holds three items.</response>"]) },
    );

    const { result, events } = await e2e.runTurn(e2e.anthropic(), agent, "What does it show?");
    expect(result).toMatchObject({ status: "completed", steps: 2 });
    const messages = e2e.body(1).messages!;
    const last = messages.at(-1)!;
    expect(last.role).toBe("user");
    const blocks = last.content as Record<string, unknown>[];
    expect(blocks.filter((block) => block.type === "image")).toEqual([
      {
        type: "image",
        source: { type: "base64", media_type: "image/png", data: png.toString("base64") },
      },
    ]);
    expect(JSON.stringify(blocks)).toContain(
      'name=\\"browser.screenshot\\" status=\\"succeeded\\"',
    );
    // The log names the image by its hash; its bytes are never in it.
    const logged = JSON.stringify(events);
    expect(logged).not.toContain(png.toString("base64"));
    await e2e.expectIdenticalReplay(agent, [screenshot]);
  });
});
