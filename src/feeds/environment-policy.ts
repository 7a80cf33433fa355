import { FeedError } from "./feed-error.js";

/**
 * Which environment variables the `environment` source may show the model. Nothing is allowed
 * unless listed: `allow` lets ordinary names through; a name that looks like a secret (see
 * `secretMarker`) passes only when it is also (or only) in `allowSecrets`.
 */
export interface EnvironmentPolicy {
  allow: readonly string[];
  allowSecrets: readonly string[];
}

/** The policy that lets nothing through. */
export const NO_ENVIRONMENT: EnvironmentPolicy = { allow: [], allowSecrets: [] };

/** Name segments (split on `_`, `-`, `.`) that mark a secret when they appear whole. */
const SECRET_SEGMENTS = new Set([
  "KEY",
  "KEYS",
  "PASS",
  "PW",
  "AUTH",
  "COOKIE",
  "COOKIES",
  "SESSION",
  "DSN",
  "PAT",
  "JWT",
  "SALT",
  "OTP",
]);
/** Substrings that mark a secret anywhere in the name. */
const SECRET_WORDS = [
  "SECRET",
  "TOKEN",
  "PASSWORD",
  "PASSWD",
  "PASSPHRASE",
  "CREDENTIAL",
  "PRIVATE",
  "APIKEY",
  "ACCESSKEY",
  "SIGNING",
];

/**
 * The part of `name` that makes it look like a secret, or `undefined`. Case-insensitive: a
 * segment `KEY`, `KEYS`, `PASS`, `PW`, `AUTH`, `COOKIE(S)`, `SESSION`, `DSN`, `PAT`, `JWT`, `SALT`
 * or `OTP` (so `OPENAI_API_KEY`, `GH_PAT`), or anywhere the words `SECRET`, `TOKEN`, `PASSWORD`,
 * `PASSWD`, `PASSPHRASE`, `CREDENTIAL`, `PRIVATE`, `APIKEY`, `ACCESSKEY`, `SIGNING`. `PWD` (the
 * working directory) and `MONKEY` are not secrets.
 */
export function secretMarker(name: string): string | undefined {
  const upper = name.toUpperCase();
  const word = SECRET_WORDS.find((candidate) => upper.includes(candidate));
  if (word) return word;
  return upper.split(/[_.-]+/).find((segment) => SECRET_SEGMENTS.has(segment));
}

/**
 * Throws `FeedError("feed.env-not-allowed")` unless `policy` lets `name` through: it must be in
 * `allow` or `allowSecrets`, and a secret-looking name must be in `allowSecrets`. Names compare
 * exactly (environment names are case-sensitive on Linux).
 */
export function checkEnvironmentName(
  name: string,
  policy: EnvironmentPolicy,
  feedId: string,
): void {
  const secret = secretMarker(name);
  if (policy.allowSecrets.includes(name)) return;
  if (!policy.allow.includes(name)) {
    throw new FeedError(
      "feed.env-not-allowed",
      `feed "${feedId}": environment variable ${name} is not on the feed allow-list`,
      {
        hint: `An operator can add it under feed_environment.allow in the manifest${secret ? " (and, since it looks like a secret, under feed_environment.allow_secrets)" : ""}`,
        details: { feed_id: feedId, name },
      },
    );
  }
  if (secret) {
    throw new FeedError(
      "feed.env-not-allowed",
      `feed "${feedId}": environment variable ${name} looks like a secret (its name contains ${secret}) and is refused although it is on the allow-list`,
      {
        hint: "List it under feed_environment.allow_secrets to show it to the model on purpose",
        details: { feed_id: feedId, name, marker: secret },
      },
    );
  }
}
