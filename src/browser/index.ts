/**
 * The browser: a real Chromium (`playwright-core` with `@sparticuz/chromium`) as the `browser`
 * relic, the `browser.*` tools that drive it, the host policy every request passes (public hosts;
 * loopback and private ones only when `allow_hosts` lists them), and its page events as the
 * `browser` source. An agent gets it with a `browser:` section in its manifest. See
 * `docs/browser.md`.
 */

export {
  type AddressPolicy,
  checkBrowserUrl,
  isPrivateAddress,
  mayReach,
} from "./address-policy.js";
export { type AgentBrowser, agentBrowser, BROWSER_SOURCE_ENTRY } from "./agent-browser.js";
export { BrowserError, type BrowserErrorCode } from "./browser-error.js";
export {
  type BrowserOptionIssue,
  type BrowserOptions,
  DEFAULT_BROWSER_OPTIONS,
  type DialogPolicy,
  parseBrowserOptions,
} from "./browser-options.js";
export {
  BROWSER_METHODS,
  type BrowserRelic,
  type BrowserRelicOptions,
  createBrowserRelic,
} from "./browser-relic.js";
export { BROWSER_TOOL_NAMES, type BrowserCall, browserTools } from "./browser-tools.js";
export { chromiumArgs } from "./chromium-launch.js";
export { createPageEventSource, PAGE_EVENT_BACKLOG, PageEventHub } from "./page-events.js";
export {
  type PolicyProxy,
  type ProxyRefusal,
  REFUSED_HEADER,
  startPolicyProxy,
} from "./policy-proxy.js";
export { diffLines } from "./ref-book.js";
