import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { z } from "zod";
import { defineTool } from "../actions/index.js";
import type { ToolLimits } from "./limits.js";
import { decodeCapped, looksBinary, SNIFF_BYTES, utf8Boundary } from "./text-bytes.js";
import { abortedError, ToolError, toFsToolError } from "./tool-error.js";
import { O_NOFOLLOW, type Workspace, type WorkspacePath } from "./workspace.js";

/** What the fs tools share: the workspace they are confined to and the caps. */
export interface FsToolOptions {
  workspace: Workspace;
  limits: ToolLimits;
}

/** `fs.read`'s result for a byte range (the default). */
export interface FsReadBytesResult {
  path: string;
  /** The file's size in bytes. */
  size: number;
  /** Where the returned text starts (moved past a cut character if `offset` fell inside one). */
  offset: number;
  content: string;
  /** True when the cap cut the content short of what was asked. */
  truncated: boolean;
  /** The offset to read on from, or null at the end of the file. */
  nextOffset: number | null;
}

/** `fs.read`'s result for a line range. */
export interface FsReadLinesResult {
  path: string;
  size: number;
  startLine: number;
  /** The last line returned (0 when none was). */
  endLine: number;
  content: string;
  truncated: boolean;
  /** The line to read on from, or null at the end of the file. */
  nextLine: number | null;
}

const READ_FLAGS = constants.O_RDONLY | O_NOFOLLOW | (constants.O_NONBLOCK ?? 0);

function parameters(limits: ToolLimits) {
  return z
    .strictObject({
      path: z.string().describe("File path relative to the workspace root, e.g. `src/index.ts`."),
      offset: z
        .number()
        .int()
        .min(0)
        .optional()
        .describe("Byte offset to start at (default 0). Use with `length`; not with lines."),
      length: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe(`Most bytes to return (default and cap ${limits.readBytes}).`),
      startLine: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe("First line to return, counting from 1. Use instead of offset/length."),
      endLine: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe("Last line to return, inclusive (default: as many as the cap allows)."),
    })
    .refine(
      (p) =>
        (p.offset === undefined && p.length === undefined) ||
        (p.startLine === undefined && p.endLine === undefined),
      { message: "give either offset/length or startLine/endLine, not both" },
    )
    .refine((p) => p.endLine === undefined || p.endLine >= (p.startLine ?? 1), {
      message: "endLine must not be before startLine",
      path: ["endLine"],
    });
}

async function openText(target: WorkspacePath): Promise<{ handle: FileHandle; size: number }> {
  let handle: FileHandle;
  try {
    handle = await open(target.real, READ_FLAGS);
  } catch (error) {
    throw toFsToolError(error, target.relative);
  }
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) throw toFsToolError({ code: "EISDIR" }, target.relative);
    if (!stat.isFile()) {
      throw new ToolError("tool.bad-path", `\`${target.relative}\` is not a regular file`, {
        hint: "fs.read reads regular files only (not devices, sockets or pipes)",
      });
    }
    const sample = Buffer.alloc(Math.min(SNIFF_BYTES, stat.size));
    const { bytesRead } = await handle.read(sample, 0, sample.length, 0);
    if (looksBinary(sample.subarray(0, bytesRead))) {
      throw new ToolError(
        "tool.binary-file",
        `\`${target.relative}\` looks like a binary file (it has NUL bytes or is not UTF-8)`,
        {
          hint: "fs.read returns text only; use a text file, or shell.run with a tool that reads it",
        },
      );
    }
    return { handle, size: stat.size };
  } catch (error) {
    await handle.close();
    throw toFsToolError(error, target.relative);
  }
}

async function readBytes(
  handle: FileHandle,
  target: WorkspacePath,
  size: number,
  cap: number,
  offset: number,
  length: number | undefined,
): Promise<FsReadBytesResult> {
  const wanted = Math.max(0, Math.min(length ?? Number.POSITIVE_INFINITY, size - offset));
  // Read a few bytes more than the cap so a character cut at either end can be moved past.
  const window = Buffer.alloc(Math.min(wanted, cap) + 4);
  const { bytesRead } = await handle.read(window, 0, window.length, offset);
  const bytes = window.subarray(0, bytesRead);
  let start = 0;
  while (offset > 0 && start < 3 && start < bytes.length && (bytes[start]! & 0xc0) === 0x80) {
    start += 1;
  }
  const limit = Math.min(start + cap, start + wanted, bytes.length);
  const end = limit < bytes.length ? utf8Boundary(bytes, limit) : limit;
  const decoded = decodeCapped(bytes.subarray(start, end), cap);
  const next = offset + start + decoded.bytes;
  return {
    path: target.relative,
    size,
    offset: offset + start,
    content: decoded.text,
    truncated: wanted > cap,
    nextOffset: next < size ? next : null,
  };
}

async function readLines(
  handle: FileHandle,
  target: WorkspacePath,
  size: number,
  cap: number,
  startLine: number,
  endLine: number | undefined,
  signal: AbortSignal,
): Promise<FsReadLinesResult> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let lastLine = 0;
  let truncated = false;
  let nextLine: number | null = null;
  let line = 1;
  let pending: Buffer[] = [];
  let pendingBytes = 0;

  /** Takes line `line` (its bytes, "\n" included); false when the read must stop here. */
  const consider = (bytes: Buffer, moreAfter: boolean): boolean => {
    const number = line;
    line += 1;
    if (number < startLine) return true;
    if (keptBytes + bytes.length > cap) {
      truncated = true;
      if (kept.length === 0) {
        const cut = utf8Boundary(bytes, cap);
        kept.push(bytes.subarray(0, cut));
        keptBytes = cut;
        lastLine = number;
        nextLine = moreAfter ? number + 1 : null;
      } else {
        nextLine = number;
      }
      return false;
    }
    kept.push(bytes);
    keptBytes += bytes.length;
    lastLine = number;
    if (endLine !== undefined && number >= endLine) {
      nextLine = moreAfter ? number + 1 : null;
      return false;
    }
    return true;
  };

  const chunk = Buffer.alloc(64 * 1024);
  let position = 0;
  reading: for (;;) {
    if (signal.aborted) throw abortedError(`fs.read of \`${target.relative}\``);
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) {
      if (pendingBytes > 0) consider(Buffer.concat(pending), false);
      break;
    }
    position += bytesRead;
    let from = 0;
    for (let index = from; index < bytesRead; index += 1) {
      if (chunk[index] !== 0x0a) continue;
      if (line >= startLine) pending.push(Buffer.from(chunk.subarray(from, index + 1)));
      from = index + 1;
      const bytes = Buffer.concat(pending);
      pending = [];
      pendingBytes = 0;
      if (!consider(bytes, from < bytesRead || position < size)) break reading;
    }
    if (from < bytesRead && line >= startLine) {
      pending.push(Buffer.from(chunk.subarray(from, bytesRead)));
      pendingBytes += bytesRead - from;
      // A line longer than what is left of the cap is cut now, not read to its end.
      if (keptBytes + pendingBytes > cap) {
        consider(Buffer.concat(pending), true);
        break;
      }
    }
  }
  return {
    path: target.relative,
    size,
    startLine,
    endLine: lastLine,
    content: Buffer.concat(kept).toString("utf8"),
    truncated,
    nextLine,
  };
}

/**
 * `fs.read`: returns a text file of the workspace, by byte range or line range, capped at
 * `limits.readBytes`. Refuses binary files (`tool.binary-file`), directories and special files.
 * Idempotent, no side effects.
 */
export function fsReadTool({ workspace, limits }: FsToolOptions) {
  return defineTool({
    name: "fs.read",
    description:
      "Reads a UTF-8 text file in the workspace, whole or by byte range (offset/length) or line range (startLine/endLine). " +
      `Returns at most ${limits.readBytes} bytes; \`truncated\` and \`nextOffset\`/\`nextLine\` say how to read on.`,
    parameters: parameters(limits),
    idempotent: true,
    sideEffects: false,
    async execute(input, context): Promise<FsReadBytesResult | FsReadLinesResult> {
      const target = await workspace.resolve(input.path);
      const { handle, size } = await openText(target);
      try {
        if (input.startLine !== undefined || input.endLine !== undefined) {
          return await readLines(
            handle,
            target,
            size,
            limits.readBytes,
            input.startLine ?? 1,
            input.endLine,
            context.signal,
          );
        }
        return await readBytes(
          handle,
          target,
          size,
          limits.readBytes,
          input.offset ?? 0,
          input.length,
        );
      } catch (error) {
        throw toFsToolError(error, target.relative);
      } finally {
        await handle.close();
      }
    },
  });
}
