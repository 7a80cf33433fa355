/**
 * The writer thread of a SQLite store: its own connection, taking large batches in chunks so the
 * store's thread prepares the next chunk while this one links and inserts. See `SqliteWriterThread`.
 */
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { SqliteChainWriter } from "./sqlite-chain-writer.js";
import type { WriterReply, WriterRequest, WriterSetup } from "./sqlite-writer-thread.js";

const setup = workerData as WriterSetup;
const port = parentPort!;
const db = new Database(setup.file, { timeout: setup.busyTimeoutMs });
db.pragma(`synchronous = ${setup.durability === "fast" ? "NORMAL" : "FULL"}`);
const writer = new SqliteChainWriter(db);
let failed = 0;

function reply(message: WriterReply): void {
  port.postMessage(message);
}

port.on("message", (request: WriterRequest) => {
  if (request.op === "close") {
    writer.rollback();
    db.close();
    port.close();
    return;
  }
  if (request.id === failed) return; // the rest of a batch that already failed
  try {
    if (request.begin) writer.begin();
    writer.add(request.rows);
    if (request.end) {
      const { first, hashes } = writer.commit();
      reply({ id: request.id, first, hashes });
    }
  } catch (error) {
    writer.rollback();
    failed = request.id;
    const code = (error as { code?: unknown }).code;
    reply({
      id: request.id,
      error: {
        message: error instanceof Error ? error.message : String(error),
        code: typeof code === "string" ? code : undefined,
      },
    });
  }
});
