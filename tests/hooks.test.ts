/**
 * Hooks without processes: the `hooks` settings section, matchers, the
 * canonical definition's pinned digest, what voids a project hook's approval, and what a hook's ending means per
 * event (docs/features/runner.md, "Hooks").
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { HOOK_MATCHER, matchesTool, parseHooksSettings } from "../src/config/hooks-settings.ts";
import { parseSettingsText } from "../src/config/settings.ts";
import { canonicalHookText, hookApprovalFor, hookStatuses } from "../src/hooks/definition.ts";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { configuredHooks } from "../src/config/hooks-settings.ts";
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
  overflowed: { stdout: false, stderr: false },
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

describe("project hook approvals", () => {
  it("hookStatuses(): a changed command, or the same command finding another program, voids the approval", async () => {
    const fs = new MemoryFileSystem();
    for (const path of ["/bin/sh", "/bin/bash", "/opt/bin/lint", "/usr/bin/lint"]) fs.writeFile(path, "", 0o755);
    fs.writeFile("/w/.magi-code/settings.jsonc", "{}", 0o644);
    const statuses = async (command: string, path: string, approvals: Parameters<typeof hookStatuses>[2]) => {
      const runtime = createMemoryRuntime({ fs, cwd: "/w", env: { HOME: "/home/user", PATH: path } });
      const hooks = configuredHooks({ file: "/home/user/.magi-code/settings.jsonc" }, { file: "/w/.magi-code/settings.jsonc", hooks: { Stop: [{ command, args: ["x"] }] } });
      return await hookStatuses(runtime, hooks, approvals, "/w");
    };
    const [first] = await statuses("/bin/sh", "/usr/bin", []);
    const approvals = [hookApprovalFor(first!)!];
    assert.equal((await statuses("/bin/sh", "/usr/bin", approvals))[0]!.state, "approved");
    assert.equal((await statuses("/bin/bash", "/usr/bin", approvals))[0]!.state, "not_approved");
    const [lint] = await statuses("lint", "/usr/bin", []);
    const lintApproved = [hookApprovalFor(lint!)!];
    assert.equal((await statuses("lint", "/usr/bin", lintApproved))[0]!.state, "approved");
    assert.equal((await statuses("lint", "/opt/bin:/usr/bin", lintApproved))[0]!.state, "changed");
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

  it("a flood spoils only the stream an ending reads: exit 2 blocks with its stderr's first bytes, a cut character dropped; exit 0 fails on a stdout flood", () => {
    const cut = encoder.encode("stop \u00e9").subarray(0, 6);
    const flooded = (code: number, overflowed: { stdout: boolean; stderr: boolean }, stderr = cut): HookProcessResult => ({ kind: "exited", status: { code, signal: null }, stdout: new Uint8Array(), stderr, overflowed });
    assert.deepEqual(hookAnswer("PreToolUse", flooded(2, { stdout: false, stderr: true }), []), { kind: "block", reason: "stop" });
    assert.deepEqual(hookAnswer("PreToolUse", flooded(2, { stdout: true, stderr: false }, encoder.encode("no")), []), { kind: "block", reason: "no" });
    assert.deepEqual(hookAnswer("PreToolUse", flooded(0, { stdout: false, stderr: true }), []), { kind: "proceed", decision: null, reason: null, context: null });
    assert.deepEqual(hookAnswer("PreToolUse", flooded(0, { stdout: true, stderr: false }), []), { kind: "failed", why: "printed more than 64 KiB on stdout" });
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
