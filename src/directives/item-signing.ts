import { createHash, type KeyObject } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { z } from "zod";
import { SpoolError } from "../spec/index.js";
import { type CheckpointSigner, verifySignature } from "../transcript/index.js";

/** A signature lives beside its item: `<file>.sig` (`assistant.md.sig`). */
export const SIGNATURE_SUFFIX = ".sig";

/** The `format` of a signature file; a verifier refuses any other. */
export const ITEM_SIGNATURE_FORMAT = "spool.item-signature.v1";

/**
 * The contents of a `<file>.sig` sidecar (JSON). `signature` is the Ed25519 signature (base64)
 * of `itemSigningText(sha256)`, and `sha256` is of the item's whole file, so every byte of the
 * file, metadata and instructions alike, is covered.
 */
export interface ItemSignature {
  format: typeof ITEM_SIGNATURE_FORMAT;
  /** The signing key's id (`keyIdOf`: the first 16 hex of sha256 of the public key). */
  key_id: string;
  algorithm: "ed25519";
  /** sha256 (hex) of the whole signed file. */
  sha256: string;
  signature: string;
  /** ISO-8601 time of signing; informative only, not signed. */
  signed_at: string;
}

const signatureSchema = z.object({
  format: z.literal(ITEM_SIGNATURE_FORMAT),
  key_id: z.string().min(1),
  algorithm: z.literal("ed25519"),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  signature: z.string().min(1),
  signed_at: z.string(),
});

/** Why a signed item is refused, or (`unsigned`) why an unsigned one is under the policy. */
export type ItemTrustReason =
  | "hash-mismatch"
  | "unknown-key"
  | "bad-signature"
  | "malformed-signature"
  | "unsigned";

/**
 * An item whose signature does not prove its bytes (changed since signing, signed by a key that
 * is not trusted, a forged or unreadable `.sig`), or an unsigned project/user item while
 * `policy.require_signatures` is on. The item is not loaded. `reason` is stable; `code` is
 * `item.<reason>`.
 */
export class ItemTrustError extends SpoolError {
  readonly reason: ItemTrustReason;
  /** The item file refused. */
  readonly path: string;

  constructor(reason: ItemTrustReason, path: string, message: string, hint: string) {
    super(`item.${reason}`, message, { hint, details: { path, reason } });
    this.reason = reason;
    this.path = path;
  }
}

/** What checking an item's signature found. Never thrown; `invalid` carries the error to throw. */
export type ItemSignatureCheck =
  | { status: "unsigned" }
  | { status: "verified"; keyId: string }
  | { status: "invalid"; error: ItemTrustError };

/** The exact text an item signature covers: a version tag and the file's sha256. */
export function itemSigningText(sha256: string): string {
  return `spool.item.v1\n${sha256}`;
}

/** sha256 (hex) of `bytes`. */
export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Options of `signItemFile`. */
export interface SignItemOptions {
  /** The clock for `signed_at`; default the system clock. */
  now?: () => Date;
}

/**
 * Signs the whole file at `path` with `signer` (the workspace's Ed25519 key, `loadSigner`) and
 * writes the signature to `<path>.sig`, replacing any earlier one. Returns the signature and its
 * path. Throws the file system's error when the file cannot be read or the sidecar written.
 */
export function signItemFile(
  path: string,
  signer: CheckpointSigner,
  options: SignItemOptions = {},
): { signature: ItemSignature; signaturePath: string } {
  const sha256 = sha256Hex(readFileSync(path));
  const signature: ItemSignature = {
    format: ITEM_SIGNATURE_FORMAT,
    key_id: signer.keyId,
    algorithm: "ed25519",
    sha256,
    signature: signer.sign(itemSigningText(sha256)),
    signed_at: (options.now?.() ?? new Date()).toISOString(),
  };
  const signaturePath = `${path}${SIGNATURE_SUFFIX}`;
  writeFileSync(signaturePath, `${JSON.stringify(signature, null, 2)}\n`);
  return { signature, signaturePath };
}

/**
 * Checks the signature of an item whose bytes are `bytes` against the sidecar text `sidecar`
 * (`undefined`: there is none) and the `trusted` public keys by key id. `display` names the file
 * in messages. Pure; never throws.
 */
export function checkItemSignature(
  bytes: Uint8Array,
  sidecar: string | undefined,
  trusted: ReadonlyMap<string, KeyObject>,
  display: string,
): ItemSignatureCheck {
  if (sidecar === undefined) return { status: "unsigned" };
  const invalid = (reason: ItemTrustReason, message: string, hint: string) =>
    ({
      status: "invalid",
      error: new ItemTrustError(reason, display, `${display}: ${message}`, hint),
    }) as const;
  let parsed: ItemSignature;
  try {
    const result = signatureSchema.safeParse(JSON.parse(sidecar));
    if (!result.success) throw result.error;
    parsed = result.data;
  } catch {
    return invalid(
      "malformed-signature",
      `its signature file ${display}${SIGNATURE_SUFFIX} is not a Spool item signature`,
      `Sign the file again with \`spool sign ${display}\`, or delete the .sig file`,
    );
  }
  const sha256 = sha256Hex(bytes);
  if (sha256 !== parsed.sha256) {
    return invalid(
      "hash-mismatch",
      `the file changed after it was signed (sha256 ${sha256.slice(0, 12)}…, signed ${parsed.sha256.slice(0, 12)}…); it is refused`,
      `If the change is yours, sign it again with \`spool sign ${display}\`; otherwise restore the signed version`,
    );
  }
  const key = trusted.get(parsed.key_id);
  if (!key) {
    return invalid(
      "unknown-key",
      `it is signed by key ${parsed.key_id}, which is not trusted here`,
      "Put that key's public half in the keys directory (or its retired/ folder), or sign the file again with your key",
    );
  }
  if (!verifySignature(key, itemSigningText(parsed.sha256), parsed.signature)) {
    return invalid(
      "bad-signature",
      `its signature does not verify with key ${parsed.key_id}`,
      `Sign the file again with \`spool sign ${display}\``,
    );
  }
  return { status: "verified", keyId: parsed.key_id };
}

/**
 * Reads `path` and its sidecar and checks the signature (`checkItemSignature`). Returns the bytes
 * read, so what is verified is exactly what is then parsed. Throws the file system's error for an
 * unreadable item.
 */
export function readSignedItem(
  path: string,
  trusted: ReadonlyMap<string, KeyObject>,
  display: string,
): { bytes: Buffer; sha256: string; check: ItemSignatureCheck } {
  const bytes = readFileSync(path);
  const sidecarPath = `${path}${SIGNATURE_SUFFIX}`;
  const sidecar = existsSync(sidecarPath) ? readFileSync(sidecarPath, "utf8") : undefined;
  return {
    bytes,
    sha256: sha256Hex(bytes),
    check: checkItemSignature(bytes, sidecar, trusted, display),
  };
}

/** The error for an unsigned project or user item while `policy.require_signatures` is on. */
export function unsignedItemError(display: string): ItemTrustError {
  return new ItemTrustError(
    "unsigned",
    display,
    `${display}: it is not signed, and policy.require_signatures is on`,
    `Review it, then sign it with \`spool sign ${display}\``,
  );
}
