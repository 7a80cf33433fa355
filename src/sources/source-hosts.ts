import { type HostRule, parseAllowHosts } from "../tools/index.js";

/**
 * Parses `source_actions.allow_hosts` with the rules `http.fetch` uses (`parseAllowHosts`):
 * `example.com`, `*.example.com` (sub-domains), `127.0.0.1:8080`, `[::1]:3000`. `host:*` is
 * also accepted and means what `host` alone means: every port. Throws `ConfigError`
 * (`config.tools.http`) naming the first malformed entry.
 */
export function sourceHostRules(
  entries: readonly string[],
  setting = "source_actions.allow_hosts",
): HostRule[] {
  return parseAllowHosts(
    entries.map((entry) => entry.trim().replace(/:\*$/, "")),
    setting,
  ).map((rule, index) => ({ ...rule, source: entries[index] as string }));
}
