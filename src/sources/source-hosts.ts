import { type HostRule, parseAllowHosts } from "../tools/index.js";

/**
 * Parses `source_actions.allow_hosts` with the rules `http.fetch` uses (`parseAllowHosts`):
 * `example.com`, `*.example.com` (sub-domains), `127.0.0.1:8080`, `127.0.0.1:*`, `[::1]:3000`.
 * Throws `ConfigError` (`config.tools.http`) naming the first malformed entry.
 */
export function sourceHostRules(
  entries: readonly string[],
  setting = "source_actions.allow_hosts",
): HostRule[] {
  return parseAllowHosts(entries, setting);
}
