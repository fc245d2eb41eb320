/**
 * The system prompt's skills section (src/runner/skills-prompt.ts): every
 * enabled skill listed by name, whole descriptions while they fit, and
 * within the 16 KiB bound even at 128 skills of 1,024-character
 * descriptions, the room shared so short descriptions stay whole.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { MAX_SKILL_LIST_BYTES, skillLines, skillsSection } from "../src/runner/skills-prompt.ts";
import { systemPrompt } from "../src/runner/system-prompt.ts";
import { MAX_SKILLS } from "../src/config/skills.ts";
import { utf8ByteCount } from "../src/util/utf8.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const bytes = (lines: readonly string[]) => utf8ByteCount(lines.join("\n"));

describe("the skills section of the system prompt", () => {
  it("is absent without skills and lists name and whole description when they fit", () => {
    assert.equal(skillsSection([]), null);
    assert.equal(systemPrompt([], "/w"), systemPrompt([], "/w", []));
    const prompt = systemPrompt([], "/w", [{ name: "pdf", description: "Reads PDFs." }, { name: "deploy", description: "Deploys." }]);
    assert.ok(prompt.endsWith("\n\nAvailable skills:\n- pdf: Reads PDFs.\n- deploy: Deploys."), prompt);
    assert.match(prompt, /call the skill tool with its name/);
  });

  it("keeps 128 skills of 1,024-character descriptions within 16 KiB, every name listed, short descriptions whole", () => {
    const skills = Array.from({ length: MAX_SKILLS }, (_, i) => ({
      name: `skill-${String(i).padStart(3, "0")}-${"n".repeat(50)}`,
      description: i % 2 === 0 ? "Short." : "é".repeat(1024),
    }));
    const lines = skillLines(skills);
    assert.ok(bytes(lines) <= MAX_SKILL_LIST_BYTES, `${bytes(lines)} bytes`);
    assert.deepEqual(lines.map((line) => line.slice(0, line.indexOf(":"))), skills.map((skill) => `- ${skill.name}`));
    assert.ok(lines.filter((_, i) => i % 2 === 0).every((line) => line.endsWith(": Short.")));
    assert.ok(lines.filter((_, i) => i % 2 === 1).every((line) => line.endsWith("…") && !line.includes("\uFFFD")));
  });

  it("stays within the bound and keeps every description that fits, for any set of skills (property)", () => {
    const skill = fc.record({
      name: fc.stringMatching(/^[a-z0-9]{1,20}(-[a-z0-9]{1,20}){0,2}$/),
      description: fc.string({ unit: fc.constantFrom("a", "é", "😀", " "), minLength: 1, maxLength: 1024 }),
    });
    fc.assert(
      fc.property(fc.array(skill, { maxLength: MAX_SKILLS }), (skills) => {
        const lines = skillLines(skills);
        assert.ok(bytes(lines) <= MAX_SKILL_LIST_BYTES);
        const whole = skills.map((item) => `- ${item.name}: ${item.description}`);
        if (bytes(whole) <= MAX_SKILL_LIST_BYTES) assert.deepEqual(lines, whole);
      }),
      { numRuns: fuzzRuns(100) },
    );
  });
});
