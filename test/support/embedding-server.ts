/**
 * A loopback OpenAI-compatible embedding server (`POST /v1/embeddings`) that answers with
 * deterministic vectors, for memory tests: each word is folded to a concept (a small table of
 * synonyms, then a crude stem) and hashed into one of 256 dimensions; a text's vector is the
 * normalised sum. Words that mean the same thing land on the same dimension, which is the one
 * property of a real embedding model the hybrid ranking relies on.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Dimensions of every vector. */
export const EMBEDDING_DIMENSIONS = 256;

const SYNONYMS: Record<string, string> = {
  automobile: "car",
  vehicle: "car",
  drive: "car",
  sedan: "car",
  puppy: "dog",
  hound: "dog",
  kitten: "cat",
  feline: "cat",
  allergic: "allergy",
  allergies: "allergy",
  intolerant: "allergy",
  intolerance: "allergy",
  vacation: "trip",
  holiday: "trip",
  travel: "trip",
  flight: "trip",
  journey: "trip",
  wife: "spouse",
  husband: "spouse",
  partner: "spouse",
  married: "spouse",
  database: "db",
  postgres: "db",
  postgresql: "db",
  sqlite: "db",
  birthday: "born",
  birth: "born",
  salary: "pay",
  wage: "pay",
  paid: "pay",
  boss: "manager",
  supervisor: "manager",
  deploy: "release",
  deployment: "release",
  ship: "release",
  shipped: "release",
  outage: "incident",
  downtime: "incident",
  crash: "incident",
  apartment: "home",
  flat: "home",
  house: "home",
  moved: "home",
  relocated: "home",
  doctor: "medical",
  physician: "medical",
  dentist: "medical",
  appointment: "medical",
  vegetarian: "diet",
  vegan: "diet",
  meat: "diet",
  eat: "diet",
  favourite: "favorite",
  prefer: "favorite",
  preferred: "favorite",
  loves: "favorite",
  love: "favorite",
  budget: "money",
  cost: "money",
  spend: "money",
  price: "money",
  language: "speak",
  speaks: "speak",
  fluent: "speak",
};

function concept(word: string): string {
  const direct = SYNONYMS[word];
  if (direct) return direct;
  const stem = word.replace(/(ing|ed|es|s)$/, "");
  return SYNONYMS[stem] ?? stem;
}

function hash(text: string): number {
  let value = 2166136261;
  for (let index = 0; index < text.length; index++) {
    value ^= text.charCodeAt(index);
    value = Math.imul(value, 16777619);
  }
  return value >>> 0;
}

/** The vector the server gives `text`. */
export function embedText(text: string): number[] {
  const vector = new Array<number>(EMBEDDING_DIMENSIONS).fill(0);
  for (const match of text.toLowerCase().matchAll(/[a-z0-9]+/g)) {
    if (match[0].length < 3) continue;
    vector[hash(concept(match[0])) % EMBEDDING_DIMENSIONS]! += 1;
  }
  const norm = Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0)) || 1;
  return vector.map((x) => x / norm);
}

/** A running embedding server. */
export interface EmbeddingServer {
  /** `http://127.0.0.1:<port>/v1`: the base URL the `openai` SDK takes. */
  readonly baseURL: string;
  /** Texts embedded so far, per request. */
  readonly requests: string[][];
  /** Makes every later request fail with this HTTP status (0: answer again). */
  failWith(status: number): void;
  close(): Promise<void>;
}

/** Starts the server on a free loopback port. */
export async function startEmbeddingServer(): Promise<EmbeddingServer> {
  const requests: string[][] = [];
  let failing = 0;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (request.method !== "POST" || !request.url?.endsWith("/embeddings")) {
        response.writeHead(404, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: { message: "not found" } }));
        return;
      }
      if (failing) {
        response.writeHead(failing, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: { message: "embedding server unavailable" } }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        input: string | string[];
        model: string;
      };
      const input = Array.isArray(body.input) ? body.input : [body.input];
      requests.push(input);
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          object: "list",
          model: body.model,
          data: input.map((text, index) => ({
            object: "embedding",
            index,
            embedding: embedText(text),
          })),
          usage: { prompt_tokens: 0, total_tokens: 0 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    failWith(status) {
      failing = status;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
