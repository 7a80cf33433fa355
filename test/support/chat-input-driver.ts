/**
 * Drives `createChatInput` on this process's stdin/stdout for test/chat-input.test.ts: prints
 * `read: "<json>"` for every turn; after the turn `busy` it marks the input busy, prints
 * `working` and waits for an interrupt (`interrupted N`); prints `eof` when the input ends.
 */
import { createChatInput } from "../../src/cli/chat/index.js";

const input = createChatInput({
  input: process.stdin,
  output: process.stdout,
  prompt: "you> ",
  signals: process,
});
let interrupts = 0;
let release: (() => void) | undefined;
input.onInterrupt(() => {
  interrupts += 1;
  process.stdout.write(`interrupted ${interrupts}\n`);
  release?.();
});
for (;;) {
  const line = await input.next();
  if (line === undefined) break;
  process.stdout.write(`read: ${JSON.stringify(line)}\n`);
  if (line === "busy") {
    input.setBusy(true);
    process.stdout.write("working\n");
    await new Promise<void>((resolve) => {
      release = resolve;
    });
    input.setBusy(false);
  }
}
process.stdout.write("eof\n");
input.close();
