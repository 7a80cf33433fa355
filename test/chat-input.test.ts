import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from "node:child_process";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createChatInput } from "../src/cli/chat/index.js";
import { collectOutput } from "./support/chat-fakes.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const DRIVER = "test/support/chat-input-driver.ts";

/** util-linux `script` gives a command a real pseudo-terminal: `script -qfec "cmd" /dev/null`. */
const hasScript = spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0;

// biome-ignore lint/suspicious/noControlCharactersInRegex: it matches terminal control sequences
const CONTROL = /\x1b\[[0-9;?]*[A-Za-z~]|\r/g;

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'"'"'`)}'`;
}

/** Runs the driver (on a pty, or with pipes); `shows` waits for text on its screen. */
function runDriver(onPty: boolean) {
  const node = [process.execPath, "--import", "tsx", DRIVER].map(shellQuote).join(" ");
  const env: Record<string, string | undefined> = { ...process.env, TERM: "xterm-256color" };
  delete env.NO_COLOR;
  const child = onPty
    ? spawn("script", ["-qfec", `stty cols 120 rows 40; exec ${node}`, "/dev/null"], {
        cwd: root,
        env,
        stdio: ["pipe", "pipe", "pipe"],
      })
    : spawn(process.execPath, ["--import", "tsx", DRIVER], {
        cwd: root,
        env,
        stdio: ["pipe", "pipe", "pipe"],
      });
  let screen = "";
  const waiting: {
    needle: string;
    count: number;
    resolve: () => void;
    reject: (e: Error) => void;
  }[] = [];
  const plain = () => screen.replace(CONTROL, "");
  const seen = (needle: string) => plain().split(needle).length - 1;
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      for (const waiter of waiting.splice(0)) {
        waiter.reject(
          new Error(`exited with ${code} before ${JSON.stringify(waiter.needle)}:\n${screen}`),
        );
      }
      resolve(code);
    });
  });
  const onData = (chunk: Buffer) => {
    screen += chunk.toString("utf8");
    for (const waiter of [...waiting]) {
      if (seen(waiter.needle) >= waiter.count) {
        waiting.splice(waiting.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  return {
    child: child as ChildProcessWithoutNullStreams,
    exited,
    plain,
    /** Resolves once `needle` has been shown `count` times; rejects if the driver exits first. */
    shows(needle: string, count = 1): Promise<void> {
      if (seen(needle) >= count) return Promise.resolve();
      return new Promise((resolve, reject) => waiting.push({ needle, count, resolve, reject }));
    },
    type(keys: string) {
      child.stdin.write(keys);
    },
  };
}

let running: ChildProcessWithoutNullStreams | undefined;
afterEach(() => {
  if (running && running.exitCode === null && running.signalCode === null) running.kill("SIGKILL");
  running = undefined;
});

const ptyTitle = hasScript
  ? "chat input on a real terminal"
  : "chat input on a real terminal (skipped: util-linux `script` is missing)";

describe.skipIf(!hasScript)(ptyTitle, () => {
  it("reads a line, clears the line on Ctrl-C, interrupts a busy run on Ctrl-C and ends on Ctrl-D", async () => {
    const pty = runDriver(true);
    running = pty.child;
    await pty.shows("you> ");
    pty.type("hello\r");
    await pty.shows('read: "hello"');

    await pty.shows("you> ", 2);
    pty.type("abc\x03x\r");
    await pty.shows('read: "x"');

    await pty.shows("you> ", 3);
    pty.type("busy\r");
    await pty.shows("working");
    pty.type("\x03");
    await pty.shows("interrupted 1");

    await pty.shows("you> ", 4);
    pty.type("\x04");
    await pty.shows("eof");
    expect(await pty.exited).toBe(0);
    expect(pty.plain()).not.toContain("abcx");
  });

  it("takes a bracketed paste as one turn, and a second Ctrl-C at an empty prompt ends", async () => {
    const pty = runDriver(true);
    running = pty.child;
    await pty.shows("you> ");
    pty.type("\x1b[200~first line\rsecond line\x1b[201~\r");
    await pty.shows('read: "first line\\nsecond line"');

    await pty.shows("you> ", 2);
    pty.type("\x03");
    await pty.shows("To exit, press Ctrl-C again");
    pty.type("\x03");
    await pty.shows("eof");
    expect(await pty.exited).toBe(0);
  });
});

describe("chat input from a pipe", () => {
  it("reads each line as a turn without prompts, interrupts on SIGINT while busy, ends at EOF", async () => {
    const pipe = runDriver(false);
    running = pipe.child;
    pipe.type("one\nbusy\n");
    await pipe.shows("working");
    pipe.child.kill("SIGINT");
    await pipe.shows("interrupted 1");
    pipe.type("two\n");
    pipe.child.stdin.end();
    await pipe.shows("eof");
    expect(await pipe.exited).toBe(0);
    expect(pipe.plain()).toBe(
      'read: "one"\nread: "busy"\nworking\ninterrupted 1\nread: "two"\neof\n',
    );
  });
});

describe("chat input on an in-process terminal stream", () => {
  /** A readable that claims to be a terminal, so readline edits lines and reads keys. */
  function fakeTerminal() {
    const input = Object.assign(new PassThrough(), { isTTY: true });
    const output = collectOutput(true, 80);
    const chat = createChatInput({ input, output, prompt: "> " });
    return { input, output, chat };
  }

  it("recalls history with the up arrow", async () => {
    const { input, chat } = fakeTerminal();
    const first = chat.next();
    input.write("first\r");
    expect(await first).toBe("first");
    const second = chat.next();
    input.write("\x1b[A\r");
    expect(await second).toBe("first");
    chat.close();
  });

  it("keeps a line entered while busy for the next turn and shows it then", async () => {
    const { input, output, chat } = fakeTerminal();
    const first = chat.next();
    input.write("go\r");
    expect(await first).toBe("go");
    chat.setBusy(true);
    const before = output.text.length;
    input.write("later\r");
    expect(output.text.length).toBe(before);
    expect(await chat.next()).toBe("later");
    expect(output.text.slice(before)).toBe("> later\n");
    chat.close();
  });

  it("resolves a pending turn with undefined on close", async () => {
    const { chat } = fakeTerminal();
    const pending = chat.next();
    chat.close();
    expect(await pending).toBeUndefined();
    expect(await chat.next()).toBeUndefined();
  });
});
