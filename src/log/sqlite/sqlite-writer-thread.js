// @ts-check
// The SQLite store's writer thread (see sqlite-writer.ts). Plain JavaScript, so that it runs as
// it is from `src/` under the tests as from `dist/` when installed.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { BatchWriter, SEPARATOR } from "./sqlite-write.js";

/**
 * A chunk of a batch: its `fields` and `hashes` (null when the writer links the batch) joined
 * with U+0001, which no field can hold (ids and names exclude control characters; JSON escapes
 * them), and `expected` (see `BatchWriter.add`). The first chunk opens the batch's transaction
 * (checking its lease `fences`, when it has some), the last commits it and is answered.
 * @typedef {{ kind: "chunk", fields: string, hashes: string | null, expected: string[], first: boolean, last: boolean, fences?: { continuity: string, token: number }[], expectFirst?: number }
 *   | { kind: "checkpoint" } | { kind: "close" }} Request
 */

const port = /** @type {import("node:worker_threads").MessagePort} */ (parentPort);
const options = /** @type {{ file: string, synchronous: string, busyTimeoutMs: number }} */ (
  workerData
);

/** @type {import("better-sqlite3").Database | undefined} */
let db;
/** @type {BatchWriter | undefined} */
let writer;
/** Why the connection could not be opened: every batch fails with it. */
let openError = /** @type {unknown} */ (undefined);
try {
  db = new Database(options.file, { timeout: options.busyTimeoutMs, fileMustExist: true });
  db.pragma(`synchronous = ${options.synchronous}`);
  db.pragma("wal_autocheckpoint = 0");
  writer = new BatchWriter(db);
} catch (error) {
  openError = error;
}

/** The first error of the batch being received; its remaining chunks are skipped. */
let failure = /** @type {unknown} */ (undefined);

port.on("message", (/** @type {Request} */ request) => {
  switch (request.kind) {
    case "chunk":
      return receive(request);
    case "checkpoint":
      try {
        db?.pragma("wal_checkpoint(PASSIVE)");
      } catch {
        // A busy or broken database is retried at the next checkpoint, or surfaces on a write.
      }
      return;
    case "close":
      // Every batch sent before has been answered. (In a worker, exit ends only this thread.)
      db?.close();
      process.exit(0);
  }
});

/** @param {Extract<Request, { kind: "chunk" }>} chunk */
function receive(chunk) {
  if (chunk.first) failure = undefined;
  if (failure === undefined) {
    try {
      if (!writer) throw openError;
      if (chunk.first) writer.begin(chunk.fences, chunk.expectFirst);
      const hashes = chunk.hashes === null ? null : chunk.hashes.split(SEPARATOR);
      writer.add(chunk.fields.split(SEPARATOR), hashes, chunk.expected);
    } catch (error) {
      failure = error;
      writer?.rollback();
    }
  }
  if (!chunk.last) return;
  if (failure === undefined) {
    try {
      const { firstSeq, hashes } = /** @type {BatchWriter} */ (writer).commit();
      port.postMessage({ firstSeq, hashes: hashes?.join(SEPARATOR) });
      return;
    } catch (error) {
      failure = error;
      writer?.rollback();
    }
  }
  const { message, code } = /** @type {{ message?: unknown, code?: unknown }} */ (failure ?? {});
  port.postMessage({ failed: { message: String(message ?? failure), code } });
}
