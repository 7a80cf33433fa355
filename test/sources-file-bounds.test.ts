import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFileSource, parseFileCursor, type SourceDefinition } from "../src/sources/index.js";
import {
  chunksOf,
  lastCursor,
  linesOf,
  startSource,
  testDefinition,
} from "./support/source-recorder.js";

const MiB = 1024 * 1024;
let dir: string;
let path: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "spool-file-bounds-"));
  path = join(dir, "big.log");
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function fileSource(batching: Partial<SourceDefinition["batching"]> = {}) {
  return createFileSource(testDefinition("file", path, { batching }), { path, pollMs: 10 });
}

/** Writes `blocks` blocks of `make(index)` to `path` one at a time: the test never holds the file. */
async function writeStreaming(blocks: number, make: (index: number) => Uint8Array): Promise<void> {
  const handle = await open(path, "w");
  try {
    for (let index = 0; index < blocks; index++) await handle.write(make(index));
  } finally {
    await handle.close();
  }
}

describe("file source: bounded whatever the input", () => {
  it("keeps a 50 MB line to maxLineBytes and says how much it cut", async () => {
    const block = Buffer.alloc(MiB, "x");
    await writeStreaming(51, (index) =>
      index < 50 ? block : Buffer.from("\nshort\nné\n".replace("é", "\u00e9")),
    );
    const run = startSource(fileSource({ maxLineBytes: 4096 }));
    await run.until("three lines", (all) => linesOf(all).length === 3);
    await run.stop();
    const [long, short] = linesOf(run.emissions);
    expect(long).toBe("x".repeat(4096));
    expect(short).toBe("short");
    const cut = chunksOf(run.emissions).reduce((sum, chunk) => sum + (chunk.cut?.bytes ?? 0), 0);
    expect(cut).toBe(50 * MiB - 4096);
    expect(parseFileCursor(lastCursor(run.emissions)!)?.offset).toBe(statSync(path).size);
  });

  it("replaces binary garbage and invalid UTF-8, counting it, and accounts for every byte", async () => {
    const garbage = randomBytes(2 * MiB);
    writeFileSync(path, Buffer.concat([garbage, Buffer.from("\n")]));
    const newlines = garbage.filter((byte) => byte === 0x0a).length + 1;
    const run = startSource(fileSource({ maxLineBytes: 1024 }));
    await run.until("the whole file", (all) => lastCursor(all)?.offset === garbage.length + 1);
    await run.stop();
    const chunks = chunksOf(run.emissions);
    expect(chunks.reduce((sum, chunk) => sum + chunk.lines.length, 0)).toBe(newlines);
    expect(chunks.reduce((sum, chunk) => sum + chunk.bytes, 0)).toBe(garbage.length + 1);
    expect(chunks.reduce((sum, chunk) => sum + (chunk.invalidBytes ?? 0), 0)).toBeGreaterThan(0);
    expect(linesOf(run.emissions).some((line) => line.includes("\uFFFD"))).toBe(true);
  });

  it("streams a 200 MB file in bounded memory, every line once and in order", async () => {
    const linesPerBlock = 10_000;
    const blocks = 200;
    await writeStreaming(blocks, (index) => {
      let text = "";
      for (let line = 0; line < linesPerBlock; line++) {
        text += `${String(index * linesPerBlock + line).padStart(9, "0")} ${"y".repeat(94)}\n`;
      }
      return Buffer.from(text);
    });
    const size = statSync(path).size;
    expect(size).toBeGreaterThan(200 * 1000 * 1000);
    const before = process.memoryUsage();
    let peakRss = before.rss;
    let peakHeap = before.heapUsed;
    let next = 0;
    let outOfOrder = 0;
    const run = startSource(fileSource(), {
      keepLines: false,
      onEmit: (emission) => {
        if (emission.type !== "chunk") return;
        for (const line of emission.lines) {
          if (Number(line.slice(0, 9)) !== next) outOfOrder++;
          next++;
        }
        const now = process.memoryUsage();
        peakRss = Math.max(peakRss, now.rss);
        peakHeap = Math.max(peakHeap, now.heapUsed);
      },
    });
    await run.until("the whole file", (all) => lastCursor(all)?.offset === size);
    await run.stop();
    expect(outOfOrder).toBe(0);
    expect(next).toBe(blocks * linesPerBlock);
    // Far below the file's 200 MB: the reader holds one 256 KiB buffer and one chunk at a time.
    expect(peakRss - before.rss).toBeLessThan(64 * MiB);
    expect(peakHeap - before.heapUsed).toBeLessThan(64 * MiB);
  });
});
