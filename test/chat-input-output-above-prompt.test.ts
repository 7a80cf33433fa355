/**
 * What the rest of the chat writes through `ChatInput.output` while the prompt waits for a line
 * goes above the prompt: the prompt is cleared, the output printed, and the prompt drawn again
 * below it with the line being edited. Read off a modelled terminal (`screenOf`).
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createChatInput } from "../src/cli/chat/index.js";
import { collectOutput, screenOf } from "./support/chat-fakes.js";

/** A readable that claims to be a terminal, so readline edits lines and reads keys. */
function fakeTerminal() {
  const input = Object.assign(new PassThrough(), { isTTY: true });
  const output = collectOutput(true, 80);
  const chat = createChatInput({ input, output, prompt: "> " });
  /** Types `keys` and resolves once readline has read every one of them. */
  const type = (keys: string) =>
    new Promise<void>((resolve) => {
      let left = [...keys].length;
      const onKey = () => {
        left -= 1;
        if (left > 0) return;
        input.off("keypress", onKey);
        resolve();
      };
      input.on("keypress", onKey);
      input.write(keys);
    });
  return { output, chat, type, screen: () => screenOf(output.text, 80) };
}

describe("chat input: output above a waiting prompt", () => {
  it("prints a whole line above the prompt and draws the prompt again with what was typed", async () => {
    const { chat, type, screen } = fakeTerminal();
    const turn = chat.next();
    await type("dra");
    expect(screen()).toEqual(["> dra"]);

    chat.output.write("› ada: hello from elsewhere\n");
    expect(screen()).toEqual(["› ada: hello from elsewhere", "> dra"]);

    await type("ft");
    chat.output.write("another line\n");
    expect(screen()).toEqual(["› ada: hello from elsewhere", "another line", "> draft"]);
    await type("\r");
    expect(await turn).toBe("draft");
    chat.close();
  });

  it("keeps the prompt hidden while the output ends mid-line, and shows keys typed meanwhile after", async () => {
    const { chat, type, screen } = fakeTerminal();
    const turn = chat.next();
    chat.output.write("Answer: par");
    expect(screen()).toEqual(["Answer: par"]);
    await type("xy");
    expect(screen()).toEqual(["Answer: par"]);
    chat.output.write("tial\n");
    expect(screen()).toEqual(["Answer: partial", "> xy"]);
    await type("\r");
    expect(await turn).toBe("xy");
    chat.close();
  });

  it("shows a line entered while the prompt was hidden once, on a line of its own", async () => {
    const { chat, type, screen } = fakeTerminal();
    const turn = chat.next();
    chat.output.write("Streaming");
    await type("go\r");
    expect(await turn).toBe("go");
    expect(screen()).toEqual(["Streaming", "> go"]);
    chat.close();
  });

  it("keeps the prompt below a region that is redrawn in place", async () => {
    const { chat, type, screen } = fakeTerminal();
    const turn = chat.next();
    await type("q");
    chat.output.write("⠋ waiting\n");
    expect(screen()).toEqual(["⠋ waiting", "> q"]);
    // The live terminal redraws its region by moving up over it from the line below.
    chat.output.write("\x1b[1A\r\x1b[2K⠙ waiting\n");
    expect(screen()).toEqual(["⠙ waiting", "> q"]);
    chat.output.write("\x1b[1A\r\x1b[J");
    expect(screen()).toEqual(["> q"]);
    await type("\r");
    expect(await turn).toBe("q");
    chat.close();
  });

  it("writes straight through when no prompt waits, and on a pipe", async () => {
    const { chat, output } = fakeTerminal();
    const before = output.text.length;
    chat.output.write("no prompt yet\n");
    expect(output.text.slice(before)).toBe("no prompt yet\n");
    chat.close();

    const piped = collectOutput(false);
    const pipe = createChatInput({ input: new PassThrough(), output: piped, prompt: "> " });
    const turn = pipe.next();
    pipe.output.write("line\n");
    expect(piped.text).toBe("line\n");
    pipe.close();
    expect(await turn).toBeUndefined();
  });
});
