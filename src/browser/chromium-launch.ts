import type { BrowserContext } from "playwright-core";

/**
 * Playwright and the bundled Chromium, loaded on the first launch: importing playwright-core
 * takes most of a second, which every `spool` command would otherwise pay at start.
 */
async function chromiumModules() {
  const [{ chromium }, { default: sparticuz }] = await Promise.all([
    import("playwright-core"),
    import("@sparticuz/chromium"),
  ]);
  return { chromium, sparticuz };
}

/**
 * Flags of `@sparticuz/chromium` that Spool leaves out. `--single-process` (and the in-process
 * GPU) would let one crashing renderer take the whole browser down; the rest switch off
 * protections an agent that browses arbitrary pages with persistent logins must keep: the
 * same-origin policy, mixed-content blocking and site isolation. Headless mode is Playwright's.
 */
const DROPPED = [
  /^--single-process$/,
  /^--in-process-gpu$/,
  /^--disable-web-security$/,
  /^--allow-running-insecure-content$/,
  /^--disable-site-isolation-trials$/,
  /^--disable-features=/,
  /^--headless/,
];

/** What `launchChromium` needs. */
export interface ChromiumLaunch {
  /** The persistent profile folder (cookies, storage, logins survive restarts). */
  profileDir: string;
  headless: boolean;
  viewport: { width: number; height: number };
  /** The policy proxy every connection goes through (`http://127.0.0.1:<port>`). */
  proxy: string;
  /** Where downloads land before they are saved into the workspace. */
  downloadsDir: string;
}

/** The command-line flags Chromium is started with (see `DROPPED` for what is left out). */
export async function chromiumArgs(proxy: string): Promise<string[]> {
  const { sparticuz } = await chromiumModules();
  return [
    ...sparticuz.args.filter((arg) => !DROPPED.some((pattern) => pattern.test(arg))),
    "--no-sandbox",
    `--proxy-server=${proxy}`,
    // Loopback is otherwise never proxied: the policy proxy must see it to refuse it.
    "--proxy-bypass-list=<-loopback>",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
  ];
}

/**
 * Starts the Chromium bundled by `@sparticuz/chromium` (unpacked on first use, nothing
 * downloaded) with a persistent profile, through Playwright. Rejects when it cannot start.
 */
export async function launchChromium(options: ChromiumLaunch): Promise<BrowserContext> {
  const { chromium, sparticuz } = await chromiumModules();
  const executablePath = await sparticuz.executablePath();
  return chromium.launchPersistentContext(options.profileDir, {
    executablePath,
    args: await chromiumArgs(options.proxy),
    headless: options.headless,
    viewport: options.viewport,
    acceptDownloads: true,
    downloadsPath: options.downloadsDir,
    serviceWorkers: "block",
    timeout: 60_000,
  });
}
