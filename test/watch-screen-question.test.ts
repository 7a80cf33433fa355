/**
 * The screen-question matcher (a user turn that gets the current frame attached) and the parse of
 * a commentary answer (`[SKIP]`, `[[NOTE: …]]`).
 */
import { describe, expect, it } from "vitest";
import { isScreenQuestion, parseCommentaryReply } from "../src/frames/index.js";

describe("isScreenQuestion", () => {
  it.each([
    "what's on screen?",
    "Whats on the screen right now",
    "What is on my screen",
    "what do you see",
    "Can you see the error?",
    "look at the health bar",
    "is the build green on my screen?",
    "take a look please",
    "what am I looking at",
    "describe the screen",
    "what’s on screen", // a typographic apostrophe
  ])("asks about the screen: %s", (text) => {
    expect(isScreenQuestion(text)).toBe(true);
  });

  it.each([
    "I looked into it yesterday",
    "screenshot the bug later",
    "what do you think about the plan?",
    "the screening is at 8",
    "overlook it",
  ])("does not: %s", (text) => {
    expect(isScreenQuestion(text)).toBe(false);
  });
});

describe("parseCommentaryReply", () => {
  it("takes [[NOTE: …]] out of the shown text and keeps each as a note", () => {
    expect(
      parseCommentaryReply("Nice dodge! [[NOTE: boss at 43k HP]]\n[[ note:  second\nphase ]]"),
    ).toEqual({ text: "Nice dodge!", skip: false, notes: ["boss at 43k HP", "second phase"] });
  });

  it("is a skip for [SKIP], with or without notes, and for nothing but notes", () => {
    expect(parseCommentaryReply("[SKIP]")).toEqual({ text: "", skip: true, notes: [] });
    expect(parseCommentaryReply("[skip] [[NOTE: menu open]]")).toEqual({
      text: "",
      skip: true,
      notes: ["menu open"],
    });
    expect(parseCommentaryReply("[[NOTE: lobby]]")).toEqual({
      text: "",
      skip: true,
      notes: ["lobby"],
    });
  });
});
