/**
 * Realistic log lines for the long-run proofs, deterministic from a seed: a web server's access
 * log in the combined log format (real-looking paths, user agents, referrers and sizes; statuses
 * mostly 2xx/3xx, some 4xx, a rare 500 or 502) interleaved with syslog lines of a Linux host
 * (kernel OOM kills and disk I/O errors, sshd login failures, systemd unit failures, and routine
 * cron/systemd noise), and at a chosen line a burst of 503s from the load balancer's health
 * checks and real clients. Outside the burst no line has status 503, so where the burst lies is
 * plain from the lines alone. Timestamps only move forward.
 *
 * `logLines` yields the lines one at a time (constant memory, any count); `generateLogLines`
 * collects them.
 */
import { seededRandom } from "../../src/spec/index.js";

/** What `logLines` generates. */
export interface LogLinesOptions {
  /** The same seed gives the same lines. */
  seed: number;
  /** How many lines. */
  count: number;
  /** The index (0-based) of the burst's first line; no burst when absent. */
  burstAt?: number;
  /** How many consecutive lines the burst takes (default 50). */
  burstLength?: number;
  /** The first line's time (default 2024-10-10T10:40:00Z). */
  start?: Date;
}

/** Where each line came from, for tests that check the mix. */
export type LogLineKind = "access" | "syslog" | "burst";

/** A generated line with its kind. */
export interface LogLine {
  kind: LogLineKind;
  text: string;
}

/** The lines of `options`, as an array (see `logLines`). */
export function generateLogLines(options: LogLinesOptions): string[] {
  const lines: string[] = [];
  for (const line of logLines(options)) lines.push(line.text);
  return lines;
}

/**
 * The lines of `options`, one at a time: `count` lines, the burst (status 503 on every line) at
 * `burstAt`..`burstAt + burstLength - 1` (cut at `count`), about one line in six a syslog line
 * elsewhere. Deterministic: a pure function of the options.
 */
export function* logLines(options: LogLinesOptions): Generator<LogLine> {
  const random = seededRandom(options.seed);
  const burstAt = options.burstAt ?? Number.POSITIVE_INFINITY;
  const burstEnd = burstAt + (options.burstLength ?? 50);
  let time = (options.start ?? new Date("2024-10-10T10:40:00Z")).getTime();
  let uptime = 86_400 + Math.floor(random() * 1_000_000);
  for (let index = 0; index < options.count; index++) {
    const step = Math.floor(random() * (index >= burstAt && index < burstEnd ? 40 : 900));
    time += step;
    uptime += step / 1000;
    const at = new Date(time);
    if (index >= burstAt && index < burstEnd) {
      yield { kind: "burst", text: accessLine(random, at, pick(random, BURST_REQUESTS)) };
    } else if (random() < 1 / 6) {
      yield { kind: "syslog", text: syslogLine(random, at, uptime) };
    } else {
      yield { kind: "access", text: accessLine(random, at) };
    }
  }
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function between(random: () => number, low: number, high: number): number {
  return low + Math.floor(random() * (high - low + 1));
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const pad = (value: number, width = 2) => String(value).padStart(width, "0");

/** `10/Oct/2024:13:55:36 +0000`: the access log's time. */
function accessTime(at: Date): string {
  return `${pad(at.getUTCDate())}/${MONTHS[at.getUTCMonth()]}/${at.getUTCFullYear()}:${pad(at.getUTCHours())}:${pad(at.getUTCMinutes())}:${pad(at.getUTCSeconds())} +0000`;
}

/** `Oct 10 13:55:36`: syslog's time (the day space-padded, as rsyslog writes it). */
function syslogTime(at: Date): string {
  return `${MONTHS[at.getUTCMonth()]} ${String(at.getUTCDate()).padStart(2, " ")} ${pad(at.getUTCHours())}:${pad(at.getUTCMinutes())}:${pad(at.getUTCSeconds())}`;
}

interface Request {
  method: string;
  path: string;
  status: number;
  size: number;
  agent: string;
  referrer: string;
  client: string;
}

const USER_AGENTS = [
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0.0.0 Safari/537.36",
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Safari/605.1.15",
  "Mozilla/5.0 (X11; Linux x86_64; rv:131.0) Gecko/20100101 Firefox/131.0",
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1",
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0.0.0 Mobile Safari/537.36",
  "curl/8.5.0",
  "python-requests/2.32.3",
  "Go-http-client/2.0",
  "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
  "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
];
const REFERRERS = [
  "-",
  "-",
  "https://shop.example.com/",
  "https://shop.example.com/cart",
  "https://www.google.com/",
  "https://shop.example.com/products?category=outdoor",
];
const PAGES = [
  "/",
  "/products",
  "/products?category=outdoor&page=2",
  "/products/tent-2p-ultralight",
  "/products/headlamp-400",
  "/cart",
  "/checkout",
  "/account/orders",
  "/search?q=sleeping+bag",
  "/about",
];
const ASSETS = [
  "/static/css/main.4f1c2a.css",
  "/static/js/app.9b3e11.js",
  "/static/js/vendor.1d77e0.js",
  "/static/img/logo.svg",
  "/favicon.ico",
  "/robots.txt",
];
const API = [
  "/api/v1/products?limit=24",
  "/api/v1/cart",
  "/api/v1/orders",
  "/api/v1/session",
  "/api/v1/inventory/headlamp-400",
];
const MISSING = ["/wp-login.php", "/.env", "/admin/config.php", "/products/discontinued-stove"];

function randomClient(random: () => number): string {
  const prefix = pick(random, ["203.0.113", "198.51.100", "192.0.2", "10.20.4"]);
  return `${prefix}.${between(random, 2, 254)}`;
}

function randomRequest(random: () => number): Request {
  const roll = random();
  const client = randomClient(random);
  const agent = pick(random, USER_AGENTS);
  const referrer = pick(random, REFERRERS);
  if (roll < 0.45) {
    const path = pick(random, PAGES);
    const status = random() < 0.9 ? 200 : pick(random, [301, 302, 304]);
    const size = status === 200 ? between(random, 4_000, 60_000) : between(random, 0, 400);
    return { method: "GET", path, status, size, agent, referrer, client };
  }
  if (roll < 0.75) {
    const status = random() < 0.7 ? 200 : 304;
    const size = status === 200 ? between(random, 800, 300_000) : 0;
    return { method: "GET", path: pick(random, ASSETS), status, size, agent, referrer, client };
  }
  if (roll < 0.93) {
    const method = random() < 0.7 ? "GET" : pick(random, ["POST", "PUT", "DELETE"]);
    const status =
      random() < 0.9 ? (method === "POST" ? 201 : 200) : pick(random, [400, 401, 403, 409, 429]);
    return {
      method,
      path: pick(random, API),
      status,
      size: between(random, 40, 9_000),
      agent,
      referrer,
      client,
    };
  }
  if (roll < 0.995) {
    return {
      method: "GET",
      path: pick(random, MISSING),
      status: 404,
      size: between(random, 150, 600),
      agent,
      referrer: "-",
      client,
    };
  }
  // A rare server error, never 503 (the burst's status).
  return {
    method: "POST",
    path: "/api/v1/orders",
    status: pick(random, [500, 502]),
    size: between(random, 100, 300),
    agent,
    referrer,
    client,
  };
}

const BURST_REQUESTS: readonly ((random: () => number) => Request)[] = [
  (random) => ({ ...randomRequest(random), status: 503, size: between(random, 190, 220) }),
  (random) => ({
    method: "GET",
    path: "/healthz",
    status: 503,
    size: 19,
    agent: "ELB-HealthChecker/2.0",
    referrer: "-",
    client: `10.0.${between(random, 0, 3)}.${between(random, 2, 254)}`,
  }),
];

function accessLine(
  random: () => number,
  at: Date,
  make: (random: () => number) => Request = randomRequest,
): string {
  const request = make(random);
  return `${request.client} - - [${accessTime(at)}] "${request.method} ${request.path} HTTP/1.1" ${request.status} ${request.size} "${request.referrer}" "${request.agent}"`;
}

const HOSTS = ["web-01", "web-02", "db-01"];
const UNITS = ["nginx.service", "app-worker@2.service", "node-exporter.service", "backup.service"];
const PROCESSES = ["java", "node", "postgres", "python3"];

function syslogLine(random: () => number, at: Date, uptime: number): string {
  const head = `${syslogTime(at)} ${pick(random, HOSTS)}`;
  const kernel = `${head} kernel: [${uptime.toFixed(6).padStart(13, " ")}]`;
  const roll = random();
  if (roll < 0.06) {
    const pid = between(random, 1_000, 60_000);
    return `${kernel} Out of memory: Killed process ${pid} (${pick(random, PROCESSES)}) total-vm:${between(random, 2_000_000, 9_000_000)}kB, anon-rss:${between(random, 1_000_000, 4_000_000)}kB, file-rss:0kB, shmem-rss:0kB, UID:${between(random, 100, 1_100)} pgtables:${between(random, 4_000, 12_000)}kB oom_score_adj:0`;
  }
  if (roll < 0.12) {
    const device = pick(random, ["sda", "sdb", "nvme0n1"]);
    return `${kernel} blk_update_request: I/O error, dev ${device}, sector ${between(random, 1_000, 900_000_000)} op 0x0:(READ) flags 0x80700 phys_seg 1 prio class 0`;
  }
  if (roll < 0.15) {
    return `${kernel} EXT4-fs error (device sda1): ext4_find_entry:1455: inode #${between(random, 2, 9_000_000)}: comm ${pick(random, PROCESSES)}: reading directory lblock 0`;
  }
  if (roll < 0.35) {
    const port = between(random, 30_000, 65_000);
    const user = pick(random, ["root", "admin", "ubuntu", "test", "oracle", "git"]);
    return random() < 0.5
      ? `${head} sshd[${between(random, 2_000, 40_000)}]: Failed password for invalid user ${user} from ${randomClient(random)} port ${port} ssh2`
      : `${head} sshd[${between(random, 2_000, 40_000)}]: Connection closed by authenticating user ${user} ${randomClient(random)} port ${port} [preauth]`;
  }
  if (roll < 0.45) {
    const unit = pick(random, UNITS);
    return random() < 0.5
      ? `${head} systemd[1]: ${unit}: Main process exited, code=exited, status=1/FAILURE`
      : `${head} systemd[1]: ${unit}: Failed with result 'exit-code'.`;
  }
  if (roll < 0.7) {
    return `${head} CRON[${between(random, 2_000, 40_000)}]: (root) CMD (/usr/local/bin/rotate-sessions --max-age 3600)`;
  }
  if (roll < 0.85) {
    return `${head} systemd[1]: Started ${pick(random, ["session-4211.scope - Session 4211 of User deploy", "logrotate.service - Rotate log files", "apt-daily.service - Daily apt download activities"])}.`;
  }
  return `${head} sshd[${between(random, 2_000, 40_000)}]: Accepted publickey for deploy from ${randomClient(random)} port ${between(random, 30_000, 65_000)} ssh2: ED25519 SHA256:q3Zb1yNfVY2d7Jm3xW0pLk`;
}
