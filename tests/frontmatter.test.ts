import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { FRONTMATTER_MAX_BYTES, FRONTMATTER_MAX_DEPTH, parseFrontmatter } from "../src/config/frontmatter.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

function data(text: string): unknown {
  const result = parseFrontmatter(text);
  assert.equal(result.ok, true, `expected ok, got ${JSON.stringify(result)}`);
  return result.ok ? result.data : null;
}

function problem(text: string): string | null {
  const result = parseFrontmatter(text);
  return result.ok ? null : result.code;
}

describe("parseFrontmatter()", () => {
  it("splits a SKILL.md into its mapping and body", () => {
    const result = parseFrontmatter("---\nname: pdf-tools\ndescription: Reads PDFs.\nmetadata:\n  author: x\n---\n# Body\n\ntext\n");
    assert.deepEqual(result, {
      ok: true,
      data: { name: "pdf-tools", description: "Reads PDFs.", metadata: { author: "x" } },
      body: "# Body\n\ntext\n",
    });
  });

  it("accepts CRLF fences, a byte-order mark, an empty frontmatter and a file that ends at the fence", () => {
    assert.deepEqual(data("\uFEFF---\r\nname: a\r\n---\r\nbody"), { name: "a" });
    assert.deepEqual(parseFrontmatter("---\n---\nbody"), { ok: true, data: {}, body: "body" });
    assert.deepEqual(parseFrontmatter("---\nname: a\n---"), { ok: true, data: { name: "a" }, body: "" });
  });

  it("refuses a file without an opening or a closing fence", () => {
    assert.equal(problem("name: a\n"), "frontmatter_missing");
    assert.equal(problem(" ---\nname: a\n---\n"), "frontmatter_missing");
    assert.equal(problem("---\nname: a\n"), "frontmatter_unterminated");
    assert.equal(problem("---\nname: a\n----\n"), "frontmatter_unterminated");
  });

  it("refuses frontmatter of 16,385 bytes and takes 16,384", () => {
    const value = (bytes: number) => `---\nd: ${"x".repeat(bytes - 4)}\n---\n`; // "d: " + value + "\n"
    assert.equal(problem(value(FRONTMATTER_MAX_BYTES + 1)), "frontmatter_too_large");
    assert.equal(problem(value(FRONTMATTER_MAX_BYTES)), null);
  });

  it("refuses duplicate keys, unknown tags, binaries, collection and reserved keys, non-finite numbers", () => {
    for (
      const yaml of [
        "a: 1\na: 2",
        "a: !foo x",
        "a: !!binary aGk=",
        "? [1, 2]\n: y",
        "? {a: 1}\n: x",
        "1: x",
        "__proto__: {polluted: true}",
        "constructor: x",
        "a: .inf",
        "a: [unclosed",
      ]
    ) {
      assert.equal(problem(`---\n${yaml}\n---\n`), "frontmatter_invalid", yaml);
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it("refuses a top level that is not a mapping", () => {
    assert.equal(problem("---\n- a\n- b\n---\n"), "frontmatter_not_mapping");
    assert.equal(problem("---\njust text\n---\n"), "frontmatter_not_mapping");
  });

  it("refuses an alias expansion past its budget (billion laughs)", () => {
    const lines = ["a: &a [x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 9; i++) lines.push(`${"abcdefghij"[i]}: &${"abcdefghij"[i]} [${Array(9).fill(`*${"abcdefghij"[i - 1]}`).join(", ")}]`);
    assert.equal(problem(`---\n${lines.join("\n")}\n---\n`), "frontmatter_invalid");
  });

  it(`takes nesting of ${FRONTMATTER_MAX_DEPTH} containers and refuses one more`, () => {
    const nested = (depth: number) => `a: ${"[".repeat(depth - 1)}1${"]".repeat(depth - 1)}`;
    assert.equal(problem(`---\n${nested(FRONTMATTER_MAX_DEPTH)}\n---\n`), null);
    assert.equal(problem(`---\n${nested(FRONTMATTER_MAX_DEPTH + 1)}\n---\n`), "frontmatter_invalid");
  });

  it("never throws, and what it accepts is plain JSON data", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 300 }), fc.string({ maxLength: 40 }), (yaml, body) => {
        const result = parseFrontmatter(`---\n${yaml}\n---\n${body}`);
        if (result.ok) assert.deepEqual(JSON.parse(JSON.stringify(result.data)), result.data);
      }),
      { numRuns: fuzzRuns(300) },
    );
  });

  it("reads back any JSON mapping of names to strings, numbers and booleans written as YAML flow", () => {
    const name = fc.stringMatching(/^[a-z][a-z0-9_-]{0,15}$/).filter((key) => !["constructor", "prototype"].includes(key));
    const scalar = fc.oneof(fc.string({ maxLength: 30 }), fc.integer(), fc.boolean());
    fc.assert(
      fc.property(fc.dictionary(name, scalar, { maxKeys: 8, noNullPrototype: true }), (mapping) => {
        // JSON is YAML 1.2 flow syntax.
        assert.deepEqual(data(`---\n${JSON.stringify(mapping)}\n---\n`), mapping);
      }),
      { numRuns: fuzzRuns(200) },
    );
  });
});
