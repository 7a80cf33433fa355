/**
 * Image tokens by each provider's formula: Anthropic (w*h/750 after fitting 1568 px and 1.15 MP),
 * OpenAI (85 + 170 per 512-px tile after fitting 2048 and a 768-px short side; 85 at low detail),
 * Gemini (258 per 768-px tile); and the estimator counting a sized image by the model's maker
 * while an image of unknown size keeps the flat guess.
 */
import { describe, expect, it } from "vitest";
import {
  anthropicImageTokens,
  createTokenEstimator,
  geminiImageTokens,
  IMAGE_TOKENS,
  imageTokens,
  openaiImageTokens,
} from "../src/providers/index.js";

describe("provider image formulas", () => {
  it("Anthropic: width*height/750, after its resize", () => {
    expect(anthropicImageTokens(200, 200)).toBe(54); // 40,000 / 750 = 53.3
    expect(anthropicImageTokens(1000, 1000)).toBe(1334);
    // 1920x1080 is 2.07 MP: scaled to 1.15 MP keeps the aspect, about 1,533 tokens.
    const hd = anthropicImageTokens(1920, 1080);
    expect(hd).toBeGreaterThan(1500);
    expect(hd).toBeLessThanOrEqual(Math.ceil(1_150_000 / 750));
    // A long strip is held to a 1568-px long edge.
    expect(anthropicImageTokens(4000, 100)).toBe(Math.ceil((1568 * 39) / 750));
  });

  it("OpenAI: 85 + 170 per tile at high detail, 85 at low", () => {
    expect(openaiImageTokens(1024, 1024)).toBe(765); // 768x768: 4 tiles
    expect(openaiImageTokens(2048, 4096)).toBe(1105); // 1024x2048 -> 768x1536: 6 tiles
    expect(openaiImageTokens(1920, 1080)).toBe(1105); // 1365x768: 3x2 tiles
    expect(openaiImageTokens(512, 512)).toBe(255);
    expect(openaiImageTokens(4096, 4096, "low")).toBe(85);
  });

  it("Gemini: 258 for a small image, 258 per 768-px tile for a larger one", () => {
    expect(geminiImageTokens(384, 384)).toBe(258);
    expect(geminiImageTokens(1920, 1080)).toBe(258 * 3 * 2);
  });

  it("falls back to the flat guess when the size is unknown", () => {
    expect(imageTokens("anthropic", {}, IMAGE_TOKENS)).toBe(IMAGE_TOKENS);
    expect(imageTokens("openai", { width: 1024, height: 1024 }, IMAGE_TOKENS)).toBe(765);
  });
});

describe("the token estimator", () => {
  const estimator = createTokenEstimator();
  const request = (image: { width?: number; height?: number }) => ({
    messages: [
      {
        role: "user" as const,
        content: [{ type: "image" as const, mediaType: "image/png", data: "", ...image }],
      },
    ],
  });
  const imageCost = (model: string, image: { width?: number; height?: number }) =>
    estimator.raw(model, request(image)) -
    estimator.raw(model, request({ width: 0, height: 0 })) +
    IMAGE_TOKENS;

  it("counts a sized image by the model's maker", () => {
    expect(imageCost("claude-sonnet-4-5", { width: 1000, height: 1000 })).toBe(1334);
    expect(imageCost("gpt-4o", { width: 1024, height: 1024 })).toBe(765);
    expect(imageCost("gpt-4o", {})).toBe(IMAGE_TOKENS);
  });

  it("counts a tool result's screenshot by its size too", () => {
    const tool = (images: { width?: number; height?: number }[]) =>
      estimator.raw("claude-sonnet-4-5", {
        messages: [
          {
            role: "tool",
            results: [
              {
                toolCallId: "c1",
                output: "ok",
                images: images.map((size) => ({
                  type: "image",
                  mediaType: "image/png",
                  data: "",
                  ...size,
                })),
              },
            ],
          },
        ],
      });
    expect(tool([{ width: 300, height: 300 }]) - tool([])).toBe(120);
  });
});
