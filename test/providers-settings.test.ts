import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import {
  describeSettings,
  maskKey,
  PROVIDER_DEFAULTS,
  PROVIDER_NAMES,
  type ProviderSettingsInput,
  resolveProviderSettings,
  type SettingsEnv,
} from "../src/providers/settings/index.js";
import { ConfigError } from "../src/spec/index.js";

const ANTHROPIC_KEY = "sk-ant-api03-secretsecretsecret-AAAA";
const OPENAI_KEY = "sk-proj-opensesameopensesame-BBBB";
const GROQ_KEY = "gsk_groqgroqgroqgroqgroq-CCCC";
const GENERIC_KEY = "generic-override-key-DDDD";

const resolve = (input: ProviderSettingsInput, env: SettingsEnv = {}) =>
  resolveProviderSettings(input, env);

function failure(input: ProviderSettingsInput, env: SettingsEnv = {}): ConfigError {
  try {
    resolve(input, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

/** Every way an error could leak text. */
function everything(error: ConfigError): string {
  return [error.message, String(error), JSON.stringify(error), JSON.stringify(error.details)].join(
    "\n",
  );
}

describe("which provider", () => {
  it("takes the option over SPOOL_PROVIDER over inference", () => {
    const env = { SPOOL_PROVIDER: "groq", GROQ_API_KEY: GROQ_KEY, OPENAI_API_KEY: OPENAI_KEY };
    expect(resolve({ provider: "openai" }, env).name).toBe("openai");
    expect(resolve({}, env).name).toBe("groq");
    expect(resolve({ model: "claude-sonnet-4-5" }, env).name).toBe("groq");
    expect(resolve({}, env).sources.provider).toBe("SPOOL_PROVIDER");
  });

  it("infers it from the model through the catalogue, before any key", () => {
    const env = { ANTHROPIC_API_KEY: ANTHROPIC_KEY, OPENAI_API_KEY: OPENAI_KEY };
    expect(resolve({ model: "gpt-4o-2024-08-06" }, env).name).toBe("openai");
    expect(resolve({ model: "o4-mini" }, env).name).toBe("openai");
    expect(resolve({}, { ...env, SPOOL_MODEL: "claude-haiku-4-5" }).name).toBe("anthropic");
    expect(resolve({ model: "claude-opus-9" }, env).name).toBe("anthropic");
    expect(resolve({ model: "gpt-7-turbo" }, env).name).toBe("openai");
    expect(
      resolve({ model: "deepseek-chat" }, { DEEPSEEK_API_KEY: "dk-1234567890abcdef" }).name,
    ).toBe("deepseek");
  });

  it("reads a provider prefix of the model id and sends the rest", () => {
    const settings = resolve({ model: "groq/llama-3.3-70b-versatile" }, { GROQ_API_KEY: GROQ_KEY });
    expect(settings.name).toBe("groq");
    expect(settings.model).toBe("llama-3.3-70b-versatile");
    const routed = resolve(
      { provider: "openrouter", model: "anthropic/claude-sonnet-4.5" },
      { OPENROUTER_API_KEY: "sk-or-v1-0123456789abcdef" },
    );
    expect(routed.model).toBe("anthropic/claude-sonnet-4.5");
  });

  it("refuses to guess a host for an open-weight model", () => {
    const error = failure({ model: "llama-3.3-70b" }, { ANTHROPIC_API_KEY: ANTHROPIC_KEY });
    expect(error.code).toBe("provider.unspecified");
    expect(error.message).toContain("SPOOL_PROVIDER");
  });

  it("falls back to the key present, Anthropic first, when no model says", () => {
    expect(resolve({}, { OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY }).name).toBe(
      "anthropic",
    );
    expect(resolve({}, { OPENAI_API_KEY: OPENAI_KEY }).name).toBe("openai");
    expect(resolve({ model: "my-finetune" }, { GROQ_API_KEY: GROQ_KEY }).name).toBe("groq");
  });

  it("never picks scripted silently, and says how to", () => {
    const error = failure({}, { SPOOL_API_KEY: GENERIC_KEY });
    expect(error.code).toBe("provider.unspecified");
    expect(error.message).toContain("SPOOL_PROVIDER=scripted");
    expect(resolve({}, { SPOOL_PROVIDER: "scripted" })).toMatchObject({
      name: "scripted",
      format: "scripted",
      model: "scripted",
    });
  });

  it("rejects an unknown provider, naming where it came from and the accepted names", () => {
    const error = failure({}, { SPOOL_PROVIDER: "antropic" });
    expect(error.code).toBe("provider.unknown");
    expect(error.message).toContain("SPOOL_PROVIDER");
    expect(error.message).toContain(PROVIDER_NAMES.join(", "));
  });

  it("ignores blank variables", () => {
    const env = { SPOOL_PROVIDER: "  ", OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: "" };
    expect(resolve({}, env).name).toBe("openai");
  });
});

describe("model and format", () => {
  it("takes the option over SPOOL_MODEL over the provider's default", () => {
    const env = { ANTHROPIC_API_KEY: ANTHROPIC_KEY, SPOOL_MODEL: "claude-haiku-4-5" };
    expect(resolve({ provider: "anthropic", model: "claude-opus-4-1" }, env).model).toBe(
      "claude-opus-4-1",
    );
    expect(resolve({ provider: "anthropic" }, env).model).toBe("claude-haiku-4-5");
    const fallback = resolve({ provider: "anthropic" }, { ANTHROPIC_API_KEY: ANTHROPIC_KEY });
    expect(fallback.model).toBe(PROVIDER_DEFAULTS.anthropic.defaultModel);
    expect(fallback.sources.model).toBe("the anthropic default");
  });

  it("needs a model where the server decides", () => {
    const error = failure({ provider: "ollama" });
    expect(error.code).toBe("provider.no-model");
    expect(error.message).toContain("SPOOL_MODEL");
    expect(resolve({ provider: "ollama", model: "llama3.3" }).baseURL).toBe(
      "http://127.0.0.1:11434/v1",
    );
  });

  it("uses the Responses API for models only it serves, or when asked", () => {
    const env = { OPENAI_API_KEY: OPENAI_KEY };
    expect(resolve({ model: "gpt-4o" }, env).format).toBe("openai-chat");
    expect(resolve({ model: "gpt-5-pro" }, env).format).toBe("openai-responses");
    expect(resolve({ provider: "openai-responses" }, env).format).toBe("openai-responses");
    expect(resolve({ model: "gpt-4o", format: "openai-responses" }, env).format).toBe(
      "openai-responses",
    );
    const bad = failure({ model: "gpt-4o", format: "soap" as never }, env);
    expect(bad.code).toBe("provider.bad-format");
  });

  it("passes the flavour through, defaulting to the provider's", () => {
    expect(resolve({ provider: "vllm", model: "m" }).flavour).toBe("vllm");
    expect(
      resolve({
        provider: "compatible",
        model: "m",
        baseURL: "http://gpu:9000/v1",
        flavour: "vllm",
      }).flavour,
    ).toBe("vllm");
    expect(resolve({ provider: "anthropic" }, { ANTHROPIC_API_KEY: ANTHROPIC_KEY }).flavour).toBe(
      undefined,
    );
  });
});

describe("API keys", () => {
  it("takes the option over SPOOL_API_KEY over the provider's variable", () => {
    const env = { ANTHROPIC_API_KEY: ANTHROPIC_KEY, SPOOL_API_KEY: GENERIC_KEY };
    expect(resolve({ provider: "anthropic", apiKey: "explicit-key-0123456789" }, env).apiKey).toBe(
      "explicit-key-0123456789",
    );
    const generic = resolve({ provider: "anthropic" }, env);
    expect(generic.apiKey).toBe(GENERIC_KEY);
    expect(generic.sources.apiKey).toBe("SPOOL_API_KEY");
    const own = resolve({ provider: "anthropic" }, { ANTHROPIC_API_KEY: ` ${ANTHROPIC_KEY}\n` });
    expect(own.apiKey).toBe(ANTHROPIC_KEY);
    expect(own.sources.apiKey).toBe("ANTHROPIC_API_KEY");
  });

  it("never sends one provider's key to another", () => {
    const env = { OPENAI_API_KEY: OPENAI_KEY };
    expect(resolve({ provider: "ollama", model: "llama3.3" }, env).apiKey).toBeUndefined();
    expect(
      resolve({ provider: "compatible", model: "m", baseURL: "http://x:1/v1" }, env).apiKey,
    ).toBeUndefined();
    expect(failure({ provider: "groq" }, env).code).toBe("provider.no-key");
  });

  it("local servers need none", () => {
    for (const provider of ["ollama", "vllm", "llamacpp"]) {
      expect(resolve({ provider, model: "m" }).name).toBe(provider);
    }
  });

  it("a missing key names the variable and the option, and leaks no key", () => {
    const env = { OPENAI_API_KEY: OPENAI_KEY, GROQ_API_KEY: GROQ_KEY };
    const error = failure({ provider: "anthropic" }, env);
    expect(error.code).toBe("provider.no-key");
    expect(error.message).toContain("ANTHROPIC_API_KEY");
    expect(error.message).toContain("`apiKey` option");
    for (const key of [OPENAI_KEY, GROQ_KEY]) expect(everything(error)).not.toContain(key);
    const groq = failure({ provider: "groq" });
    expect(groq.message).toContain("GROQ_API_KEY");
  });
});

describe("base URLs", () => {
  it("takes the option over SPOOL_BASE_URL over the provider's variable over its default", () => {
    const env = {
      OPENAI_API_KEY: OPENAI_KEY,
      SPOOL_BASE_URL: "http://spool:1/v1",
      OPENAI_BASE_URL: "https://proxy.example/v1",
    };
    expect(resolve({ provider: "openai", baseURL: "http://option:2/v1" }, env).baseURL).toBe(
      "http://option:2/v1",
    );
    expect(resolve({ provider: "openai" }, env).baseURL).toBe("http://spool:1/v1");
    const { SPOOL_BASE_URL: _, ...withoutSpool } = env;
    expect(resolve({ provider: "openai" }, withoutSpool).baseURL).toBe("https://proxy.example/v1");
    expect(resolve({ provider: "openai" }, { OPENAI_API_KEY: OPENAI_KEY }).baseURL).toBe(
      "https://api.openai.com/v1",
    );
    expect(
      resolve({ provider: "groq" }, { GROQ_API_KEY: GROQ_KEY, OPENAI_BASE_URL: "http://no:1" })
        .baseURL,
    ).toBe("https://api.groq.com/openai/v1");
  });

  it("rejects a base URL that is not http(s), naming the setting", () => {
    const env = { ANTHROPIC_API_KEY: ANTHROPIC_KEY };
    const notURL = failure(
      { provider: "anthropic" },
      { ...env, ANTHROPIC_BASE_URL: "api.example" },
    );
    expect(notURL.code).toBe("provider.bad-base-url");
    expect(notURL.message).toContain("ANTHROPIC_BASE_URL");
    const ftp = failure({ provider: "anthropic", baseURL: "ftp://files.example" }, env);
    expect(ftp.message).toContain("`baseURL` option");
    expect(ftp.message).toContain("ftp");
  });

  it("does not echo a key pasted into the base URL", () => {
    const error = failure({}, { OPENAI_API_KEY: OPENAI_KEY, SPOOL_BASE_URL: OPENAI_KEY });
    expect(error.message).toContain("SPOOL_BASE_URL");
    expect(everything(error)).not.toContain(OPENAI_KEY);
  });

  it("compatible needs one", () => {
    const error = failure({ provider: "compatible", model: "m" });
    expect(error.code).toBe("provider.no-base-url");
    expect(error.message).toContain("SPOOL_BASE_URL");
  });
});

describe("the key stays hidden", () => {
  const settings = resolve(
    { provider: "anthropic", baseURL: "https://user:hunter2@gateway.example/anthropic" },
    { ANTHROPIC_API_KEY: ANTHROPIC_KEY },
  );

  it("from JSON, String, inspect and spreads, while staying readable", () => {
    expect(settings.apiKey).toBe(ANTHROPIC_KEY);
    for (const text of [
      JSON.stringify(settings),
      String(settings),
      `${settings}`,
      inspect(settings, { depth: 5, showHidden: false }),
      describeSettings(settings),
    ]) {
      expect(text).not.toContain(ANTHROPIC_KEY);
      expect(text).not.toContain("hunter2");
    }
    // A spread copies the fields as given (the base URL too), never the key.
    expect(JSON.stringify({ ...settings })).not.toContain(ANTHROPIC_KEY);
    expect({ ...settings }).not.toHaveProperty("apiKey");
    expect(JSON.parse(JSON.stringify(settings))).toMatchObject({
      name: "anthropic",
      apiKey: "sk-ant-…AAAA",
    });
    expect(Object.isFrozen(settings)).toBe(true);
  });

  it("describeSettings shows the masked key and where it came from", () => {
    expect(describeSettings(settings)).toBe(
      "provider=anthropic format=anthropic model=claude-sonnet-5-5 baseURL=https://***:***@gateway.example/anthropic key=sk-ant-…AAAA (ANTHROPIC_API_KEY)",
    );
    expect(describeSettings(resolve({ provider: "vllm", model: "m" }))).toContain("key=none");
  });

  it("maskKey shows a short key as [set]", () => {
    expect(maskKey("short-key")).toBe("[set]");
    expect(maskKey("sk-abcdefghijklmnopqrstu1234")).toBe("sk-…1234");
    expect(maskKey(undefined)).toBeUndefined();
  });
});
