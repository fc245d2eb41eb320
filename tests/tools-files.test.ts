import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { toJsonSchema } from "@valibot/to-json-schema";
import fc from "fast-check";
import * as v from "valibot";
import { compileGlob } from "../src/runner/tools/glob-match.ts";
import { approvalSummary, prepareCall } from "../src/runner/tools/invoke.ts";
import { DEFAULT_POLICIES, resolvePolicy } from "../src/policy/tool-policies.ts";
import { builtinTools, findBuiltinTool } from "../src/runner/tools/registry.ts";
import { groupDigits } from "../src/runner/tools/tool-text.ts";
import { clampUtf8, tailUtf8 } from "../src/util/utf8.ts";
import { type AnyTool, isPrepared, MAX_OUTPUT_BYTES, MAX_SUMMARY_BYTES, type PreparedCall, type ToolContext, type ToolResult } from "../src/runner/tools/tool.ts";
import { exactObject } from "../src/util/exact-object.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { bytesOf, invokeTool, memoryWorld, removeWorlds, type World, worldMakers } from "./support/tools.ts";

after(removeWorlds);

const SECRET = "magi-test-secret-value-0123456789";
const tool = (name: string): AnyTool => findBuiltinTool(name)!;
const call = (world: World, name: string, args: unknown, context?: Partial<ToolContext>): Promise<ToolResult> =>
  invokeTool(tool(name), args, { ...world.context(), ...context });
const text = async (world: World, path: string) => new TextDecoder("utf-8", { ignoreBOM: true }).decode(await world.fs.readFile(`${world.root}/${path}`, 1 << 24));

/** Every result must keep the contract's bounds whatever happened. */
function assertBounded(result: ToolResult): void {
  assert.ok(bytesOf(result.output) <= MAX_OUTPUT_BYTES, `output is ${bytesOf(result.output)} bytes`);
  assert.ok(bytesOf(result.summary) <= MAX_SUMMARY_BYTES, `summary is ${bytesOf(result.summary)} bytes`);
  assert.ok(!/[\n\r]/.test(result.summary), "summary is one line");
}

describe("tool definitions", () => {
  it("builtinTools() offers the seven tools, and skill only with skills, each with a default policy: reads, skill, task and code allowed, writes and shell asking", () => {
    // `task` and `code` have default policies but are offered apart: by a run that may delegate (src/agents/), with Code Mode on.
    const registered = Object.keys(DEFAULT_POLICIES).filter((name) => name !== "task" && name !== "code");
    assert.deepEqual(builtinTools().map((t) => t.name), registered.filter((name) => name !== "skill"));
    assert.deepEqual(builtinTools(true).map((t) => t.name), registered);
    assert.equal(findBuiltinTool("skill"), undefined);
    assert.equal(findBuiltinTool("skill", true)?.name, "skill");
    assert.deepEqual(DEFAULT_POLICIES, {
      read_file: "allow",
      list_directory: "allow",
      glob: "allow",
      grep: "allow",
      write_file: "ask",
      edit_file: "ask",
      shell: "ask",
      skill: "allow",
      task: "allow",
      code: "allow",
    });
  });

  it("each hand-written JSON Schema equals @valibot/to-json-schema's rendering of the valibot schema", () => {
    for (const t of builtinTools(true)) {
      const { $schema: _, ...rendered } = toJsonSchema(t.schema, { errorMode: "ignore" }) as Record<string, unknown>;
      assert.deepEqual(t.parameters, rendered, t.name);
      assert.ok(t.description.length > 20, t.name);
    }
  });

  it("resolvePolicy() prefers settings, then the default, and asks for unknown tools", () => {
    assert.equal(resolvePolicy("read_file"), "allow");
    assert.equal(resolvePolicy("shell"), "ask");
    assert.equal(resolvePolicy("shell", { shell: "deny" }), "deny");
    assert.equal(resolvePolicy("write_file", { write_file: "allow" }), "allow");
    assert.equal(resolvePolicy("mcp__github__create_issue"), "ask");
    assert.equal(resolvePolicy("mcp__x", { mcp__x: "allow" }), "allow");
    // Inherited keys and garbage values never count as configuration.
    assert.equal(resolvePolicy("constructor", {}), "ask");
    assert.equal(resolvePolicy("toString", Object.create({ toString: "allow" })), "ask");
    assert.equal(resolvePolicy("shell", { shell: "yes" } as never), "ask");
  });
});

describe("groupDigits()", () => {
  it("groupDigits() writes what toLocaleString(\"en-US\") writes for every safe non-negative integer", () => {
    for (const n of [0, 7, 999, 1_000, 12_345, 999_999, 1_000_000, Number.MAX_SAFE_INTEGER]) assert.equal(groupDigits(n), n.toLocaleString("en-US"));
    fc.assert(fc.property(fc.maxSafeNat(), (n) => groupDigits(n) === n.toLocaleString("en-US")), { numRuns: fuzzRuns(200) });
  });
});

describe("UTF-8 bounds", () => {
  it("clampUtf8() and tailUtf8() fit the byte budget, keep a prefix or suffix, and never split a code point (property)", () => {
    const text = fc.string({ unit: fc.constantFrom("a", "é", "€", "😀", "\uD800", "\n"), maxLength: 40 });
    fc.assert(
      fc.property(text, fc.nat(60), (input, budget) => {
        const head = clampUtf8(input, budget, "");
        const tail = tailUtf8(input, budget);
        assert.ok(bytesOf(head) <= budget && input.startsWith(head));
        assert.ok(bytesOf(tail) <= budget && input.endsWith(tail));
        // A cut between the two halves of a surrogate pair would leave mojibake at either end.
        const splits = (at: number) => /[\uD800-\uDBFF]/.test(input[at - 1] ?? "") && /[\uDC00-\uDFFF]/.test(input[at] ?? "");
        assert.ok(!splits(head.length) && !splits(input.length - tail.length), "no split pair");
        if (bytesOf(input) <= budget) assert.equal(head, input);
        const marked = clampUtf8(input, Math.max(budget, 3));
        assert.ok(bytesOf(marked) <= Math.max(budget, 3));
      }),
      { numRuns: fuzzRuns(300) },
    );
  });
});

describe("glob matcher", () => {
  const matches = (pattern: string, path: string) => {
    const compiled = compileGlob(pattern);
    assert.ok(compiled.ok, pattern);
    return compiled.matcher.matchPath(path);
  };

  it("handles *, ?, classes, **, braces and escapes", () => {
    assert.ok(matches("*.ts", "a.ts") && !matches("*.ts", "src/a.ts"));
    assert.ok(matches("**/*.ts", "a.ts") && matches("**/*.ts", "src/deep/a.ts") && !matches("**/*.ts", "a.tsx"));
    assert.ok(matches("src/**", "src/a/b") && matches("src/**/x", "src/x") && !matches("src/**/x", "lib/x"));
    assert.ok(matches("?.md", "a.md") && !matches("?.md", "ab.md"));
    assert.ok(matches("[a-c]x", "bx") && !matches("[a-c]x", "dx") && matches("[!a-c]x", "dx") && matches("[^a]x", "bx"));
    assert.ok(matches("[]]", "]") && matches("[*]", "*") && !matches("[*]", "a"));
    assert.ok(matches("*.{ts,tsx}", "a.tsx") && matches("{src,lib}/**/*.js", "lib/x/y.js") && !matches("*.{ts,tsx}", "a.js"));
    assert.ok(matches("\\*.ts", "*.ts") && !matches("\\*.ts", "a.ts"));
    assert.ok(matches("{x}", "{x}") && matches("a[", "a["));
    assert.ok(matches("*", ".hidden") && matches("**/*.yml", ".github/workflows/ci.yml"));
    assert.ok(matches("é?", "éü"), "? is one code point");
  });

  it("refuses absolute, escaping, empty and exploding patterns", () => {
    for (const pattern of ["/etc/*", "../x", "a/../../b", "", ".", "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}"]) {
      assert.equal(compileGlob(pattern).ok, false, pattern);
    }
  });

  // A backtracking matcher would not return on these at all (the suite would hang), so the answers are
  // the check, and the `**` state set shows the NFA never holds more than one entry per pattern
  // position. The time they take is measured by bench/hostile-inputs.mjs, never asserted here.
  it("answers patterns that make backtracking matchers blow up, with a state bounded by the pattern", () => {
    assert.equal(matches("*a*a*a*a*a*a*a*a*b", "a".repeat(255)), false);
    assert.equal(matches("*a*a*a*a*a*a*a*a*b", `${"a".repeat(255)}b`), true);
    const pattern = `${"**/".repeat(40)}z`;
    assert.equal(matches(pattern, `${"a/".repeat(60)}y`), false);
    assert.equal(matches(pattern, `${"a/".repeat(60)}z`), true);
    const compiled = compileGlob(pattern);
    assert.ok(compiled.ok);
    let state = compiled.matcher.start();
    for (let depth = 0; depth < 60; depth++) {
      state = compiled.matcher.step(state, "a");
      assert.ok(state.length <= 41, `${state.length} positions after ${depth + 1} components`);
      assert.equal(new Set(state).size, state.length);
    }
  });

  // The reference: per-component regular expressions and a recursive `**`, fine for tiny inputs.
  function reference(segments: string[], parts: string[]): boolean {
    if (segments.length === 0) return parts.length === 0;
    const [first, ...rest] = segments;
    if (first === "**") return parts.some((_, k) => reference(rest, parts.slice(k))) || reference(rest, []);
    if (parts.length === 0) return false;
    const regex = new RegExp(`^${first!.replace(/[.]/g, "\\.").replace(/\*/g, ".*").replace(/\?/g, ".")}$`, "su");
    return regex.test(parts[0]!) && reference(rest, parts.slice(1));
  }

  it("agrees with a reference matcher, and prunes only where nothing below can match (property)", () => {
    const segment = fc.oneof(fc.constant("**"), fc.array(fc.constantFrom("a", "b", ".", "*", "?"), { minLength: 1, maxLength: 4 }).map((c) => c.join("")))
      .filter((s) => s !== "." && s !== "..");
    const part = fc.array(fc.constantFrom("a", "b", "."), { minLength: 1, maxLength: 3 }).map((c) => c.join("")).filter((s) => s !== "." && s !== "..");
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 4 }), fc.array(part, { maxLength: 5 }), fc.nat(5), (segments, parts, cut) => {
        const compiled = compileGlob(segments.join("/"));
        assert.ok(compiled.ok);
        const matcher = compiled.matcher;
        assert.equal(matcher.matchPath(parts.join("/")), reference(segments, parts), `${segments.join("/")} vs ${parts.join("/")}`);
        let state = matcher.start();
        for (const name of parts.slice(0, Math.min(cut, parts.length))) state = matcher.step(state, name);
        if (!matcher.viable(state) && cut < parts.length) assert.equal(reference(segments, parts), false);
      }),
      { numRuns: fuzzRuns(400) },
    );
  });
});

for (const [name, make] of worldMakers()) {
  describe(`read_file and list_directory: ${name}`, () => {
    it("reads a whole file, a line range, and refuses a range past the end", async () => {
      const world = make();
      world.file("ws/notes.txt", "one\ntwo\nthree\nfour\n");
      const whole = await call(world, "read_file", { path: "notes.txt" });
      assert.equal(whole.ok, true);
      assert.equal(whole.output, "one\ntwo\nthree\nfour\n");
      assert.equal(whole.summary, 'read_file "notes.txt": 4 lines (19 bytes)');
      const range = await call(world, "read_file", { path: "notes.txt", start_line: 2, end_line: 3 });
      assert.equal(range.output, "two\nthree\n[Lines 2–3.]");
      const tail = await call(world, "read_file", { path: "notes.txt", start_line: 3 });
      assert.equal(tail.output, "three\nfour\n[Lines 3–4; the file has 4 lines.]");
      const past = await call(world, "read_file", { path: "notes.txt", start_line: 9 });
      assert.equal(past.ok, false);
      assert.match(past.output, /past the end of the file \(4 lines\)/);
      assert.equal((await call(world, "read_file", { path: "notes.txt", start_line: 3, end_line: 2 })).ok, false);
    });

    it("refuses binary files, FIFOs (without blocking), directories, missing files and escapes", async () => {
      const world = make();
      world.file("ws/blob.bin", new Uint8Array([1, 2, 0, 4]));
      world.fifo("ws/pipe");
      world.dir("ws/dir");
      world.file("outside/secret.txt", "secret");
      world.link("../outside/secret.txt", "ws/escape.txt");
      const cases: [string, RegExp][] = [
        ["blob.bin", /binary file/],
        ["pipe", /not a regular file/],
        ["dir", /not a regular file|is a directory/],
        ["missing.txt", /not found/],
        ["escape.txt", /refused \(outside_workspace\)/],
        ["../outside/secret.txt", /refused \(outside_workspace\)/],
      ];
      for (const [path, summary] of cases) {
        const result = await call(world, "read_file", { path });
        assert.equal(result.ok, false, path);
        assert.match(result.summary, summary, path);
        assert.ok(!result.output.includes("secret"), path);
      }
    });

    it("stops a large file at the output limit on a line boundary and continues from start_line", async () => {
      const world = make();
      const lines = Array.from({ length: 5000 }, (_, i) => `line ${i + 1} ${"x".repeat(40)}`);
      world.file("ws/big.txt", `${lines.join("\n")}\n`);
      const first = await call(world, "read_file", { path: "big.txt" });
      assertBounded(first);
      const next = Number(/continue with start_line=(\d+)/.exec(first.output)?.[1]);
      assert.ok(next > 1000 && next < 5000, first.output.slice(-200));
      assert.ok(first.output.includes(`${lines[next - 2]}\n[Output limit`), "the last shown line is whole");
      assert.match(first.summary, /, truncated$/);
      const second = await call(world, "read_file", { path: "big.txt", start_line: next, end_line: next + 1 });
      assert.equal(second.output, `${lines[next - 1]}\n${lines[next]}\n[Lines ${next}–${next + 1}.]`);
      world.file("ws/one-line.txt", "y".repeat(200_000));
      const single = await call(world, "read_file", { path: "one-line.txt" });
      assertBounded(single);
      assert.match(single.output, /Line 1 is longer than the output limit/);
    });

    it("redacts known secrets and credential-shaped tokens from file text, never echoing it in the summary", async () => {
      const world = make();
      world.file("ws/.env", `KEY=${SECRET}\nTOKEN=sk-proj-abcdefghijklmnopqrstuvwx\n`);
      const result = await call(world, "read_file", { path: ".env" }, { secrets: [SECRET] });
      assert.equal(result.output, "KEY=[redacted]\nTOKEN=[redacted]\n");
      assert.ok(!result.summary.includes("KEY="));
    });

    it("lists a directory sorted, with kinds marked and nothing followed", async () => {
      const world = make();
      world.file("ws/b.txt", "b");
      world.dir("ws/a-dir");
      world.link("b.txt", "ws/c-link");
      world.fifo("ws/d-pipe");
      world.file("ws/line\nbreak", "x");
      const result = await call(world, "list_directory", {});
      assert.equal(result.ok, true);
      const [entries, tally] = [result.output.split("\n").slice(0, -1), result.output.split("\n").at(-1)!];
      assert.deepEqual(entries, ["a-dir/", "b.txt", "c-link@", "d-pipe|", '"line\\nbreak"']);
      assert.match(tally, /^\[5 entries in the workspace root: 1 directory, 2 files, 1 symlink, 1 other\./);
      assert.equal(result.summary, 'list_directory ".": 5 entries');
      assert.match((await call(world, "list_directory", { path: "b.txt" })).summary, /not a directory/);
      assert.match((await call(world, "list_directory", { path: ".." })).summary, /refused/);
    });
  });

  describe(`glob, grep, write_file and edit_file: ${name}`, () => {
    function tree(world: World): void {
      world.file("ws/src/a.ts", "const x = 1;\nfunction foo() {}\n");
      world.file("ws/src/deep/b.ts", "// FOO here\r\nlet y;\n");
      world.file("ws/src/c.js", "foo();\n");
      world.file("ws/.git/hooks/x.ts", "foo");
      world.file("ws/bin.dat", new Uint8Array([102, 111, 111, 0, 1]));
      world.file("ws/.mc/secret.ts", "foo");
      world.file("outside/o.ts", "foo");
      world.link("src", "ws/linked");
      world.link("../outside", "ws/escape");
    }

    it("glob finds matches below the path, skipping .git, MC_HOME and symlinked directories", async () => {
      const world = make();
      tree(world);
      const context = { home: `${world.workspace}/.mc` };
      const all = await invokeTool(tool("glob"), { pattern: "**/*.ts" }, world.context(context));
      assert.equal(all.ok, true);
      assert.deepEqual(all.output.split("\n").slice(0, -1), ["src/a.ts", "src/deep/b.ts"]);
      assert.equal(all.summary, 'glob "**/*.ts": 2 matches');
      const top = await invokeTool(tool("glob"), { pattern: "*" }, world.context(context));
      assert.deepEqual(top.output.split("\n").slice(0, -1), ["bin.dat", "escape", "linked", "src/"]);
      const scoped = await call(world, "glob", { pattern: "*.{ts,js}", path: "src" });
      assert.deepEqual(scoped.output.split("\n").slice(0, -1), ["src/a.ts", "src/c.js"]);
      assert.equal((await call(world, "glob", { pattern: "../*" })).ok, false);
      assert.match((await call(world, "glob", { pattern: "*", path: "escape" })).summary, /refused \(outside_workspace\)/);
    });

    it("grep matches regexes, literals, case-insensitively and through a file filter", async () => {
      const world = make();
      tree(world);
      const context = world.context({ home: `${world.workspace}/.mc` });
      const run = (args: Record<string, unknown>) => invokeTool(tool("grep"), args, context);
      const regex = await run({ pattern: "^foo\\(\\);$" });
      assert.deepEqual(regex.output.split("\n").filter((l) => !l.startsWith("[")), ["src/c.js:1: foo();"]);
      const literal = await run({ pattern: "foo()", literal: true });
      assert.deepEqual(literal.output.split("\n").filter((l) => !l.startsWith("[")), ["src/a.ts:2: function foo() {}", "src/c.js:1: foo();"]);
      const folded = await run({ pattern: "foo", ignore_case: true, glob: "*.ts" });
      assert.deepEqual(folded.output.split("\n").filter((l) => !l.startsWith("[")), ["src/a.ts:2: function foo() {}", "src/deep/b.ts:1: // FOO here"]);
      assert.equal(folded.summary, 'grep "foo" (files "*.ts"): 2 matches in 2 files');
      const all = await run({ pattern: "foo" });
      assert.match(all.output, /\[1 binary file skipped\.\]/);
      assert.ok(!/\.git|\.mc|outside|linked|escape/.test(all.output.split("\n").filter((l) => !l.startsWith("[")).join("\n")));
      const single = await run({ pattern: "let", path: "src/deep/b.ts" });
      assert.deepEqual(single.output.split("\n")[0], "src/deep/b.ts:2: let y;");
    });

    it("grep refuses invalid and unsupported patterns as data", async () => {
      const world = make();
      tree(world);
      for (const pattern of ["(a", "a(?=b)", "(a)\\1"]) {
        const result = await call(world, "grep", { pattern });
        assert.equal(result.ok, false, pattern);
        assert.match(result.output, /^Invalid regular expression/);
        assert.match(result.summary, /invalid pattern$/);
      }
      assert.equal((await call(world, "grep", { pattern: "x", glob: "/abs" })).ok, false);
      assert.match((await call(world, "grep", { pattern: "x", path: "escape" })).summary, /refused/);
    });

    // V8's backtracking engine would not come back from these within the tool's own 15 s budget; RE2
    // searches every line to the end, so the result is complete (no "[Stopped after" note) with no
    // match. The time it takes is measured by bench/hostile-inputs.mjs, never asserted here.
    it("grep searches to the end on patterns that make backtracking engines hang", async () => {
      const world = make();
      world.file("ws/long.txt", `${"a".repeat(100_000)}\n`.repeat(5));
      for (const pattern of ["(a*)*b", "a*a*a*a*a*b", "(a|aa)+b$", ".*a.*a.*a.*b"]) {
        const result = await call(world, "grep", { pattern });
        assert.equal(result.ok, true, pattern);
        assert.match(result.summary, /: 0 matches in 0 files$/, pattern);
        assert.ok(!result.output.includes("[Stopped after"), `${pattern}: ${result.output.slice(-200)}`);
      }
    });

    it("write_file creates parents, overwrites atomically keeping the mode, and leaves no temporary file", async () => {
      const world = make();
      const created = await call(world, "write_file", { path: "pkg/sub/new.txt", content: "hello\nworld\n" });
      assert.equal(created.ok, true);
      assert.equal(created.summary, 'write_file "pkg/sub/new.txt": created (12 bytes)');
      assert.equal(await text(world, "ws/pkg/sub/new.txt"), "hello\nworld\n");
      world.file("ws/run.sh", "old");
      world.chmod("ws/run.sh", 0o750);
      const path = `${world.workspace}/run.sh`;
      const overwritten = await call(world, "write_file", { path: "run.sh", content: "#!/bin/sh\n" });
      assert.equal(overwritten.summary, 'write_file "run.sh": overwrote (10 bytes)');
      assert.equal(await text(world, "ws/run.sh"), "#!/bin/sh\n");
      assert.equal((await world.fs.lstat(path)).mode & 0o777, 0o750);
      const names = (await world.fs.readDir(world.workspace)).map((entry) => entry.name).sort();
      assert.deepEqual(names, ["pkg", "run.sh"]);
    });

    it("write_file follows an inside symlink to its target and refuses protected and escaping paths", async () => {
      const world = make();
      world.file("ws/real.txt", "r");
      world.link("real.txt", "ws/alias.txt");
      world.file("ws/.git/config", "[core]");
      world.file("outside/x.txt", "x");
      world.link("../outside", "ws/escape");
      world.fifo("ws/pipe");
      assert.equal((await call(world, "write_file", { path: "alias.txt", content: "new" })).ok, true);
      assert.equal(await text(world, "ws/real.txt"), "new");
      assert.equal((await world.fs.lstat(`${world.workspace}/alias.txt`)).kind, "symlink");
      const refusals: [string, RegExp][] = [
        [".git/config", /refused \(protected\)/],
        [".magi-code/settings.jsonc", /refused \(protected\)/],
        ["escape/x.txt", /refused \(outside_workspace\)/],
        ["../outside/x.txt", /refused \(outside_workspace\)/],
        ["pipe", /not a regular file/],
        [".", /not a regular file/],
      ];
      for (const [path, summary] of refusals) {
        const result = await call(world, "write_file", { path, content: "pwned" });
        assert.equal(result.ok, false, path);
        assert.match(result.summary, summary, path);
      }
      assert.equal(await text(world, "ws/.git/config"), "[core]");
      assert.equal(await text(world, "outside/x.txt"), "x");
    });

    it("edit_file replaces exactly one occurrence and reports no match, ambiguity and bad input as data", async () => {
      const world = make();
      world.file("ws/a.txt", "\uFEFFalpha beta\r\ngamma beta\r\n");
      const edit = (args: Record<string, unknown>) => call(world, "edit_file", { path: "a.txt", ...args });
      const once = await edit({ old_text: "alpha", new_text: "ALPHA" });
      assert.equal(once.ok, true);
      assert.equal(once.summary, 'edit_file "a.txt": replaced 1 occurrence');
      assert.equal(await text(world, "ws/a.txt"), "\uFEFFALPHA beta\r\ngamma beta\r\n");
      const ambiguous = await edit({ old_text: "beta", new_text: "B" });
      assert.equal(ambiguous.ok, false);
      assert.equal(ambiguous.summary, 'edit_file "a.txt": ambiguous (2 occurrences)');
      const all = await edit({ old_text: "beta", new_text: "B", replace_all: true });
      assert.equal(all.summary, 'edit_file "a.txt": replaced 2 occurrences');
      assert.equal(await text(world, "ws/a.txt"), "\uFEFFALPHA B\r\ngamma B\r\n");
      assert.match((await edit({ old_text: "B\ngamma", new_text: "x" })).output, /CRLF/);
      assert.match((await edit({ old_text: "key=[redacted]", new_text: "x" })).output, /hidden from you/);
      assert.match((await edit({ old_text: "  gamma  ", new_text: "x" })).output, /whitespace/);
      assert.equal((await edit({ old_text: "nothing", new_text: "x" })).summary, 'edit_file "a.txt": no match');
      assert.equal((await edit({ old_text: "B", new_text: "B" })).ok, false);
      world.file("ws/latin1.txt", new Uint8Array([0x63, 0x61, 0x66, 0xe9]));
      assert.match((await call(world, "edit_file", { path: "latin1.txt", old_text: "caf", new_text: "x" })).summary, /not valid UTF-8/);
      assert.match((await call(world, "edit_file", { path: "missing.txt", old_text: "a", new_text: "b" })).summary, /not found/);
      assert.match((await call(world, "edit_file", { path: ".git/config", old_text: "a", new_text: "b" })).summary, /protected/);
      assert.equal(await text(world, "ws/latin1.txt"), "caf\uFFFD");
    });
  });
}

describe("bounds for every tool", () => {
  it("list_directory, glob and grep stop at their entry, match and output bounds", async () => {
    const world = memoryWorld();
    for (let i = 0; i < 1100; i++) world.file(`ws/many/f${String(i).padStart(4, "0")}.txt`, `match ${i}\n`.repeat(2));
    const listing = await call(world, "list_directory", { path: "many" });
    assert.equal(listing.output.split("\n").length, 1001);
    assert.match(listing.output, /only the first 1,000 are listed/);
    const globbed = await call(world, "glob", { pattern: "many/*.txt" });
    assert.match(globbed.output, /\[Stopped at 1,000 matches/);
    assert.match(globbed.summary, /\(incomplete\)$/);
    const grepped = await call(world, "grep", { pattern: "match" });
    assert.match(grepped.output, /\[Stopped at 500 matches/);
    for (const result of [listing, globbed, grepped]) assertBounded(result);
  });

  it("glob, grep and read_file stop and say so when the call is cancelled", async () => {
    const world = memoryWorld();
    world.file("ws/a/b.txt", "match\n");
    const controller = new AbortController();
    controller.abort();
    for (const [name, args] of [["glob", { pattern: "**" }], ["grep", { pattern: "match" }]] as const) {
      const result = await call(world, name, args, { signal: controller.signal });
      assert.equal(result.ok, false, name);
      assert.match(result.output, /\[Cancelled\.\]$/, name);
      assert.match(result.summary, /\(incomplete\)$/, name);
    }
    const read = await call(world, "read_file", { path: "a/b.txt" }, { signal: controller.signal });
    assert.equal(read.ok, false);
    assert.match(read.output, /\[Cancelled before the read finished\.\]$/);
  });

  it("edit_file: after an edit of a once-occurring old_text, the file holds the new text exactly once (property)", async () => {
    const body = fc.array(fc.constantFrom("a", "b", "\n"), { maxLength: 40 }).map((c) => c.join(""));
    await fc.assert(
      fc.asyncProperty(body, fc.nat(40), fc.integer({ min: 1, max: 8 }), fc.string({ unit: fc.constantFrom("a", "b", "\n"), maxLength: 6 }), async (content, start, length, tail) => {
        const old = content.slice(start, start + length);
        const first = content.indexOf(old);
        fc.pre(old.length > 0 && first !== -1 && content.indexOf(old, first + 1) === -1);
        const world = memoryWorld();
        world.file("ws/f.txt", content);
        const replacement = `Z${tail}`;
        const result = await call(world, "edit_file", { path: "f.txt", old_text: old, new_text: replacement });
        assert.equal(result.ok, true, result.output);
        const after = await text(world, "ws/f.txt");
        assert.equal(after, content.slice(0, first) + replacement + content.slice(first + old.length));
        assert.equal(after.split(replacement).length - 1, 1);
      }),
      { numRuns: fuzzRuns(200) },
    );
  });
});

describe("prepareCall() and approvalSummary()", () => {
  const Params = exactObject({ n: v.number() });
  const rogue = (output: string, summary: string, fail = false): AnyTool => ({
    name: "rogue",
    description: "A tool that misbehaves, for testing the safety net.",
    schema: Params as never,
    parameters: {},
    prepare: () =>
      Promise.resolve({
        action: `${SECRET} ${"d".repeat(500)}`,
        tooLongToShow: "too long",
        mustAsk: false,
        run: () => (fail ? Promise.reject(new Error(`boom at /etc/shadow ${SECRET}`)) : Promise.resolve({ ok: true, output, summary })),
      }),
  });
  const prepared = async (t: AnyTool, args: unknown, context: ToolContext): Promise<PreparedCall> => {
    const call = await prepareCall(t, args, context);
    assert.ok(isPrepared(call), JSON.stringify(call));
    return call;
  };

  it("turns invalid arguments into an ok:false result naming the problem", async () => {
    const world = memoryWorld();
    for (const args of [{ path: 5 }, { path: "a", extra: 1 }, [], null, "a.txt"]) {
      const result = await call(world, "read_file", args);
      assert.equal(result.ok, false);
      assert.match(result.output, /^Invalid arguments for read_file: /);
      assert.equal(result.summary, "read_file: invalid arguments");
    }
    assert.equal((await call(world, "shell", { command: "true", timeout_seconds: 601 })).summary, "shell: invalid arguments");
  });

  it("bounds, redacts and single-lines whatever a tool returns, and hides thrown messages", async () => {
    const world = memoryWorld();
    const context = world.context({ secrets: [SECRET] });
    const padding = "p".repeat(MAX_OUTPUT_BYTES - 10);
    const loud = await invokeTool(rogue(`${padding}${SECRET}${"q".repeat(100_000)}`, `ran\n${SECRET}\n${"s".repeat(3000)}`), { n: 1 }, context);
    assertBounded(loud);
    assert.ok(!loud.output.includes(SECRET.slice(0, 12)) && !loud.summary.includes(SECRET));
    assert.match(loud.output, /\[output truncated at 64 KiB\]$/);
    const thrown = await invokeTool(rogue("", "", true), { n: 1 }, context);
    assert.deepEqual(thrown, { ok: false, output: "rogue failed: unexpected error.", summary: "rogue: failed (unexpected error)" });
    // An action holding a secret is not offered at all: a prompt may neither show it nor hide part of itself.
    const secretive = await prepared(rogue("", ""), { n: 1 }, context);
    assert.equal(approvalSummary(secretive, [SECRET]), null);
    assert.match(secretive.tooLongToShow, /shaped like a credential/);
  });

  it("approval summaries name the resolved call, without file contents", async () => {
    const world = memoryWorld();
    world.file("ws/a.txt", "one two two");
    const context = world.context();
    const content = "TOP-SECRET-CONTENT ".repeat(1000);
    const shown = async (name: string, args: unknown) => approvalSummary(await prepared(tool(name), args, context), []);
    assert.equal(await shown("write_file", { path: "new/../b.txt", content }), 'Write 19,000 bytes to "b.txt", creating a new file');
    assert.equal(await shown("write_file", { path: "./a.txt", content: "x" }), 'Write 1 byte to "a.txt", replacing the whole existing file');
    assert.equal(await shown("edit_file", { path: "a.txt", old_text: "two", new_text: "2", replace_all: true }), 'Edit "a.txt": replace 2 occurrences (11 bytes before, 7 bytes after)');
    assert.equal(await shown("read_file", { path: "a.txt", start_line: 5 }), 'Read "a.txt" lines 5–end');
    assert.equal(await shown("shell", { command: "npm test" }), 'Run "npm test" in the workspace (timeout 120 s)');
    assert.equal(await shown("list_directory", {}), 'List "."');
    assert.equal(await shown("glob", { pattern: "*.ts", path: "x/.." }), 'Find "*.ts" in "."');
    assert.equal(await shown("grep", { pattern: "a", literal: true, glob: "*.md" }), 'Search for "a", literal in "." (files "*.md")');
  });
});
