/**
 * The log generator of the long-run proofs (test/support/log-lines.ts): as many lines as asked,
 * the same lines for the same seed, the 503 burst exactly where asked and nowhere else, every line
 * in its format (combined access log or syslog) with time moving forward, and the mix of a real
 * host (mostly 2xx/3xx, some 4xx; OOM kills, I/O errors, sshd and systemd failures).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { generateLogLines, logLines } from "./support/log-lines.js";

const ACCESS =
  /^(\d{1,3}\.){3}\d{1,3} - - \[(\d{2})\/([A-Z][a-z]{2})\/(\d{4}):(\d{2}):(\d{2}):(\d{2}) \+0000\] "(GET|POST|PUT|DELETE) \/\S* HTTP\/1\.1" (\d{3}) \d+ "[^"]*" "[^"]+"$/;
const SYSLOG =
  /^([A-Z][a-z]{2}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) [a-z0-9-]+ (kernel|sshd\[\d+\]|systemd\[1\]|CRON\[\d+\]): .+$/;
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** A line's status (access lines) and its time in seconds of the year 2024. */
function parse(line: string): { status?: number; seconds: number } {
  const access = ACCESS.exec(line);
  if (access) {
    const [, , day, month, , hours, minutes, seconds, , status] = access;
    return { status: Number(status), seconds: at(month!, day!, hours!, minutes!, seconds!) };
  }
  const syslog = SYSLOG.exec(line);
  if (!syslog) throw new Error(`not a log line: ${line}`);
  const [, month, day, hours, minutes, seconds] = syslog;
  return { seconds: at(month!, day!.trim(), hours!, minutes!, seconds!) };
}

function at(month: string, day: string, hours: string, minutes: string, seconds: string) {
  return (
    Date.UTC(2024, MONTHS.indexOf(month), Number(day), Number(hours), Number(minutes)) / 1000 +
    Number(seconds)
  );
}

const options = fc.record({
  seed: fc.integer(),
  count: fc.integer({ min: 0, max: 1500 }),
  burstAt: fc.integer({ min: 0, max: 1500 }),
  burstLength: fc.integer({ min: 1, max: 200 }),
});

describe("generateLogLines", () => {
  it("gives count lines, the same for the same seed, each in its format, time moving forward", () => {
    fc.assert(
      fc.property(options, (asked) => {
        const lines = generateLogLines(asked);
        expect(lines).toHaveLength(asked.count);
        expect(generateLogLines(asked)).toEqual(lines);
        let last = 0;
        for (const line of lines) {
          const { seconds } = parse(line);
          expect(seconds).toBeGreaterThanOrEqual(last);
          last = seconds;
        }
      }),
      { numRuns: 40 },
    );
  });

  it("puts the 503 burst exactly where asked, and no 503 anywhere else", () => {
    fc.assert(
      fc.property(options, (asked) => {
        const lines = generateLogLines(asked);
        const end = Math.min(asked.count, asked.burstAt + asked.burstLength);
        lines.forEach((line, index) => {
          const inBurst = index >= asked.burstAt && index < end;
          expect(parse(line).status === 503, `line ${index}: ${line}`).toBe(inBurst);
        });
      }),
      { numRuns: 40 },
    );
  });

  it("gives other lines for another seed", () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer(), (a, b) => {
        fc.pre(a !== b);
        expect(generateLogLines({ seed: a, count: 30 })).not.toEqual(
          generateLogLines({ seed: b, count: 30 }),
        );
      }),
      { numRuns: 40 },
    );
  });

  it("mixes a real host's lines: mostly 2xx/3xx, some 4xx, kernel, sshd and systemd errors", () => {
    const lines = generateLogLines({ seed: 7, count: 6000 });
    const statuses = lines.map((line) => parse(line).status).filter((s) => s !== undefined);
    const share = (test: (status: number) => boolean) =>
      statuses.filter(test).length / statuses.length;
    expect(share((status) => status < 400)).toBeGreaterThan(0.85);
    expect(share((status) => status >= 400 && status < 500)).toBeGreaterThan(0.02);
    expect(share((status) => status >= 500)).toBeLessThan(0.02);
    const has = (pattern: RegExp) => lines.some((line) => pattern.test(line));
    expect(has(/kernel: \[ *[\d.]+\] Out of memory: Killed process \d+/)).toBe(true);
    expect(has(/kernel: .*I\/O error, dev \w+/)).toBe(true);
    expect(has(/sshd\[\d+\]: Failed password for invalid user \w+ from [\d.]+ port \d+ ssh2/)).toBe(
      true,
    );
    expect(has(/systemd\[1\]: [\w@.-]+: Main process exited, code=exited, status=1\/FAILURE/)).toBe(
      true,
    );
    const syslog = lines.filter((line) => SYSLOG.test(line)).length;
    expect(syslog / lines.length).toBeGreaterThan(0.1);
    expect(syslog / lines.length).toBeLessThan(0.25);
  });

  it("yields lazily: the first lines of an endless log come without the rest", () => {
    const first: string[] = [];
    for (const line of logLines({ seed: 3, count: Number.MAX_SAFE_INTEGER })) {
      first.push(line.text);
      if (first.length === 5) break;
    }
    expect(first).toEqual(generateLogLines({ seed: 3, count: 5 }));
  });
});
