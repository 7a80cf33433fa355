import { appendContract } from "./append-contract.js";
import { artifactsContract } from "./artifacts-contract.js";
import { chainContract } from "./chain-contract.js";
import { concurrencyContract } from "./concurrency-contract.js";
import type { HarnessFactory } from "./harness.js";
import { leaseContract } from "./lease-contract.js";
import { predictedAppendsContract } from "./predicted-appends-contract.js";
import { readContract } from "./read-contract.js";
import { recentReadsContract } from "./recent-reads-contract.js";
import { subscribeContract } from "./subscribe-contract.js";

/** The whole `EventStore` contract; each adapter's test file runs it unchanged. */
export function eventStoreContract(factory: HarnessFactory): void {
  appendContract(factory);
  readContract(factory);
  recentReadsContract(factory);
  predictedAppendsContract(factory);
  subscribeContract(factory);
  chainContract(factory);
  concurrencyContract(factory);
  artifactsContract(factory);
  leaseContract(factory);
}
