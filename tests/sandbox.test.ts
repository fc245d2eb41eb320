/**
 * The Code Mode sandbox (`src/sandbox/`) against the real host process,
 * started from the real entry points the way a child starts it (the npm
 * bundle under Node, `deno run` of the Deno entry with no permission flag,
 * the Node single executable where it is built), through this runtime's
 * own adapter: escape attempts find nothing to escape to; huge strings,
 * deep recursion, spinning and a flood of `console.log` end within their
 * bounds; an allocation loop that catches its own out-of-memory errors is
 * killed by the child's wall clock and the process table proves the host
 * gone; a host that writes a malformed frame is killed and the call fails.
 */

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { createNodeRuntime } from "../runtime/node-runtime.ts";
import type { Runtime, Subprocess } from "../src/host/runtime.ts";
import { SANDBOX_LIMITS, type SandboxLimits } from "../src/sandbox/limits.ts";
import { type HostCommand, type ProgramOutcome, type ProgramRequest, runProgram } from "../src/sandbox/program.ts";
import { guarded } from "./support/hang-guard.ts";
import { denoBinary, nodeBinary, repoRoot, seaBinary, seaHost } from "./support/processes.ts";

const isDeno = "Deno" in globalThis;
// A computed specifier keeps tsc (which builds the Node side) away from the Deno-only adapter.
const denoAdapter = "../runtime/deno-runtime.ts";
const base: Runtime = isDeno ? (await import(denoAdapter) as { createDenoRuntime(): Runtime }).createDenoRuntime() : createNodeRuntime();

const root = repoRoot();
const hosts: [string, HostCommand][] = [
  ["node", { command: nodeBinary(), args: [join(root, "dist", "magi-code.cjs")] }],
  ["deno", { command: denoBinary(), args: ["run", "--quiet", "--no-prompt", join(root, "runtime", "deno.ts")] }],
];
if (!isDeno && seaHost && existsSync(seaBinary())) hosts.push(["sea", { command: seaBinary(), args: [] }]);

/** Runs `source` in a host started by `host`; returns the outcome, the nested calls and the host's pid. */
async function run(host: HostCommand, source: string, options: { limits?: Partial<SandboxLimits>; tools?: string[]; signal?: AbortSignal; call?: ProgramRequest["call"] } = {}) {
  const spawned: Subprocess[] = [];
  const environments: Readonly<Record<string, string>>[] = [];
  // The real adapter, only watched: the test needs the host's pid to look for it afterwards.
  const runtime: Runtime = { ...base, spawn: (command, spawnOptions) => {
    const child = base.spawn(command, spawnOptions);
    spawned.push(child);
    environments.push(spawnOptions.env ?? {});
    return child;
  } };
  const calls: [string, string][] = [];
  const outcome: ProgramOutcome = await guarded(runProgram({
    runtime,
    host,
    cwd: root,
    source,
    tools: options.tools ?? ["read_file"],
    limits: { ...SANDBOX_LIMITS, ...options.limits },
    signal: options.signal ?? new AbortController().signal,
    call: (name, args, ended) => {
      calls.push([name, args]);
      if (options.call !== undefined) return options.call(name, args, ended);
      return Promise.resolve(name === "read_file" ? { ok: true, output: `contents of ${JSON.parse(args).path}` } : { ok: false, output: "denied" });
    },
  }), "the program");
  assert.equal(spawned.length, 1);
  assert.equal(base.isProcessAlive(spawned[0]!.pid), false, "the host process is gone");
  return { outcome, calls, env: environments[0]! };
}

const ESCAPES = `
const names = ["fetch", "require", "process", "Deno", "WebAssembly", "setTimeout", "setInterval", "XMLHttpRequest", "Bun", "std", "os", "module", "global", "__mc_call"];
const found = names.filter((name) => name in globalThis || typeof globalThis[name] !== "undefined");
const viaFunction = Function("return this")();
const sameGlobal = viaFunction === globalThis && (0, eval)("this") === globalThis;
let importFailed = false;
try { await import("node:fs"); } catch { importFailed = true; }
let evalImportFailed = false;
try { await (0, eval)("import('./x.js')"); } catch { evalImportFailed = true; }
Object.prototype.polluted = "yes";
Object.prototype.toJSON = function () { return { path: "/etc/passwd" }; };
let redefine = "allowed";
try { Object.defineProperty(tools, "shell", { value: async () => "pwned" }); } catch { redefine = "refused"; }
tools.read_file = async () => "replaced";
delete tools.read_file;
const frozen = Object.isFrozen(tools) && Object.isFrozen(tools.read_file) && Object.getPrototypeOf(tools) === null;
const viaProto = await tools.read_file({ path: "a.txt" });
delete Object.prototype.toJSON;
return { found, sameGlobal, importFailed, evalImportFailed, redefine, frozen, shell: typeof tools.shell, viaProto, keys: Object.keys(tools) };
`;

for (const [name, host] of hosts) {
  describe(`${name}: the Code Mode sandbox host`, () => {
    it("a program finds no fetch, require, process, Deno, WebAssembly, timers or modules, and cannot change or widen tools", async () => {
      const { outcome, calls } = await run(host, ESCAPES);
      assert.equal(outcome.kind, "returned", JSON.stringify(outcome));
      const value = JSON.parse((outcome as { text: string }).text);
      assert.deepEqual(value.found, []);
      assert.equal(value.sameGlobal, true);
      assert.equal(value.importFailed, true);
      assert.equal(value.evalImportFailed, true);
      assert.equal(value.redefine, "refused");
      assert.equal(value.frozen, true);
      assert.equal(value.shell, "undefined");
      assert.deepEqual(value.keys, ["read_file"]);
      // The polluted toJSON shapes what the guest sends, never what the child accepts: the call carries
      // whatever JSON text the guest made, which the child validates like any model-written call.
      assert.deepEqual(calls, [["read_file", JSON.stringify({ path: "/etc/passwd" })]]);
      assert.equal(value.viaProto, "contents of /etc/passwd");
    });

    it("a huge string and deep recursion throw inside the program (heap and stack bounds) and the host answers", async () => {
      const huge = await run(host, "return 'x'.repeat(1e9);");
      assert.deepEqual([huge.outcome.kind, (huge.outcome as { text: string }).text], ["threw", `The program ran out of memory (its heap is ${SANDBOX_LIMITS.memoryBytes} bytes).`]);
      const deep = await run(host, "function f(n) { return f(n + 1) + 1; } try { f(0); } catch (error) { return String(error); }");
      assert.deepEqual([deep.outcome.kind, (deep.outcome as { text: string }).text], ["returned", "InternalError: stack overflow"]);
      const uncaught = await run(host, "const f = (n) => [f(n + 1)]; f(0);");
      assert.equal(uncaught.outcome.kind, "threw");
    });

    it("while(true){} is stopped by the CPU budget, and by the child's wall clock where the budget is out of reach", async () => {
      const cpu = await run(host, "while (true) {}", { limits: { cpuMs: 300 } });
      assert.deepEqual([cpu.outcome.kind, (cpu.outcome as { text: string }).text], ["threw", "The program used more than its 300 ms of CPU time and was stopped."]);
      const wall = await run(host, "while (true) {}", { limits: { cpuMs: 1e9, wallMs: 3_000 } });
      assert.equal(wall.outcome.kind, "deadline");
    });

    it("an allocation loop that swallows its out-of-memory errors is killed at the wall-clock deadline, and the host is gone", async () => {
      const source = "let kept = []; for (;;) { try { kept.push(new Array(4096).fill({ n: kept.length })); } catch { kept = []; } }";
      const { outcome } = await run(host, source, { limits: { cpuMs: 1e9, wallMs: 3_000, memoryBytes: 16 * 1_048_576 } });
      assert.equal(outcome.kind, "deadline");
    });

    it("a flood of console.log keeps at most logBytes of output and says how much it dropped", async () => {
      const { outcome } = await run(host, "for (let i = 0; i < 20000; i++) console.log('line', i, { i }); return 'end';", { limits: { logBytes: 1_000 } });
      assert.equal(outcome.kind, "returned");
      const logs = (outcome as { logs: string }).logs;
      assert.match(logs, /^line 0 \{"i":0\}\n/);
      assert.match(logs, /\(\d+ more characters of console\.log output were dropped\)\n$/);
      assert.ok(new TextEncoder().encode(logs).length < 1_100);
    });

    it("the turn's cancellation kills a spinning host", async () => {
      const controller = new AbortController();
      const cancelled = run(host, "while (true) {}", { limits: { cpuMs: 1e9, wallMs: 600_000 }, signal: controller.signal });
      setTimeout(() => controller.abort(), 500);
      assert.equal((await cancelled).outcome.kind, "cancelled");
    });
  });
}

describe("how the host is started", () => {
  it("the host gets no variable but a runtime's start-up ones, and DENO_NO_UPDATE_CHECK=1", async () => {
    const { env } = await run(hosts[0]![1], "return 1");
    const allowed = new Set(["HOME", "TMPDIR", "TMP", "TEMP", "DENO_DIR", "XDG_CACHE_HOME", "NODE_COMPILE_CACHE", "SYSTEMROOT", "LANG", "DENO_NO_UPDATE_CHECK"]);
    assert.deepEqual(Object.keys(env).filter((name) => !allowed.has(name)), []);
    // Deno's CLI would otherwise ask dl.deno.land for a newer Deno: a network request from the sandbox's process.
    assert.equal(env.DENO_NO_UPDATE_CHECK, "1");
  });
});

describe("the child's side of the host protocol", () => {
  it("a host that writes a frame longer than FRAME_BYTES is killed and the call fails as a protocol fault", async () => {
    const script = "process.stdout.write(Buffer.from([0xff, 0xff, 0xff, 0xff])); setInterval(() => {}, 1000);";
    const { outcome } = await run({ command: nodeBinary(), args: ["-e", script] }, "return 1");
    assert.equal(outcome.kind, "protocol");
  });

  it("a stale wait (written before the latest result arrived) does not stop the child's clock: the host is killed at the deadline", async () => {
    // Says call 1 and "waiting, 0 results", then, once the result arrives, repeats the stale wait and runs on forever.
    const script = [
      "const frame = (m) => { const b = Buffer.from(JSON.stringify(m)); const h = Buffer.alloc(4); h.writeUInt32BE(b.length); return Buffer.concat([h, b]); };",
      "let input = Buffer.alloc(0), frames = 0;",
      "process.stdin.on('data', (chunk) => {",
      "  input = Buffer.concat([input, chunk]);",
      "  while (input.length >= 4 && input.length >= 4 + input.readUInt32BE(0)) { input = input.subarray(4 + input.readUInt32BE(0)); if (++frames === 2) process.stdout.write(frame({ type: 'wait', results: 0 })); }",
      "});",
      "process.stdout.write(Buffer.concat([frame({ type: 'call', id: 1, name: 'read_file', args: '{}' }), frame({ type: 'wait', results: 0 })]));",
      "setInterval(() => {}, 1000);",
    ].join("\n");
    const { outcome, calls } = await run({ command: nodeBinary(), args: ["-e", script] }, "return 1", { limits: { wallMs: 2_000 } });
    assert.equal(outcome.kind, "deadline");
    assert.equal(calls.length, 1);
  });

  it("a nested call still running when the program ends is told so through its signal, and the program's end waits for it", async () => {
    // The host makes call 1, waits until the child has started it (the marker file), then ends the program.
    const marker = join(mkdtempSync(join(tmpdir(), "magi-sandbox-")), "started");
    const script = [
      "const fs = require('fs');",
      "const frame = (m) => { const b = Buffer.from(JSON.stringify(m)); const h = Buffer.alloc(4); h.writeUInt32BE(b.length); return Buffer.concat([h, b]); };",
      "process.stdout.write(frame({ type: 'call', id: 1, name: 'shell', args: '{}' }));",
      `const poll = setInterval(() => { if (fs.existsSync(${JSON.stringify(marker)})) { clearInterval(poll); process.stdout.write(frame({ type: 'done', status: 'returned', text: 'left it running', logs: '' })); } }, 10);`,
      "setInterval(() => {}, 1000);",
    ].join("\n");
    let cancelled = false;
    const { outcome } = await run({ command: nodeBinary(), args: ["-e", script] }, "return 1", {
      tools: ["shell"],
      call: (_name, _args, ended) => {
        writeFileSync(marker, "");
        return new Promise((resolve) => ended.addEventListener("abort", () => {
          cancelled = true;
          resolve({ ok: false, output: "cancelled" });
        }, { once: true }));
      },
    });
    assert.deepEqual(outcome, { kind: "returned", text: "left it running", logs: "", calls: 1 });
    assert.equal(cancelled, true);
    rmSync(dirname(marker), { recursive: true, force: true });
  });

  it("a host that names a tool it was not offered is killed before the call runs", async () => {
    const frame = JSON.stringify({ type: "call", id: 1, name: "shell", args: "{}" });
    const script = `const b = Buffer.from(${JSON.stringify(frame)}); const h = Buffer.alloc(4); h.writeUInt32BE(b.length); process.stdout.write(Buffer.concat([h, b])); setInterval(() => {}, 1000);`;
    const { outcome, calls } = await run({ command: nodeBinary(), args: ["-e", script] }, "return 1");
    assert.equal(outcome.kind, "protocol");
    assert.deepEqual(calls, []);
  });
});
