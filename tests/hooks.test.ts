/**
 * Hooks without processes: the `hooks` settings section, matchers, the
 * canonical definition's pinned digest, and what a hook's ending means per
 * event (docs/features/runner.md, "Hooks").
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { HOOK_MATCHER, matchesTool, parseHooksSettings } from "../src/config/hooks-settings.ts";
import { parseSettingsText } from "../src/config/settings.ts";
import { canonicalHookText } from "../src/hooks/definition.ts";
import { hookAnswer, MAX_HOOK_TEXT_BYTES } from "../src/hooks/hook-answer.ts";
import type { HookProcessResult } from "../src/hooks/hook-process.ts";
import { sha256Hex } from "../src/util/digest.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const encoder = new TextEncoder();
const exited = (code: number | null, stdout = "", stderr = "", signal: string | null = null): HookProcessResult => ({
  kind: "exited",
  status: { code, signal },
  stdout: encoder.encode(stdout),
  stderr: encoder.encode(stderr),
  overflowed: false,
});

describe("hooks settings", () => {
  it("parseHooksSettings() takes every event's list and refuses a matcher on an event without tools", () => {
    const hook = { command: "sh", args: ["-c", "exit 0"], timeout_ms: 5000 };
    assert.ok(parseHooksSettings({ PreToolUse: [{ matcher: "mcp__*", ...hook }], PostToolUse: [hook], UserPromptSubmit: [hook], Stop: [hook] }));
    assert.equal(parseHooksSettings({ Stop: [{ matcher: "shell", ...hook }] }), null);
    assert.equal(parseHooksSettings({ SessionEnd: [hook] }), null);
    assert.equal(parseHooksSettings({ PreToolUse: [{ ...hook, timeout_ms: 99 }] }), null);
    assert.equal(parseHooksSettings({ PreToolUse: [{ ...hook, command: "" }] }), null);
  });

  it("parseSettingsText() hands the hooks section back apart, unchecked", () => {
    const parsed = parseSettingsText(JSON.stringify({ hooks: { Stop: [] } }));
    assert.ok(parsed.ok);
    assert.deepEqual(parsed.hooks, { Stop: [] });
    assert.equal("hooks" in parsed.settings, false);
  });

  it("matchesTool(): no matcher matches every tool, a name itself, * any run of characters", () => {
    assert.ok(matchesTool(null, "shell"));
    assert.ok(matchesTool("shell", "shell"));
    assert.ok(!matchesTool("shell", "shell2"));
    assert.ok(matchesTool("mcp__*__read*", "mcp__files__read_file"));
    assert.ok(!matchesTool("a*a", "a"));
    fc.assert(fc.property(fc.stringMatching(/^[a-z_]{0,12}$/), fc.stringMatching(/^[a-z_]{0,12}$/), fc.stringMatching(/^[a-z_]{0,12}$/), (a, b, c) => {
      const name = `${a}${b}${c}`;
      assert.ok(matchesTool("*", name));
      if (HOOK_MATCHER.test(`${a}*${c}`)) assert.ok(matchesTool(`${a}*${c}`, name));
      if (HOOK_MATCHER.test(`*${b}*`)) assert.ok(matchesTool(`*${b}*`, name));
    }), { numRuns: fuzzRuns(200) });
  });

  it("the canonical text of a hook and its digest are pinned: changing them voids every approval", async () => {
    const text = canonicalHookText({ v: 1, event: "PreToolUse", matcher: "shell", command: "/bin/sh", args: ["-c", "exit 0"], source: "/w/.magi-code/settings.jsonc" });
    assert.equal(text, '{"v":1,"event":"PreToolUse","matcher":"shell","command":"/bin/sh","args":["-c","exit 0"],"source":"/w/.magi-code/settings.jsonc"}');
    assert.equal(await sha256Hex(encoder.encode(text)), "572ed42369691c10df4a17b0bea0e4018bbefed780c12b670a9ea2cbe4b4c322");
  });
});

describe("hookAnswer()", () => {
  const secret = "sk-secret-value-0123456789";
  it("exit 0 with nothing on stdout proceeds; exit 2 blocks with stderr, redacted; another code fails", () => {
    assert.deepEqual(hookAnswer("Stop", exited(0), []), { kind: "proceed", decision: null, reason: null, context: null });
    assert.deepEqual(hookAnswer("PreToolUse", exited(2, "", `no: ${secret}\n`), [secret]), { kind: "block", reason: "no: [redacted]" });
    assert.deepEqual(hookAnswer("PreToolUse", exited(1), []), { kind: "failed", why: "exited with code 1" });
    assert.deepEqual(hookAnswer("PreToolUse", exited(null, "", "", "SIGKILL"), []), { kind: "failed", why: "was killed by SIGKILL" });
  });

  it("each event takes only its own fields and decisions", () => {
    assert.equal(hookAnswer("PreToolUse", exited(0, '{"decision":"ask","reason":"why"}'), []).kind, "proceed");
    assert.equal(hookAnswer("PreToolUse", exited(0, '{"additional_context":"x"}'), []).kind, "failed");
    assert.equal(hookAnswer("PostToolUse", exited(0, '{"decision":"deny"}'), []).kind, "failed");
    assert.equal(hookAnswer("PostToolUse", exited(0, '{"additional_context":"x"}'), []).kind, "proceed");
    assert.equal(hookAnswer("UserPromptSubmit", exited(0, '{"decision":"allow"}'), []).kind, "failed");
    assert.equal(hookAnswer("Stop", exited(0, '{"decision":"deny","reason":"go on"}'), []).kind, "proceed");
    assert.equal(hookAnswer("Stop", exited(0, "[1]"), []).kind, "failed");
    assert.equal(hookAnswer("Stop", exited(0, '{"reason":7}'), []).kind, "failed");
  });

  it(`cuts a context to ${MAX_HOOK_TEXT_BYTES} bytes and redacts it`, () => {
    const answer = hookAnswer("PostToolUse", exited(0, JSON.stringify({ additional_context: `${secret} ${"x".repeat(20_000)}` })), [secret]);
    assert.equal(answer.kind, "proceed");
    const context = (answer as { context: string }).context;
    assert.ok(context.startsWith("[redacted] x"));
    assert.ok(encoder.encode(context).length <= MAX_HOOK_TEXT_BYTES);
  });
});
