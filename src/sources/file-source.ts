import { isAbsolute } from "node:path";
import { z } from "zod";
import { BatchedEmitter } from "./batched-emitter.js";
import { FileTail } from "./file-tail.js";
import { parseSourceOptions } from "./source-options.js";
import type { Source, SourceContext, SourceDefinition } from "./source-types.js";

/** The default poll interval of a file source, in milliseconds. */
export const DEFAULT_FILE_POLL_MS = 250;

/** A file source's own `options` (other keys are left to others and ignored). */
const fileOptions = z.looseObject({
  /** Where a first run (no cursor) begins: the file's start, or its last line. */
  from: z.enum(["start", "end"]).default("start"),
  /** How often to look for changes the directory watch may miss, in milliseconds. */
  poll_ms: z.number().int().min(1).max(3_600_000).optional(),
});

/** How a file source is created: the path (absolute, already allowed by policy). */
export interface FileSourceOptions {
  path: string;
  /** The poll interval (default `definition.options.poll_ms`, else 250 ms). */
  pollMs?: number;
}

/**
 * A source that follows one file like `tail -F`. Its cursor is `{ dev, ino, offset, head }` (see
 * `FileCursor`): only whole lines are delivered, a partial last line waits for its newline.
 *
 * - Reads through one 64 KiB buffer and awaits each chunk's `emit` before reading on, so a file of
 *   any size streams in constant memory.
 * - Notices new data by a watch on the directory, with a poll (`pollMs`) as fallback; a held chunk
 *   goes out `batching.maxWaitMs` after its first line.
 * - Rotation: renamed away and created again, the old file is read to its end (its partial last
 *   line delivered as a line), then `rotated` (`renamed`) and the new file from 0; truncated in
 *   place (copytruncate): `rotated` (`truncated`), from 0; deleted: `rotated` (`deleted`) once,
 *   then `rotated` (`recreated`) when it is created again.
 * - Resume: at the cursor's offset when the path still names that file (same inode and head);
 *   else the rotated old file found in the same directory by its inode is finished first; else
 *   the file at the path from 0, with `rotated` (`recreated`) saying the old one is gone.
 * - A missing file is waited for (one `notice` `source.waiting`); one it may not read, a
 *   directory, or a read error: `failed` `source.unreadable` with how to fix it; bad `options`:
 *   `failed` `source.invalid-options`.
 *
 * `run` returns when the signal aborts (handle and watcher closed), never throws.
 */
export function createFileSource(definition: SourceDefinition, options: FileSourceOptions): Source {
  return { definition, run: (context) => runFileSource(definition, options, context) };
}

async function runFileSource(
  definition: SourceDefinition,
  options: FileSourceOptions,
  context: SourceContext,
): Promise<void> {
  const out = new BatchedEmitter(definition, context);
  const parsed = parseSourceOptions(definition, fileOptions, "source.invalid-options");
  if ("failed" in parsed) return out.fail(parsed.failed);
  if (!isAbsolute(options.path)) {
    return out.fail({
      type: "failed",
      code: "source.invalid-options",
      message: `file source "${definition.id}": the path ${JSON.stringify(options.path)} is not absolute: resolve it against the workspace first`,
    });
  }
  const tail = new FileTail(
    {
      path: options.path,
      from: parsed.options.from,
      pollMs: options.pollMs ?? parsed.options.poll_ms ?? DEFAULT_FILE_POLL_MS,
      maxLineBytes: definition.batching.maxLineBytes,
    },
    context,
    out,
  );
  await tail.run();
}
