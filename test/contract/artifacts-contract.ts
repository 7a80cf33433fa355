import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventStore } from "../../src/log/index.js";
import { StoreError } from "../../src/spec/index.js";
import { collect } from "../support/events.js";
import type { HarnessFactory, StoreHarness } from "./harness.js";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

async function* chunked(bytes: Uint8Array, size: number): AsyncIterable<Uint8Array> {
  for (let offset = 0; offset < bytes.length; offset += size)
    yield bytes.subarray(offset, offset + size);
}

/** Byte equality without element-by-element diffing (which takes seconds on megabytes). */
function expectBytes(actual: Buffer, expected: Uint8Array): void {
  expect(actual.length).toBe(expected.length);
  expect(actual.equals(expected), "bytes differ").toBe(true);
}

const codeOf = (error: unknown) => (error instanceof StoreError ? error.code : String(error));

/** Content-addressed artifacts: dedupe, ranges, streams, errors. */
export function artifactsContract(factory: HarnessFactory): void {
  describe("artifacts", () => {
    let harness: StoreHarness;
    let store: EventStore;
    beforeEach(async () => {
      harness = await factory();
      store = await harness.open();
    });
    afterEach(async () => {
      await store.close();
      await harness.cleanup();
    });

    it("stores by sha256 and deduplicates", async () => {
      const bytes = Buffer.from("the same words, twice");
      const first = await store.artifacts.put(bytes, { mediaType: "text/plain" });
      const second = await store.artifacts.put(Buffer.from(bytes));
      expect(first).toMatchObject({
        hash: sha256(bytes),
        size: bytes.length,
        mediaType: "text/plain",
      });
      expect(second).toEqual(first);
      expect(await store.artifacts.get(first.hash)).toEqual(bytes);
      expect(await store.artifacts.has(first.hash)).toBe(true);
      expect(await store.artifacts.stat(first.hash)).toEqual(first);
      const empty = await store.artifacts.put(new Uint8Array());
      expect(empty.size).toBe(0);
      expect((await store.artifacts.get(empty.hash)).length).toBe(0);
    });

    it("reads ranges of a large artifact, across chunk boundaries", async () => {
      const bytes = Buffer.alloc(5 * 1024 * 1024 + 123);
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 251;
      const info = await store.artifacts.put(chunked(bytes, 100_000), {
        mediaType: "application/octet-stream",
      });
      expect(info).toMatchObject({ hash: sha256(bytes), size: bytes.length });
      const ranges = [
        { offset: 0, length: 10 },
        { offset: 262_140, length: 10 },
        { offset: 1_000_000, length: 2_000_000 },
        { offset: bytes.length - 5, length: 100 },
        { offset: bytes.length + 10, length: 5 },
        { offset: 4_000_000 },
      ];
      for (const range of ranges) {
        const end =
          range.length === undefined
            ? bytes.length
            : Math.min(bytes.length, range.offset + range.length);
        expectBytes(
          await store.artifacts.get(info.hash, range),
          bytes.subarray(Math.min(range.offset, bytes.length), end),
        );
      }
      const streamed = Buffer.concat(
        await collect(store.artifacts.stream(info.hash, { offset: 3, length: 700_000 })),
      );
      expectBytes(streamed, bytes.subarray(3, 700_003));
    });

    it("reads back every size, given whole or streamed, in ranges, after a reopen", async () => {
      // Small artifacts given whole may be kept apart from large ones (SQLite keeps them in the
      // database): the sizes straddle that line, and each is put both ways.
      const sizes = [1, 700, 64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1, 200_000];
      const contents = sizes.map((size, n) => {
        const bytes = Buffer.alloc(size);
        for (let i = 0; i < size; i++) bytes[i] = (i * 31 + n) % 253;
        return bytes;
      });
      for (const bytes of contents) {
        const whole = await store.artifacts.put(bytes);
        const streamed = await store.artifacts.put(chunked(bytes, 10_000));
        expect(streamed).toEqual(whole);
        expect(whole).toMatchObject({ hash: sha256(bytes), size: bytes.length });
      }
      await store.close();
      store = await harness.open();
      for (const bytes of contents) {
        const hash = sha256(bytes);
        expectBytes(await store.artifacts.get(hash), bytes);
        const middle = Math.floor(bytes.length / 2);
        expectBytes(
          await store.artifacts.get(hash, { offset: middle, length: 3 }),
          bytes.subarray(middle, middle + 3),
        );
        expectBytes(
          Buffer.concat(await collect(store.artifacts.stream(hash, { offset: 1 }))),
          bytes.subarray(1),
        );
      }
    });

    it("is safe when the same content is put concurrently", async () => {
      const bytes = Buffer.from("x".repeat(300_000));
      const infos = await Promise.all([1, 2, 3, 4].map(() => store.artifacts.put(bytes)));
      expect(new Set(infos.map((info) => info.hash)).size).toBe(1);
      expectBytes(await store.artifacts.get(infos[0]!.hash), bytes);
    });

    it("answers missing hashes, bad hashes and bad ranges with typed errors", async () => {
      const info = await store.artifacts.put(Buffer.from("abc"));
      expect(codeOf(await store.artifacts.get("0".repeat(64)).catch((e: unknown) => e))).toBe(
        "artifact.not-found",
      );
      expect(await store.artifacts.stat("0".repeat(64))).toBeUndefined();
      expect(codeOf(await store.artifacts.get("../../etc/passwd").catch((e: unknown) => e))).toBe(
        "artifact.bad-hash",
      );
      expect(
        codeOf(await store.artifacts.get(info.hash, { offset: -1 }).catch((e: unknown) => e)),
      ).toBe("artifact.bad-range");
      expect(
        codeOf(
          await store.artifacts.get(info.hash, { offset: 0, length: -2 }).catch((e: unknown) => e),
        ),
      ).toBe("artifact.bad-range");
    });

    it("references artifacts from events by hash", async () => {
      const info = await store.artifacts.put(Buffer.from("a summary"), {
        mediaType: "text/markdown",
      });
      const event = await store.append({
        continuity: "main",
        type: "artifact.stored",
        data: { hash: info.hash, size: info.size, media_type: info.mediaType, purpose: "summary" },
      });
      const [read] = await collect(store.read({ types: ["artifact.stored"] }));
      expect(read).toEqual(event);
      expect((await store.artifacts.get((read!.data as { hash: string }).hash)).toString()).toBe(
        "a summary",
      );
    });
  });
}
