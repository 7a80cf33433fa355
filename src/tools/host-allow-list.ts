import { ConfigError } from "../spec/index.js";

/** One parsed `allowHosts` entry. */
export interface HostRule {
  /** The entry as written, for messages. */
  source: string;
  /** Lower-case host name (IDN as punycode) or bracketed IPv6 address, without a trailing dot. */
  host: string;
  /** True for `*.host`: any sub-domain of `host`, at any depth, but not `host` itself. */
  wildcard: boolean;
  /** The only port allowed; undefined allows every port. */
  port: number | undefined;
}

const ENTRY = /^(\*\.)?(\[[0-9A-Fa-f:.]+\]|[^\s:/?#@[\]*]+)(?::(\d{1,5}|\*))?$/;

function normaliseHost(host: string): string | undefined {
  try {
    return new URL(`http://${host}`).hostname.replace(/\.$/, "");
  } catch {
    return undefined;
  }
}

/**
 * Parses `tools.http.fetch.allow_hosts` entries: `example.com`, `*.example.com` (sub-domains),
 * `127.0.0.1:8080`, `[::1]:3000`. An entry without a port, or with `:*`, allows every port. Throws
 * `ConfigError` (`config.tools.http`) naming the first malformed entry and the `setting` it is in.
 */
export function parseAllowHosts(
  entries: readonly string[],
  setting = "tools.http.fetch.allow_hosts",
): HostRule[] {
  return entries.map((source) => {
    const match = ENTRY.exec(source.trim());
    const host = match ? normaliseHost(match[2] as string) : undefined;
    const port = match?.[3] === undefined || match[3] === "*" ? undefined : Number(match[3]);
    if (!match || host === undefined || host === "" || (port !== undefined && port > 65_535)) {
      throw new ConfigError("config.tools.http", `${setting} has a malformed entry "${source}"`, {
        hint: "Write a host, optionally `*.` before it and `:port` (or `:*`, every port) after: `api.example.com`, `*.example.com`, `127.0.0.1:8080`, `127.0.0.1:*`",
      });
    }
    return { source, host, wildcard: match[1] !== undefined, port };
  });
}

/** The port `url` connects to: its explicit port or the scheme's default. */
export function effectivePort(url: URL): number {
  if (url.port !== "") return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}

/** Whether `url`'s host and port are allowed by one of `rules`. */
export function isHostAllowed(rules: readonly HostRule[], url: URL): boolean {
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  const port = effectivePort(url);
  return rules.some((rule) => {
    if (rule.port !== undefined && rule.port !== port) return false;
    return rule.wildcard ? host.endsWith(`.${rule.host}`) : host === rule.host;
  });
}
