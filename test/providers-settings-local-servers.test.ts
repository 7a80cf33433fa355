import { describe, expect, it } from "vitest";
import {
  connectionMessage,
  isProviderConfigured,
  resolveProviderSettings,
  type SettingsEnv,
} from "../src/providers/index.js";
import { ConfigError, editDistance, nearestName } from "../src/spec/index.js";

// Local servers found by a base URL alone, and which variable wins (docs/providers.md
// "Which variable wins"); the messages of misconfigurations and of connection failures.

const ANTHROPIC_KEY = "sk-ant-api03-secretsecretsecret-AAAA";
const OPENAI_KEY = "sk-proj-opensesameopensesame-BBBB";
const GROQ_KEY = "gsk_groqgroqgroqgroqgroq-CCCC";
const LOCAL = "http://localhost:11434/v1";

const resolve = (env: SettingsEnv) => resolveProviderSettings({}, env);

function failure(env: SettingsEnv): ConfigError {
  try {
    resolve(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("a base URL alone reaches a keyless server", () => {
  it("OPENAI_BASE_URL without OPENAI_API_KEY is a compatible server, with no key", () => {
    const settings = resolve({ OPENAI_BASE_URL: LOCAL, SPOOL_MODEL: "llama3.2" });
    expect(settings).toMatchObject({
      name: "compatible",
      flavour: "compatible",
      baseURL: LOCAL,
      model: "llama3.2",
      sources: { provider: "OPENAI_BASE_URL without OPENAI_API_KEY", baseURL: "OPENAI_BASE_URL" },
    });
    expect(settings.apiKey).toBeUndefined();
  });

  it("wins over a key in the profile, but not over a model only one provider serves", () => {
    const env = { OPENAI_BASE_URL: LOCAL, ANTHROPIC_API_KEY: ANTHROPIC_KEY };
    expect(resolve({ ...env, SPOOL_MODEL: "llama3.2" }).name).toBe("compatible");
    // An open-weight model the catalogue knows goes where the base URL says.
    expect(resolve({ ...env, SPOOL_MODEL: "llama3.3" }).name).toBe("compatible");
    const claude = resolve({ ...env, SPOOL_MODEL: "claude-sonnet-4-5" });
    expect(claude).toMatchObject({ name: "anthropic", baseURL: "https://api.anthropic.com" });
  });

  it("with OPENAI_API_KEY it is OpenAI (or a gateway) as before, and OpenAI's own URL needs the key", () => {
    const gateway = resolve({
      OPENAI_BASE_URL: "https://gw.example/v1",
      OPENAI_API_KEY: OPENAI_KEY,
    });
    expect(gateway).toMatchObject({ name: "openai", baseURL: "https://gw.example/v1" });
    const err = failure({ OPENAI_BASE_URL: "https://api.openai.com/v1" });
    expect(err.code).toBe("provider.unspecified");
  });

  it("SPOOL_BASE_URL alone is a compatible server too, after any key", () => {
    expect(resolve({ SPOOL_BASE_URL: LOCAL, SPOOL_MODEL: "m" })).toMatchObject({
      name: "compatible",
      baseURL: LOCAL,
      sources: { provider: "SPOOL_BASE_URL with no provider key", baseURL: "SPOOL_BASE_URL" },
    });
    const withKey = resolve({
      SPOOL_BASE_URL: "https://proxy.example",
      ANTHROPIC_API_KEY: ANTHROPIC_KEY,
    });
    expect(withKey).toMatchObject({ name: "anthropic", baseURL: "https://proxy.example" });
  });

  it("ollama, vllm and llamacpp honour OPENAI_BASE_URL; SPOOL_BASE_URL wins over it", () => {
    for (const provider of ["ollama", "vllm", "llamacpp", "compatible"]) {
      const env = {
        SPOOL_PROVIDER: provider,
        SPOOL_MODEL: "m",
        OPENAI_BASE_URL: "http://gpu:1/v1",
      };
      expect(resolve(env)).toMatchObject({
        baseURL: "http://gpu:1/v1",
        sources: { baseURL: "OPENAI_BASE_URL" },
      });
      expect(resolve({ ...env, SPOOL_BASE_URL: "http://other:2/v1" })).toMatchObject({
        baseURL: "http://other:2/v1",
        sources: { baseURL: "SPOOL_BASE_URL" },
      });
    }
    expect(resolve({ SPOOL_PROVIDER: "ollama", SPOOL_MODEL: "m" }).baseURL).toBe(
      "http://127.0.0.1:11434/v1",
    );
  });

  it("a hosted provider ignores OPENAI_BASE_URL, so its key never goes there", () => {
    const settings = resolve({
      SPOOL_PROVIDER: "groq",
      GROQ_API_KEY: GROQ_KEY,
      OPENAI_BASE_URL: LOCAL,
    });
    expect(settings.baseURL).toBe("https://api.groq.com/openai/v1");
  });

  it("compatible reads its own key variable", () => {
    const settings = resolve({
      OPENAI_BASE_URL: LOCAL,
      SPOOL_MODEL: "m",
      OPENAI_COMPATIBLE_API_KEY: "local-secret-0123456789",
    });
    expect(settings.apiKey).toBe("local-secret-0123456789");
    expect(settings.sources.apiKey).toBe("OPENAI_COMPATIBLE_API_KEY");
  });
});

describe("misconfiguration names the setting, what it accepts and the nearest value", () => {
  it("an unknown provider: the nearest name, or the server's provider, or just the list", () => {
    const typo = failure({ SPOOL_PROVIDER: "antropic" });
    expect(typo.code).toBe("provider.unknown");
    expect(typo.message).toContain(
      'Unknown provider "antropic" from SPOOL_PROVIDER (did you mean anthropic?)',
    );
    expect(typo.message).toContain("Set SPOOL_PROVIDER to one of: anthropic, openai,");
    expect(typo.details.nearest).toBe("anthropic");
    expect(failure({ SPOOL_PROVIDER: "llama.cpp" }).message).toContain("did you mean llamacpp?");
    expect(failure({ SPOOL_PROVIDER: "LMStudio" }).message).toContain(
      "did you mean compatible (with OPENAI_BASE_URL=http://localhost:1234/v1)?",
    );
    const nope = failure({ SPOOL_PROVIDER: "nope" });
    expect(nope.message).not.toContain("did you mean");
    expect(nope.message).toContain("one of: anthropic");
  });

  it("a base URL that is not http(s), with the URL likely meant", () => {
    const cases: [string, string, string][] = [
      ["localhost:11434/v1", "has no scheme", "http://localhost:11434/v1"],
      ["api.example.com/v1", "has no scheme", "https://api.example.com/v1"],
      ["gpu-box:11434/v1", "has no scheme", "http://gpu-box:11434/v1"],
      ["192.168.1.20:8000/v1", "has no scheme", "http://192.168.1.20:8000/v1"],
      ["htp://127.0.0.1:8000/v1", "uses htp", "http://127.0.0.1:8000/v1"],
      ["htps://api.example.com/v1", "uses htps", "https://api.example.com/v1"],
      ["ftp://files.example/v1", "uses ftp", "https://files.example/v1"],
    ];
    for (const [url, problem, meant] of cases) {
      const err = failure({ SPOOL_PROVIDER: "vllm", SPOOL_MODEL: "m", OPENAI_BASE_URL: url });
      expect(err.code).toBe("provider.bad-base-url");
      expect(err.message).toContain(
        `The base URL from OPENAI_BASE_URL ${problem}, not http(s): "${url}"`,
      );
      expect(err.message).toContain(`(did you mean "${meant}"?)`);
    }
    const nothing = failure({ SPOOL_PROVIDER: "vllm", SPOOL_MODEL: "m", OPENAI_BASE_URL: "/v1" });
    expect(nothing.message).not.toContain("did you mean");
  });

  it("a local server's base URL without /v1, where every one of them answers 404", () => {
    for (const provider of ["ollama", "vllm", "llamacpp"]) {
      const err = failure({
        SPOOL_PROVIDER: provider,
        SPOOL_MODEL: "m",
        OPENAI_BASE_URL: "http://localhost:11434/",
      });
      expect(err.code).toBe("provider.bad-base-url");
      expect(err.message).toContain(
        'The base URL from OPENAI_BASE_URL has no path: "http://localhost:11434/" (did you mean "http://localhost:11434/v1"?)',
      );
    }
    // Hosted and unknown servers may well serve at the root (DeepSeek does).
    expect(resolve({ OPENAI_BASE_URL: "http://localhost:9999", SPOOL_MODEL: "m" }).baseURL).toBe(
      "http://localhost:9999",
    );
  });

  it("a provider without a model says where to find one", () => {
    const err = failure({ SPOOL_PROVIDER: "ollama" });
    expect(err.code).toBe("provider.no-model");
    expect(err.message).toBe(
      "No model named for provider ollama (chosen by SPOOL_PROVIDER). Set SPOOL_MODEL (or the `model` option) to a model you pulled (`ollama list`), e.g. llama3.2; `curl http://127.0.0.1:11434/v1/models` lists them",
    );
    const keyless = failure({ OPENAI_BASE_URL: LOCAL });
    expect(keyless.message).toContain(
      "No model named for provider compatible (chosen by OPENAI_BASE_URL without OPENAI_API_KEY)",
    );
  });

  it("a missing key points at a variable set under a near-miss name, without its value", () => {
    const err = failure({ SPOOL_PROVIDER: "anthropic", ANTROPIC_API_KEY: ANTHROPIC_KEY });
    expect(err.message).toContain("(ANTROPIC_API_KEY is set: did you mean ANTHROPIC_API_KEY?)");
    expect(JSON.stringify([err.message, err.details])).not.toContain(ANTHROPIC_KEY);
  });

  it("a model and nothing else, or a misspelt SPOOL_ variable, is configuration that does not resolve", () => {
    expect(failure({ SPOOL_MODEL: "llama3.2" }).message).toContain(
      'No model provider is configured: SPOOL_MODEL names model "llama3.2", but nothing says which provider serves it',
    );
    expect(failure({ SPOOL_PROVDER: "ollama" }).message).toContain(
      "No model provider is configured (SPOOL_PROVDER is set: did you mean SPOOL_PROVIDER?)",
    );
  });

  it("only the complete absence of provider variables counts as unconfigured", () => {
    expect(isProviderConfigured({})).toBe(false);
    expect(isProviderConfigured({ HOME: "/h", SPOOL_DB: "x.db", SPOOL_PROVIDER: "  " })).toBe(
      false,
    );
    expect(isProviderConfigured({ GROK_API_KEY: "xai-key" })).toBe(false);
    for (const name of [
      "SPOOL_PROVIDER",
      "SPOOL_MODEL",
      "SPOOL_BASE_URL",
      "OPENAI_BASE_URL",
      "ANTHROPIC_BASE_URL",
      "OLLAMA_API_KEY",
      "SPOOL_MODLE",
    ]) {
      expect(isProviderConfigured({ [name]: "x" }), name).toBe(true);
    }
  });
});

describe("the nearest name", () => {
  it("is within two edits (one for short names), else none", () => {
    expect(editDistance("antropic", "anthropic")).toBe(1);
    expect(nearestName("antropic", ["openai", "anthropic"])).toBe("anthropic");
    expect(nearestName("OLAMA", ["ollama", "vllm"])).toBe("ollama");
    expect(nearestName("OLAMA", ["ollama"], false)).toBeUndefined();
    expect(nearestName("nope", ["openai", "ollama", "vllm"])).toBeUndefined();
    expect(nearestName("ab", ["abc", "xyz"])).toBe("abc");
    expect(nearestName("a", ["abc"])).toBeUndefined();
  });
});

describe("a connection failure's message", () => {
  const failed = (code: string | undefined, message = "boom") => {
    const root = Object.assign(new Error(message), code ? { code } : {});
    return Object.assign(new Error("Connection error."), {
      cause: new TypeError("fetch failed", { cause: root }),
    });
  };

  it("names the URL (password hidden), what happened and the check", () => {
    expect(
      connectionMessage(
        failed("ECONNREFUSED"),
        "vllm",
        "http://127.0.0.1:8000/v1",
        "http://127.0.0.1:8000/v1/models",
      ),
    ).toBe(
      "vllm: could not connect to http://127.0.0.1:8000/v1 (connection refused): is the server running, and is that its address and port? Check with `curl http://127.0.0.1:8000/v1/models`",
    );
    const reasons: [string | undefined, string, string][] = [
      ["ENOTFOUND", "no such host", "is the address right"],
      ["ECONNRESET", "the connection was reset", "is the address right"],
      ["UND_ERR_CONNECT_TIMEOUT", "the connection timed out", "is the address right"],
      [undefined, "", "is the server running"],
    ];
    for (const [code, reason, question] of reasons) {
      const text = connectionMessage(failed(code), "anthropic", "https://user:pw@gw.example/x");
      expect(text).toContain(
        `could not connect to https://***:***@gw.example/x${reason ? ` (${reason})` : ""}: ${question}`,
      );
      expect(text).not.toContain("pw@");
      expect(text).not.toContain("curl");
    }
    expect(
      connectionMessage(failed(undefined, "bad port"), "compatible", "http://127.0.0.1:9/v1"),
    ).toContain("(fetch refuses to use that port)");
  });
});
