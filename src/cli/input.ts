import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { ConfigError, describeError } from "../spec/index.js";
import type { CommandContext } from "./context.js";

/**
 * A command's input as bytes: FILE in one piece (resolved against the CLI's cwd), or standard
 * input as it arrives for `-`. An unreadable FILE is a `ConfigError` saying how to fix it.
 */
export async function* readSource(ctx: CommandContext, source: string): AsyncGenerator<Uint8Array> {
  if (source !== "-") {
    try {
      yield await readFile(resolve(ctx.io.cwd, source));
    } catch (error) {
      throw new ConfigError(
        "cli.unreadable-file",
        `cannot read ${JSON.stringify(source)}: ${describeError(error)}`,
        { hint: "Check the path, or give - to read standard input", cause: error },
      );
    }
    return;
  }
  const encoder = new TextEncoder();
  for await (const chunk of ctx.io.stdin ?? process.stdin) {
    yield typeof chunk === "string" ? encoder.encode(chunk) : chunk;
  }
}

/** The whole input of `readSource` in one buffer. */
export async function readSourceBytes(ctx: CommandContext, source: string): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const part of readSource(ctx, source)) parts.push(part);
  return Buffer.concat(parts);
}
