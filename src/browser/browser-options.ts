import { z } from "zod";
import { ConfigError } from "../spec/index.js";
import { type HostRule, parseAllowHosts } from "../tools/index.js";

/** How a page's `alert`/`confirm`/`prompt`/`beforeunload` dialogs are answered. */
export type DialogPolicy = "dismiss" | "accept";

/** The agent manifest's `browser:` section, validated, with its defaults applied. */
export interface BrowserOptions {
  /** Hosts beyond the public internet: loopback and private addresses are refused unless listed. */
  allowHosts: HostRule[];
  /** Whether `file:` URLs may be opened (default false). */
  allowFile: boolean;
  /** Default true; false needs a display. */
  headless: boolean;
  viewport: { width: number; height: number };
  /** Default `dismiss`: a dialog never blocks the page; every one is reported as a page event. */
  dialogs: DialogPolicy;
  /** Most characters one `browser.snapshot` returns (default 20,000). */
  snapshotChars: number;
  /** Milliseconds a navigation or an action may take when the call names none (default 15,000). */
  timeoutMs: number;
  /** Whether page events stream into the log as the `browser` source (default true). */
  events: boolean;
  /** Longest side of a screenshot, in pixels (default 1,280). */
  screenshotMaxSide: number;
  /**
   * Screenshots a thread's context holds as images, the newest (default 1, at most 10; 0 sends
   * none): each older one is replaced by a line that names its page and artifact.
   */
  screenshotsInContext: number;
  /** Environment variables `browser.type` may type as `secret` (default none). */
  secrets: string[];
}

/** The defaults of a `browser:` section that says nothing (`browser: {}` or `browser: true`). */
export const DEFAULT_BROWSER_OPTIONS: Omit<BrowserOptions, "allowHosts"> = {
  allowFile: false,
  headless: true,
  viewport: { width: 1280, height: 800 },
  dialogs: "dismiss",
  snapshotChars: 20_000,
  timeoutMs: 15_000,
  events: true,
  screenshotMaxSide: 1280,
  screenshotsInContext: 1,
  secrets: [],
};

const whole = (field: string, min: number, max: number, example: number) => {
  const message = `${field} must be a whole number from ${min} to ${max}, e.g. ${field}: ${example}`;
  return z.number({ error: message }).int(message).min(min, message).max(max, message);
};

const sectionSchema = z.strictObject(
  {
    allow_hosts: z
      .array(z.string({ error: "must be a host, e.g. 127.0.0.1:8080" }), {
        error:
          'must be a list of hosts, e.g. allow_hosts: ["127.0.0.1:8080", "*.intranet.example"]',
      })
      .optional(),
    allow_file: z.boolean({ error: "must be true or false" }).optional(),
    headless: z.boolean({ error: "must be true or false" }).optional(),
    viewport: z
      .strictObject(
        {
          width: whole("width", 200, 4096, 1280),
          height: whole("height", 200, 4096, 800),
        },
        { error: "must be { width, height }, e.g. viewport: { width: 1280, height: 800 }" },
      )
      .optional(),
    dialogs: z
      .enum(["dismiss", "accept"], { error: "must be dismiss or accept, e.g. dialogs: dismiss" })
      .optional(),
    snapshot_chars: whole("snapshot_chars", 1_000, 1_000_000, 20_000).optional(),
    timeout_ms: whole("timeout_ms", 100, 600_000, 15_000).optional(),
    events: z.boolean({ error: "must be true or false" }).optional(),
    screenshot_max_side: whole("screenshot_max_side", 100, 4096, 1280).optional(),
    screenshots_in_context: whole("screenshots_in_context", 0, 10, 1).optional(),
    secrets: z
      .array(
        z
          .string({ error: "must be an environment variable name, e.g. SHOP_PASSWORD" })
          .regex(
            /^[A-Za-z_][A-Za-z0-9_]*$/,
            "must be an environment variable name, e.g. SHOP_PASSWORD",
          ),
        { error: "must be a list of environment variable names, e.g. secrets: [SHOP_PASSWORD]" },
      )
      .optional(),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `unknown field ${issue.keys.map((key) => `"${key}"`).join(", ")}; browser has allow_hosts, allow_file, headless, viewport, dialogs, snapshot_chars, timeout_ms, events, screenshot_max_side, screenshots_in_context, secrets (docs/browser.md)`
        : "must be a mapping, e.g. browser: { allow_hosts: [127.0.0.1:8080] }, or browser: true",
  },
);

/** One problem of a `browser:` section: the path as the manifest reads it and what to fix. */
export interface BrowserOptionIssue {
  path: string;
  message: string;
}

/**
 * Reads an agent manifest's `browser:` section: `true` or a mapping (`{}` takes every default);
 * `false`, `null` or absent means the agent has no browser (`undefined`). Throws `ConfigError`
 * (`config.browser`) whose `details.issues` lists each problem as `{ path, message }`
 * (`browser.viewport.width`), every message saying how to fix it.
 */
export function parseBrowserOptions(section: unknown): BrowserOptions | undefined {
  if (section === undefined || section === null || section === false) return undefined;
  const parsed = sectionSchema.safeParse(section === true ? {} : section);
  if (!parsed.success) {
    throw optionsError(
      parsed.error.issues.map((issue) => ({
        path: ["browser", ...issue.path].join("."),
        message: issue.message,
      })),
    );
  }
  const data = parsed.data;
  let allowHosts: HostRule[];
  try {
    allowHosts = parseAllowHosts(data.allow_hosts ?? [], "browser.allow_hosts");
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw optionsError([{ path: "browser.allow_hosts", message: error.message }]);
  }
  const defaults = DEFAULT_BROWSER_OPTIONS;
  return {
    allowHosts,
    allowFile: data.allow_file ?? defaults.allowFile,
    headless: data.headless ?? defaults.headless,
    viewport: data.viewport ?? defaults.viewport,
    dialogs: data.dialogs ?? defaults.dialogs,
    snapshotChars: data.snapshot_chars ?? defaults.snapshotChars,
    timeoutMs: data.timeout_ms ?? defaults.timeoutMs,
    events: data.events ?? defaults.events,
    screenshotMaxSide: data.screenshot_max_side ?? defaults.screenshotMaxSide,
    screenshotsInContext: data.screenshots_in_context ?? defaults.screenshotsInContext,
    secrets: data.secrets ?? [],
  };
}

function optionsError(issues: BrowserOptionIssue[]): ConfigError {
  return new ConfigError(
    "config.browser",
    `the browser section is invalid: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ")}`,
    { hint: "Fix each field named; docs/browser.md lists the options", details: { issues } },
  );
}
