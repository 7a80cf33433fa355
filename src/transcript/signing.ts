import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
  verify,
} from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../spec/index.js";

/** File names of a key pair inside a keys directory (default `.spool/keys/`). */
export const PRIVATE_KEY_FILE = "checkpoint-ed25519.pem";
export const PUBLIC_KEY_FILE = "checkpoint-ed25519.pub.pem";

/** An Ed25519 key that signs checkpoints. */
export interface CheckpointSigner {
  /** sha256 of the public key (SPKI DER), first 16 hex characters. */
  readonly keyId: string;
  readonly publicKey: KeyObject;
  /** The signature of `payload`, base64. */
  sign(payload: string): string;
}

/** What a checkpoint signs. `transcript_sha256` ties a thread's transcript file to the chain head. */
export interface CheckpointPayload {
  continuity: string;
  reason: string;
  seq: number;
  head_hash: string;
  thread?: string;
  /** sha256 (hex) of the thread's transcript.jsonl bytes before the checkpoint's own line. */
  transcript_sha256?: string;
}

/**
 * The exact text a checkpoint signature covers: a version tag and every payload field, one per line,
 * in a fixed order (absent fields as empty lines), so signer and verifier can never disagree.
 */
export function checkpointText(payload: CheckpointPayload): string {
  return [
    "spool.checkpoint.v1",
    payload.continuity,
    payload.reason,
    String(payload.seq),
    payload.head_hash,
    payload.thread ?? "",
    payload.transcript_sha256 ?? "",
  ].join("\n");
}

/** The key id of a public key: the first 16 hex characters of sha256(SPKI DER). */
export function keyIdOf(publicKey: KeyObject): string {
  const der = publicKey.export({ type: "spki", format: "der" });
  return createHash("sha256").update(der).digest("hex").slice(0, 16);
}

/** A signer from a PEM private key. */
export function signerFromPem(privateKeyPem: string): CheckpointSigner {
  const privateKey = createPrivateKey(privateKeyPem);
  if (privateKey.asymmetricKeyType !== "ed25519") {
    throw new ConfigError(
      "keys.wrong-type",
      `the checkpoint key is ${privateKey.asymmetricKeyType}, not Ed25519`,
      {
        hint: "Create one with `spool keys init`",
      },
    );
  }
  const publicKey = createPublicKey(privateKey);
  return {
    keyId: keyIdOf(publicKey),
    publicKey,
    sign: (payload) => sign(null, Buffer.from(payload, "utf8"), privateKey).toString("base64"),
  };
}

/** True when `signature` (base64) is `publicKey`'s Ed25519 signature of `payload`. Never throws. */
export function verifySignature(publicKey: KeyObject, payload: string, signature: string): boolean {
  try {
    return verify(null, Buffer.from(payload, "utf8"), publicKey, Buffer.from(signature, "base64"));
  } catch {
    return false;
  }
}

/** Creates a new key pair in `dir`; refuses to overwrite one unless `force`. Returns the paths. */
export function initKeys(
  dir: string,
  options: { force?: boolean } = {},
): {
  privateKeyPath: string;
  publicKeyPath: string;
  keyId: string;
} {
  const privateKeyPath = join(dir, PRIVATE_KEY_FILE);
  const publicKeyPath = join(dir, PUBLIC_KEY_FILE);
  if (existsSync(privateKeyPath) && !options.force) {
    throw new ConfigError("keys.exist", `a checkpoint key already exists at ${privateKeyPath}`, {
      hint: "Keep it (signatures made with it stay verifiable), or pass --force to replace it",
    });
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  writeFileSync(privateKeyPath, privateKey.export({ type: "pkcs8", format: "pem" }), {
    mode: 0o600,
  });
  chmodSync(privateKeyPath, 0o600);
  writeFileSync(publicKeyPath, publicKey.export({ type: "spki", format: "pem" }), { mode: 0o644 });
  return { privateKeyPath, publicKeyPath, keyId: keyIdOf(publicKey) };
}

/** The signer stored in `dir`, or `undefined` when there is none. */
export function loadSigner(dir: string): CheckpointSigner | undefined {
  const path = join(dir, PRIVATE_KEY_FILE);
  if (!existsSync(path)) return undefined;
  return signerFromPem(readFileSync(path, "utf8"));
}

/** The public keys stored in `dir` (the key pair's public half), by key id. */
export function loadPublicKeys(dir: string): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>();
  const path = join(dir, PUBLIC_KEY_FILE);
  if (existsSync(path)) {
    const key = createPublicKey(readFileSync(path, "utf8"));
    keys.set(keyIdOf(key), key);
  }
  return keys;
}
