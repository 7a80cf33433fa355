import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { itemsCommand } from "../src/cli/commands/items.js";
import { signCommand } from "../src/cli/commands/sign.js";
import { type CliIo, createContext, UsageError } from "../src/cli/context.js";
import {
  createItemSpace,
  ITEM_SIGNATURE_FORMAT,
  ItemTrustError,
  sha256Hex,
  signItemFile,
} from "../src/directives/index.js";
import { ConfigError } from "../src/spec/index.js";
import { initKeys, loadSigner, retireCurrentKey } from "../src/transcript/index.js";

let root: string;
let workspace: string;
let home: string;
let keys: string;

const DIRECTIVE = `# Researcher

\`\`\`xml
<directive name="researcher" version="1.0.0">
  <metadata><description>Finds things out.</description></metadata>
</directive>
\`\`\`

Always cite your sources.
`;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "spool-item-signing-"));
  workspace = join(root, "work");
  home = join(root, "home");
  keys = join(workspace, ".spool", "keys");
  mkdirSync(home, { recursive: true });
  initKeys(keys);
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function write(path: string, text: string | Buffer): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
}

const project = (...parts: string[]) => join(workspace, ".ai", ...parts);

/** The space as the CLI would build it: keys from `.spool/keys/` of the workspace. */
const space = () => createItemSpace({ workspace, home, builtinDir: join(root, "none"), env: {} });

/** The error `load` throws (fails the test when it does not throw). */
function refusal(load: () => unknown): ItemTrustError {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(ItemTrustError);
    return error as ItemTrustError;
  }
  throw new Error("expected an ItemTrustError");
}

function io(env: Record<string, string | undefined> = {}) {
  const written = { stdout: "", stderr: "" };
  const value: CliIo = {
    stdout: { write: (chunk: string) => (written.stdout += chunk) },
    stderr: { write: (chunk: string) => (written.stderr += chunk) },
    env: { HOME: home, ...env },
    cwd: workspace,
  };
  return { io: value, written };
}

async function run(command: typeof signCommand, args: string[]) {
  const { io: value, written } = io();
  const code = await command(createContext(value), args);
  return { code, ...written };
}

describe("signing items", () => {
  it("round trip: the sidecar covers the whole file, and the item loads as signed", () => {
    const path = write(project("directives", "researcher.md"), DIRECTIVE);
    const signer = loadSigner(keys)!;
    const { signature, signaturePath } = signItemFile(path, signer, {
      now: () => new Date("2026-01-02T03:04:05Z"),
    });
    expect(signaturePath).toBe(`${path}.sig`);
    expect(JSON.parse(readFileSync(signaturePath, "utf8"))).toEqual({
      format: ITEM_SIGNATURE_FORMAT,
      key_id: signer.keyId,
      algorithm: "ed25519",
      sha256: sha256Hex(DIRECTIVE),
      signature: signature.signature,
      signed_at: "2026-01-02T03:04:05.000Z",
    });
    const directive = space().directive("researcher");
    expect(directive.source.signed).toEqual({ keyId: signer.keyId });
    expect(directive.source.sha256).toBe(sha256Hex(DIRECTIVE));
    expect(space().list({ kind: "directive" })[0]).toMatchObject({
      signature: "verified",
      keyId: signer.keyId,
    });
  });

  it("refuses a signed item when one byte of its body changes", () => {
    const path = write(project("directives", "researcher.md"), DIRECTIVE);
    signItemFile(path, loadSigner(keys)!);
    const bytes = Buffer.from(DIRECTIVE);
    const at = DIRECTIVE.indexOf("cite");
    bytes[at] = "k".charCodeAt(0);
    writeFileSync(path, bytes);
    const error = refusal(() => space().directive("researcher"));
    expect(error.reason).toBe("hash-mismatch");
    expect(error.code).toBe("item.hash-mismatch");
    expect(error.message).toMatch(
      /^\.ai\/directives\/researcher\.md: the file changed after it was signed .* it is refused\. If the change is yours, sign it again with `spool sign \.ai\/directives\/researcher\.md`/,
    );
    const [listing] = space().list({ kind: "directive" });
    expect(listing).toMatchObject({ signature: "invalid" });
    expect(listing?.problem).toContain("changed after it was signed");
  });

  it("refuses a signature by an unknown key, a forged one and an unreadable one", () => {
    const path = write(project("directives", "researcher.md"), DIRECTIVE);
    const stranger = join(root, "stranger");
    initKeys(stranger);
    signItemFile(path, loadSigner(stranger)!);
    expect(refusal(() => space().directive("researcher")).reason).toBe("unknown-key");

    const { signature } = signItemFile(path, loadSigner(keys)!);
    const forged = { ...signature, signature: Buffer.alloc(64, 1).toString("base64") };
    writeFileSync(`${path}.sig`, JSON.stringify(forged));
    expect(refusal(() => space().directive("researcher")).reason).toBe("bad-signature");

    writeFileSync(`${path}.sig`, "{not json");
    expect(refusal(() => space().directive("researcher")).reason).toBe("malformed-signature");
  });

  it("trusts retired keys", () => {
    const path = write(project("directives", "researcher.md"), DIRECTIVE);
    const old = loadSigner(keys)!;
    signItemFile(path, old);
    retireCurrentKey(keys);
    initKeys(keys, { force: true });
    expect(space().directive("researcher").source.signed).toEqual({ keyId: old.keyId });
  });

  it("require_signatures refuses unsigned project and user items, not built-in ones", () => {
    const builtinDir = join(root, "builtin");
    write(join(builtinDir, "directives", "base.md"), DIRECTIVE.replaceAll("researcher", "base"));
    write(project("directives", "researcher.md"), DIRECTIVE);
    write(join(home, ".ai", "directives", "mine.md"), DIRECTIVE.replaceAll("researcher", "mine"));
    const config = write(project("config.yaml"), "policy:\n  require_signatures: true\n");
    const items = () => createItemSpace({ workspace, home, builtinDir, env: {} });

    expect(refusal(() => items().config())).toMatchObject({ reason: "unsigned" });
    signItemFile(config, loadSigner(keys)!);
    expect(items().config().policy.requireSignatures).toBe(true);

    const error = refusal(() => items().directive("researcher"));
    expect(error.reason).toBe("unsigned");
    expect(error.message).toMatch(
      /researcher\.md: it is not signed, and policy\.require_signatures is on/,
    );
    expect(refusal(() => items().directive("mine")).reason).toBe("unsigned");
    expect(items().directive("base").source.tier).toBe("builtin");

    signItemFile(project("directives", "researcher.md"), loadSigner(keys)!);
    expect(items().directive("researcher").source.signed).toBeDefined();
    const listed = items().list({ kind: "directive" });
    expect(listed.find((listing) => listing.name === "mine")).toMatchObject({
      signature: "unsigned",
      problem: expect.stringContaining("policy.require_signatures is on"),
    });
  });
});

describe("spool sign and spool items", () => {
  it("sign writes the sidecar and items shows it verified", async () => {
    write(project("directives", "researcher.md"), DIRECTIVE);
    write(project("agents", "helper.yaml"), "directive: researcher\n");
    const signed = await run(signCommand, [
      ".ai/directives/researcher.md",
      ".ai/agents/helper.yaml",
    ]);
    expect(signed.code).toBe(0);
    const keyId = loadSigner(keys)!.keyId;
    expect(signed.stdout).toContain(
      `Signed .ai/directives/researcher.md with key ${keyId} (sha256 ${sha256Hex(DIRECTIVE).slice(0, 12)}…) -> .ai/directives/researcher.md.sig`,
    );
    const listed = await run(itemsCommand, ["--kind", "directive"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/KIND\s+NAME\s+TIER\s+SIGNATURE\s+PATH/);
    expect(listed.stdout).toMatch(
      new RegExp(
        `directive\\s+researcher\\s+project\\s+verified \\(${keyId}\\)\\s+\\.ai/directives/researcher\\.md`,
      ),
    );
    const json = await run(itemsCommand, ["--json", "--kind", "agent"]);
    const rows = json.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(rows).toContainEqual(
      expect.objectContaining({
        kind: "agent",
        name: "helper",
        tier: "project",
        signature: "verified",
        keyId,
      }),
    );
    expect(rows).toContainEqual(
      expect.objectContaining({
        kind: "agent",
        name: "assistant",
        tier: "builtin",
        signature: "builtin",
      }),
    );
  });

  it("items marks shadowed entries and exits 1 on a tampered item", async () => {
    write(project("directives", "assistant.md"), DIRECTIVE.replaceAll("researcher", "assistant"));
    await run(signCommand, [".ai/directives/assistant.md"]);
    const shadowing = await run(itemsCommand, ["--kind", "directive"]);
    expect(shadowing.code).toBe(0);
    expect(shadowing.stdout).toMatch(
      /directive\s+assistant\s+project\s+verified.*\(shadows builtin\)/,
    );
    expect(shadowing.stdout).toMatch(
      /directive\s+assistant\s+builtin\s+builtin\s+.*\(shadowed by project\)/,
    );

    writeFileSync(
      project("directives", "assistant.md"),
      `${DIRECTIVE.replaceAll("researcher", "assistant")}!`,
    );
    const tampered = await run(itemsCommand, ["--kind", "directive"]);
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toMatch(/assistant\s+project\s+invalid/);
    expect(tampered.stdout).toContain(
      "! .ai/directives/assistant.md: the file changed after it was signed",
    );
  });

  it("sign refuses malformed items, missing keys and bad arguments", async () => {
    write(
      project("directives", "broken.md"),
      DIRECTIVE.replace('version="1.0.0"', 'version="one"'),
    );
    const malformed = await run(signCommand, [".ai/directives/broken.md"]).catch(
      (error: unknown) => error,
    );
    expect(malformed).toBeInstanceOf(ConfigError);
    expect((malformed as ConfigError).message).toMatch(
      /broken\.md:4: <directive version="one">: version must be a semantic version/,
    );
    expect(() => readFileSync(project("directives", "broken.md.sig"))).toThrow();

    const noKey = await run(signCommand, ["x", "--keys", join(root, "empty")]).catch(
      (error: unknown) => error,
    );
    expect(noKey).toBeInstanceOf(ConfigError);
    expect((noKey as ConfigError).message).toMatch(
      /there is no signing key in .*empty\. Create one with `spool keys init --keys/,
    );

    await expect(run(signCommand, [])).rejects.toBeInstanceOf(UsageError);
    await expect(run(signCommand, ["a.md.sig"])).rejects.toBeInstanceOf(UsageError);
    await expect(run(signCommand, ["missing.md"])).rejects.toThrow(/there is no file missing\.md/);
    await expect(run(itemsCommand, ["--kind", "robot"])).rejects.toThrow(
      /--kind must be one of directive, agent/,
    );
  });
});
