// biome-ignore-all lint/suspicious/noTemplateCurlyInString: hook params write ${event.…} templates in plain strings
import { describe, expect, it } from "vitest";
import {
  checkTemplates,
  parseTemplate,
  renderTemplates,
  renderText,
  TemplateSyntaxError,
} from "../src/hooks/index.js";

const event = {
  pressure_ratio: 0.82,
  attempt: 2,
  reason: "",
  gone: null,
  error: { code: "rate_limit", transient: true },
  items: [{ id: "x1" }, { id: "x2" }],
  summarizer: "thread_summary",
};

describe("parsing", () => {
  it("splits text and templates, with || alternatives of paths, quoted literals and numbers", () => {
    expect(parseTemplate("ratio ${event.pressure_ratio}!")).toEqual([
      "ratio ",
      { alternatives: [{ kind: "path", segments: ["pressure_ratio"] }] },
      "!",
    ]);
    expect(
      parseTemplate(`\${event.reason || event.items[0].id || 'no}ne' || "x||y" || -1.5}`),
    ).toEqual([
      {
        alternatives: [
          { kind: "path", segments: ["reason"] },
          { kind: "path", segments: ["items", 0, "id"] },
          { kind: "literal", value: "no}ne" },
          { kind: "literal", value: "x||y" },
          { kind: "literal", value: -1.5 },
        ],
      },
    ]);
    expect(parseTemplate("no templates $here {x}")).toEqual(["no templates $here {x}"]);
  });

  it("refuses roots other than event, a bare event, and broken syntax", () => {
    const refused = (text: string) => () => parseTemplate(text);
    expect(refused("${hook.id}")).toThrow(TemplateSyntaxError);
    expect(refused("${hook.id}")).toThrow(/"hook\.id" is not allowed: a template reads the event/);
    expect(refused("${event}")).toThrow(/name a field of the event/);
    expect(refused("${env.HOME}")).toThrow(/not allowed/);
    expect(refused("${event.a")).toThrow(/without a closing \}/);
    expect(refused("${}")).toThrow(/empty alternative/);
    expect(refused("${event.a ||}")).toThrow(/empty alternative/);
    expect(refused("${'abc}")).toThrow(/closing|unterminated/);
    expect(refused("${event.a b}")).toThrow(/not allowed/);
  });

  it("checkTemplates reports every malformed string at its path inside params", () => {
    expect(
      checkTemplates({ a: "${event.ok}", b: ["fine", { c: "${hook.id}" }], d: 3, e: "${x" }),
    ).toEqual([
      { path: ["b", 1, "c"], message: expect.stringMatching(/not allowed/) },
      { path: ["e"], message: expect.stringMatching(/without a closing/) },
    ]);
  });
});

describe("rendering", () => {
  it("a string that is exactly one template keeps the value's JSON type", () => {
    expect(
      renderTemplates(
        {
          ratio: "${event.pressure_ratio}",
          transient: "${event.error.transient}",
          error: "${event.error}",
          second: "${event.items[1]}",
          missing: "${event.nope}",
          literal: "${7}",
        },
        event,
      ),
    ).toEqual({
      ratio: 0.82,
      transient: true,
      error: { code: "rate_limit", transient: true },
      second: { id: "x2" },
      missing: null,
      literal: 7,
    });
  });

  it("templates inside text are written as text (mappings as JSON, nothing as empty)", () => {
    expect(renderTemplates("at ${event.pressure_ratio} of ${event.error}", event)).toBe(
      'at 0.82 of {"code":"rate_limit","transient":true}',
    );
    expect(renderTemplates("[${event.nope}] [${event.gone}]", event)).toBe("[] []");
    expect(renderTemplates(" ${event.attempt}", event)).toBe(" 2");
  });

  it("falls back past missing, null and empty values, in order", () => {
    const note = "${event.reason || event.gone || event.error.code || 'none'}";
    expect(renderTemplates(note, event)).toBe("rate_limit");
    expect(renderTemplates(note, {})).toBe("none");
    expect(renderTemplates(`\${event.reason || "plain"}`, event)).toBe("plain");
    expect(renderTemplates("${event.nope || event.attempt}", event)).toBe(2);
    expect(renderTemplates("${event.nope || event.gone}", event)).toBeNull();
    expect(renderTemplates("${event.flag || 'x'}", { flag: false })).toBe(false);
    expect(renderTemplates("${event.count || 9}", { count: 0 })).toBe(0);
  });

  it("renders nested params, leaves non-strings alone and never changes its input", () => {
    const params = { list: ["${event.attempt}", 3, true, null], deep: { id: "${event.items}" } };
    const before = structuredClone(params);
    const rendered = renderTemplates(params, event) as { deep: { id: unknown[] } };
    expect(rendered).toEqual({
      list: [2, 3, true, null],
      deep: { id: [{ id: "x1" }, { id: "x2" }] },
    });
    expect(params).toEqual(before);
    expect(rendered.deep.id).not.toBe(event.items);
  });

  it("renderText writes any value as text (item ids)", () => {
    expect(renderText("${event.summarizer}", event)).toBe("thread_summary");
    expect(renderText("${event.attempt}", event)).toBe("2");
    expect(renderText("${event.nope}", event)).toBe("");
    expect(renderText("tools/${event.error.code}", event)).toBe("tools/rate_limit");
  });

  it("keeps a malformed string as it is", () => {
    expect(renderTemplates("${hook.id}", event)).toBe("${hook.id}");
  });
});
