import { type FileHandle, open, stat } from "node:fs/promises";
import { basename, dirname, isAbsolute, join } from "node:path";
import { z } from "zod";
import { BatchedEmitter, SourceStopped } from "./batched-emitter.js";
import { compareDatasetPaths, datasetFiles } from "./dataset-files.js";
import { LineSplitter } from "./line-splitter.js";
import { NotRegularFileError, unreadableMessage } from "./read-errors.js";
import { parseSourceOptions } from "./source-options.js";
import type { Source, SourceContext, SourceCursor, SourceDefinition } from "./source-types.js";

const READ_BUFFER_BYTES = 256 * 1024;

/** A dataset source's own `options` (other keys are ignored). */
const datasetOptions = z.looseObject({
  /** Only files whose path relative to the directory matches this glob. */
  glob: z.string().min(1).max(1_000).optional(),
  /** Only files whose name ends with one of these, e.g. `[".jsonl"]`. */
  extensions: z.array(z.string().min(1).max(100)).max(100).optional(),
});

/**
 * A dataset source's cursor: the file being read (relative to the dataset's directory, `/`
 * between segments; the file's own name for a single-file dataset), the bytes of it delivered as
 * whole lines, and how many files were read to their end before it.
 */
export interface DatasetCursor {
  file: string;
  offset: number;
  files_done: number;
}

/** Reads a logged cursor back, or undefined when it is not a dataset cursor. */
export function parseDatasetCursor(cursor: SourceCursor): DatasetCursor | undefined {
  const { file, offset, files_done } = cursor;
  if (typeof file !== "string") return undefined;
  if (typeof offset !== "number" || !Number.isSafeInteger(offset) || offset < 0) return undefined;
  if (typeof files_done !== "number" || !Number.isSafeInteger(files_done) || files_done < 0) {
    return undefined;
  }
  return { file, offset, files_done };
}

/** How a dataset source is created: the path (absolute, already allowed by policy). */
export interface DatasetSourceOptions {
  path: string;
}

/**
 * A source that reads a finished dataset once, in order, for sequential work: one file, or a
 * directory's files recursively in sorted path order (`compareDatasetPaths`), filtered by
 * `options.glob` and `options.extensions`. Chunks never span two files; the last line of a file
 * is a line even without a newline (dataset files are complete). At the end: `exhausted`, with
 * the cursor of the last line read. Resumes exactly at its cursor `{ file, offset, files_done }`
 * (see `DatasetCursor`): a file gone since is passed over, files added before the cursor are not
 * read. Memory stays bounded (one read buffer, one line, one chunk, one directory listing at a
 * time). A path that is missing or unreadable, or a file in it that is: `failed`
 * `source.unreadable`, with the cursor reached. `run` never throws.
 */
export function createDatasetSource(
  definition: SourceDefinition,
  options: DatasetSourceOptions,
): Source {
  return { definition, run: (context) => runDatasetSource(definition, options, context) };
}

async function runDatasetSource(
  definition: SourceDefinition,
  options: DatasetSourceOptions,
  context: SourceContext,
): Promise<void> {
  const out = new BatchedEmitter(definition, context);
  const parsed = parseSourceOptions(definition, datasetOptions, "source.invalid-options");
  if ("failed" in parsed) return out.fail(parsed.failed);
  if (!isAbsolute(options.path)) {
    return out.fail({
      type: "failed",
      code: "source.invalid-options",
      message: `dataset source "${definition.id}": the path ${JSON.stringify(options.path)} is not absolute: resolve it against the workspace first`,
    });
  }
  const reader = new DatasetReader(definition, parsed.options, options.path, out);
  let file = options.path;
  try {
    const start = await reader.startFrom(context.cursor);
    for await (const relative of await reader.files(start)) {
      file = reader.absolute(relative);
      await reader.readFile(relative);
    }
    await out.send({ type: "exhausted", cursor: reader.cursor() });
  } catch (error) {
    if (error instanceof SourceStopped) return;
    await out.fail({
      type: "failed",
      code: "source.unreadable",
      message: unreadableMessage(file, error),
      cursor: reader.cursor(),
    });
  }
}

/** Where a run begins: the logged cursor, if any. */
type Start = DatasetCursor | undefined;

/** One run over a dataset: where it stands, and reading one file of it. */
class DatasetReader {
  readonly #definition: SourceDefinition;
  readonly #options: z.output<typeof datasetOptions>;
  readonly #path: string;
  readonly #out: BatchedEmitter;
  readonly #buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  #root = "";
  #single = false;
  #file = "";
  #offset = 0;
  #filesDone = 0;

  constructor(
    definition: SourceDefinition,
    options: z.output<typeof datasetOptions>,
    path: string,
    out: BatchedEmitter,
  ) {
    this.#definition = definition;
    this.#options = options;
    this.#path = path;
    this.#out = out;
  }

  /** Parses the logged cursor (an unusable one: a notice, and the dataset from its start). */
  async startFrom(logged: SourceCursor | undefined): Promise<Start> {
    const info = await stat(this.#path);
    this.#single = !info.isDirectory();
    if (this.#single && !info.isFile()) throw new NotRegularFileError(this.#path);
    this.#root = this.#single ? dirname(this.#path) : this.#path;
    if (logged === undefined) return undefined;
    const cursor = parseDatasetCursor(logged);
    if (cursor === undefined) {
      await this.#out.send({
        type: "notice",
        code: "source.cursor-invalid",
        message: `the logged cursor ${JSON.stringify(logged).slice(0, 200)} is not a dataset cursor ({file, offset, files_done}): reading ${this.#path} from its start`,
      });
      return undefined;
    }
    this.#file = cursor.file;
    this.#offset = cursor.offset;
    this.#filesDone = cursor.files_done;
    return cursor;
  }

  /** The dataset's files from the cursor's on, in order. */
  async files(start: Start): Promise<AsyncIterable<string>> {
    if (this.#single) {
      const name = basename(this.#path);
      return (async function* () {
        if (start === undefined || compareDatasetPaths(name, start.file) >= 0) yield name;
      })();
    }
    const { glob, extensions } = this.#options;
    return datasetFiles(this.#root, { glob, extensions }, start?.file);
  }

  /** The absolute path of a file of the dataset. */
  absolute(relative: string): string {
    return join(this.#root, relative);
  }

  /** Where the run stands. */
  cursor(): SourceCursor {
    return { file: this.#file, offset: this.#offset, files_done: this.#filesDone };
  }

  /** Reads one file to its end (from the cursor's offset when it is the cursor's file). */
  async readFile(relative: string): Promise<void> {
    if (relative !== this.#file) {
      // The file before (read to its end, or the cursor's file, gone since) is passed.
      if (this.#file !== "") this.#filesDone += 1;
      this.#file = relative;
      this.#offset = 0;
    }
    const handle = await open(this.absolute(relative), "r");
    try {
      await this.#readLines(handle);
    } finally {
      await handle.close().catch(() => undefined);
    }
  }

  async #readLines(handle: FileHandle): Promise<void> {
    const splitter = new LineSplitter(this.#definition.batching.maxLineBytes);
    let position = this.#offset;
    for (;;) {
      const { bytesRead } = await handle.read(this.#buffer, 0, READ_BUFFER_BYTES, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      for (const line of splitter.push(this.#buffer.subarray(0, bytesRead))) {
        this.#offset += line.bytes;
        await this.#out.add(line, this.cursor());
      }
    }
    for (const line of splitter.end()) {
      this.#offset += line.bytes;
      await this.#out.add(line, this.cursor());
    }
    await this.#out.flush();
  }
}
