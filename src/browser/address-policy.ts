import { BlockList, isIP } from "node:net";
import { effectivePort, type HostRule, isHostAllowed } from "../tools/index.js";
import { BrowserError } from "./browser-error.js";

/** Addresses that reach this machine or its networks rather than the public internet. */
const PRIVATE = new BlockList();
for (const [address, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 3],
] as const) {
  PRIVATE.addSubnet(address, prefix, "ipv4");
}
for (const [address, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const) {
  PRIVATE.addSubnet(address, prefix, "ipv6");
}

/** True for a loopback, private, link-local, shared or otherwise non-public IP address. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return PRIVATE.check(mapped[1] as string, "ipv4");
  const family = isIP(bare);
  if (family === 4) return PRIVATE.check(bare, "ipv4");
  if (family === 6) return PRIVATE.check(bare, "ipv6");
  return false;
}

/** True for names that always mean this machine, whatever DNS says. */
export function isLocalName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return name === "localhost" || name.endsWith(".localhost");
}

/** What the browser may reach: the parsed `allow_hosts` and whether `file:` is allowed. */
export interface AddressPolicy {
  allowHosts: readonly HostRule[];
  allowFile: boolean;
}

/**
 * Whether `host:port` may be reached at `address` (the IP it resolved to, or undefined before
 * resolution): a host `allow_hosts` lists always; any other only when neither its name nor its
 * address is local or private.
 */
export function mayReach(
  policy: AddressPolicy,
  host: string,
  port: number,
  address?: string,
): boolean {
  const probe = new URL(
    `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`,
  );
  if (isHostAllowed(policy.allowHosts, probe)) return true;
  if (isLocalName(host) || isPrivateAddress(host)) return false;
  return address === undefined || !isPrivateAddress(address);
}

/**
 * Checks a URL the agent asked to open: `http:`/`https:` to an allowed host, `about:blank`, or
 * `file:` when allowed. Returns the parsed URL or throws `BrowserError` saying what to change.
 */
export function checkBrowserUrl(policy: AddressPolicy, raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BrowserError("relic.browser.bad-url", `\`${raw}\` is not an absolute URL`, {
      hint: "Give an absolute URL such as https://example.com/page",
    });
  }
  if (url.href === "about:blank") return url;
  if (url.protocol === "file:") {
    if (policy.allowFile) return url;
    throw new BrowserError("relic.browser.host-not-allowed", "file: URLs are not allowed", {
      hint: "Open an http(s) page, or ask the operator to set browser.allow_file: true in the agent manifest",
    });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new BrowserError("relic.browser.bad-url", `${url.protocol} URLs are refused`, {
      hint: "The browser opens http:, https: (and file: when allowed) URLs",
    });
  }
  if (!mayReach(policy, url.hostname, effectivePort(url))) throw hostRefused(url.host);
  return url;
}

/** The error for a local or private host that `browser.allow_hosts` does not list. */
export function hostRefused(host: string): BrowserError {
  return new BrowserError(
    "relic.browser.host-not-allowed",
    `${host} is a local or private address, which this agent's browser may not reach`,
    {
      details: { host },
      hint: `Browse public hosts only, or ask the operator to add "${host}" to browser.allow_hosts in the agent manifest`,
    },
  );
}
