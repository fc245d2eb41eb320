/**
 * `checkSkillText()` against the Agent Skills specification: its own valid
 * and invalid examples, then a fast-check property over names (valid,
 * near-valid and arbitrary) and whole frontmatters, each judged by an
 * oracle written from the specification's rules rather than from the code:
 * the first field that breaks a rule is the one reported.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { checkSkillText } from "../src/config/skill-frontmatter.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const SPEC_VALID = ["pdf-processing", "data-analysis", "code-review", "a", "x".repeat(64), "v2", "0-9"];
const SPEC_INVALID = ["PDF-Processing", "-pdf", "pdf-", "pdf--processing", "", "x".repeat(65), "pdf_processing", "pdf processing", "café", "ｐｄｆ"];

/** The specification's name rule, spelled out character by character. */
function validName(name: string): boolean {
  if (name.length < 1 || name.length > 64 || name.startsWith("-") || name.endsWith("-") || name.includes("--")) return false;
  return [...name].every((char) => (char >= "a" && char <= "z") || (char >= "0" && char <= "9") || char === "-");
}

const isSpace = (char: string) => /\s/.test(char);
const codePoints = (text: string) => [...text].length;
const isControl = (char: string) => {
  const code = char.codePointAt(0)!;
  return code <= 0x1f || (code >= 0x7f && code <= 0x9f);
};

interface Fields {
  name?: unknown;
  description?: unknown;
  license?: unknown;
  compatibility?: unknown;
  metadata?: unknown;
  "allowed-tools"?: unknown;
  "x-extra"?: unknown;
}

/** Whether `value` holds, at any depth, a key that reaches an object's prototype (frontmatter.ts refuses the whole file). */
function reservedKey(value: unknown): boolean {
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return value.some(reservedKey);
  return Object.entries(value).some(([key, item]) => ["__proto__", "prototype", "constructor"].includes(key) || reservedKey(item));
}

/** The JSON path of the first rule `fields` break for directory `directory`, or null when the skill is valid. */
function firstProblem(fields: Fields, directory: string): string | null {
  if (reservedKey(fields)) return "$";
  const { name, description, license, compatibility, metadata } = fields;
  if (typeof name !== "string" || !validName(name) || name !== directory) return "$.name";
  if (typeof description !== "string" || [...description].every(isSpace) || codePoints(description) > 1024) return "$.description";
  if ([...description].some((char) => isControl(char) && !isSpace(char))) return "$.description";
  if (license !== undefined && (typeof license !== "string" || license.trim() === "" || codePoints(license) > 1024)) return "$.license";
  if (compatibility !== undefined && (typeof compatibility !== "string" || compatibility.trim() === "" || codePoints(compatibility) > 500)) return "$.compatibility";
  if (metadata !== undefined) {
    const scalar = (value: unknown) => ["string", "number", "boolean"].includes(typeof value);
    if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata) || !Object.values(metadata).every(scalar)) return "$.metadata";
  }
  const tools = fields["allowed-tools"];
  if (tools !== undefined && typeof tools !== "string" && !(Array.isArray(tools) && tools.every((item) => typeof item === "string"))) return "$.allowed-tools";
  return null;
}

/** A SKILL.md whose frontmatter is `fields` as a JSON flow mapping (JSON is YAML 1.2). */
const text = (fields: Fields, body = "# Body\n") => `---\n${JSON.stringify(fields)}\n---\n${body}`;

const segment = fc.stringMatching(/^[a-z0-9]{1,12}$/);
const validNames = fc.array(segment, { minLength: 1, maxLength: 7 }).map((parts) => parts.join("-"));
const nearNames = fc.string({ unit: fc.constantFrom("a", "z", "0", "9", "-", "-", "A", "_", " ", "é", "."), maxLength: 70 });
const nameArb = fc.oneof(validNames, nearNames, fc.constantFrom(...SPEC_VALID, ...SPEC_INVALID));
// Letters, every kind of whitespace, controls that are and are not whitespace, and characters outside the BMP.
const textUnit = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom("a", "B", "7", " ", ".", ":", "é", "😀") },
  { weight: 1, arbitrary: fc.constantFrom("\n", "\t", "\r", "\u000b", "\u00a0", "\u2028", "\u0007", "\u0000", "\u0085", "\u009f", "\u007f") },
);
const plainUnit = fc.constantFrom("a", "B", " ", "é", "😀", "\n");
// Short texts with anything in them, and texts at the length bound (in code points) without controls, so the bound itself is probed.
const textArb = (max: number) => fc.oneof(fc.string({ unit: textUnit, maxLength: 40 }), fc.string({ unit: plainUnit, minLength: max - 2, maxLength: max + 2 }));
const scalar = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean());
const fieldsArb = fc.record({
  name: fc.oneof({ weight: 9, arbitrary: nameArb }, { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.constant(null)) }),
  description: fc.oneof({ weight: 9, arbitrary: textArb(1024) }, { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.array(fc.string())) }),
  license: fc.oneof(textArb(1024), fc.integer(), fc.constant("")),
  compatibility: fc.oneof(textArb(500), fc.boolean()),
  metadata: fc.oneof(
    fc.dictionary(fc.stringMatching(/^[a-z-]{1,10}$/), scalar, { maxKeys: 4 }),
    fc.dictionary(fc.stringMatching(/^[a-z]{1,5}$/), fc.oneof(scalar, fc.array(scalar), fc.constant(null)), { minKeys: 1, maxKeys: 3 }),
    fc.array(scalar),
    fc.string(),
  ),
  "allowed-tools": fc.oneof(fc.string({ maxLength: 40 }), fc.array(fc.string({ maxLength: 10 }), { maxLength: 5 }), fc.array(scalar, { minLength: 1 }), fc.integer()),
  "x-extra": fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant({ prototype: null })),
}, { requiredKeys: [] });

describe("checkSkillText()", () => {
  it("accepts the specification's valid names and refuses its invalid ones", () => {
    for (const name of SPEC_VALID) assert.equal(checkSkillText(text({ name, description: "d" }), name).ok, true, name);
    for (const name of SPEC_INVALID) {
      assert.deepEqual(checkSkillText(text({ name, description: "d" }), name), {
        ok: false,
        path: "$.name",
        message: "must be 1-64 of a-z, 0-9 and single hyphens between them, without a leading or trailing hyphen",
      }, name);
    }
  });

  it("reads the specification's example with every optional field, as block YAML", () => {
    const source = "---\nname: pdf-processing\ndescription: >-\n  Extract PDF text, fill forms, merge files.\n  Use when handling PDFs.\n" +
      "license: Apache-2.0\ncompatibility: Requires Python 3.14+ and uv\nmetadata:\n  author: example-org\n  version: \"1.0\"\n  revision: 3\n" +
      "allowed-tools: Bash(git:*) Bash(jq:*) Read\n---\n\n# PDF processing\n\nRun scripts/extract.py.\n\n";
    assert.deepEqual(checkSkillText(source, "pdf-processing"), {
      ok: true,
      skill: {
        name: "pdf-processing",
        description: "Extract PDF text, fill forms, merge files. Use when handling PDFs.",
        body: "# PDF processing\n\nRun scripts/extract.py.",
        license: "Apache-2.0",
        compatibility: "Requires Python 3.14+ and uv",
        metadata: { author: "example-org", version: "1.0", revision: "3" },
        allowedTools: ["Bash(git:*)", "Bash(jq:*)", "Read"],
      },
    });
    const listed = checkSkillText("---\nname: x\ndescription: d\nallowed-tools:\n  - Bash(git:*)\n  - Read\n---\n", "x");
    assert.deepEqual(listed.ok && listed.skill.allowedTools, ["Bash(git:*)", "Read"]);
  });

  const agrees = (fields: Fields, directory: string) => {
    const expected = firstProblem(fields, directory);
    const result = checkSkillText(text(fields), directory);
    assert.equal(result.ok ? null : result.path, expected, JSON.stringify(result));
    if (result.ok) {
      assert.equal(result.skill.name, fields.name);
      assert.equal(result.skill.description, (fields.description as string).split(/\s+/).filter((word) => word !== "").join(" "));
      assert.ok(!("x-extra" in result.skill), "fields the specification does not define are ignored");
    }
  };

  it("agrees with the specification's rules on any name and frontmatter (property)", () => {
    fc.assert(
      fc.property(fieldsArb, fc.boolean(), validNames, (fields, sameDirectory, otherDirectory) => {
        agrees(fields, sameDirectory && typeof fields.name === "string" ? fields.name : otherDirectory);
      }),
      { numRuns: fuzzRuns(400) },
    );
  });

  it("agrees with the specification's rules on the optional fields of a skill with a valid name and description (property)", () => {
    fc.assert(
      fc.property(fieldsArb, validNames, (fields, name) => agrees({ ...fields, name, description: "Does things. Use when asked." }, name)),
      { numRuns: fuzzRuns(400) },
    );
  });
});
