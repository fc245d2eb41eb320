#!/usr/bin/env node
// The test command behind `npm test`: type-check and build with tsc, bundle the
// Node entry point, build the Node single executable, type-check the Deno adapter with `deno check`, verify the
// published settings and wire schemas, then run every test file under Node (compiled,
// node:test) and under Deno (`deno task test`, from source). Modes: (none) = everything, `node`, `deno`,
// `fuzz` (both runtimes with FUZZ_RUNS raised for long property runs).
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const mode = process.argv[2] ?? "all";
const bin = (name) => join(root, "node_modules", ".bin", name);

function run(command, args, { capture = false, env = {} } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["ignore", capture ? "pipe" : "inherit", capture ? "pipe" : "inherit"],
    });
    let output = "";
    if (capture) {
      for (const stream of [child.stdout, child.stderr]) {
        stream.on("data", (chunk) => {
          output += chunk;
          (stream === child.stdout ? process.stdout : process.stderr).write(chunk);
        });
      }
    }
    child.on("close", (code) => resolve({ code: code ?? 1, output }));
  });
}

function testFiles(directory) {
  const out = [];
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) out.push(...testFiles(path));
    else if (entry.name.endsWith(".test.js") || entry.name.endsWith(".test.ts")) out.push(path);
  }
  return out.sort();
}

const counts = { passed: 0, failed: 0 };
let failedSteps = 0;

async function step(name, command, args, options) {
  process.stdout.write(`\n== ${name}\n`);
  const result = await run(command, args, options);
  if (result.code !== 0) {
    failedSteps++;
    process.stdout.write(`== ${name}: failed (exit ${result.code})\n`);
  }
  return result;
}

const env = mode === "fuzz" ? { FUZZ_RUNS: process.env.FUZZ_RUNS ?? "20000" } : {};

const build = await step("tsc build", bin("tsc"), ["-p", "tsconfig.json"]);
if (build.code !== 0) process.exit(1);
const bundle = await step("bundle the Node entry point", process.execPath, ["scripts/bundle.mjs"]);
if (bundle.code !== 0) process.exit(1);
// The Node single executable (Linux x64; elsewhere the script says it skipped). Before the tests, so
// tests/support/processes.ts adds it to the end-to-end launchers and tests/sea.test.ts finds it fresh.
await step("build the Node single executable (dist/magi-code-linux-x64)", process.execPath, ["scripts/build-sea.mjs"]);
await step("deno task check", bin("deno"), ["task", "check"]);
await step("settings schema is current", process.execPath, ["scripts/gen-settings-schema.mjs", "--check"]);
await step("wire schemas (docs/schema/) are current", process.execPath, ["scripts/gen-wire-schemas.mjs", "--check"]);
await step("Deno's jsonc-parser bundle is current", process.execPath, ["scripts/vendor-jsonc.mjs", "--check"]);

if (mode !== "deno") {
  const files = testFiles(join(root, "dist", "tests")).map((file) => relative(root, file));
  const node = await step("tests under Node", process.execPath, ["--test", "--test-reporter=spec", ...files], {
    capture: true,
    env,
  });
  counts.passed += Number(/^\S* ?pass (\d+)$/m.exec(node.output)?.[1] ?? 0);
  counts.failed += Number(/^\S* ?fail (\d+)$/m.exec(node.output)?.[1] ?? 0);
}
if (mode !== "node") {
  // Through the deno.json task, so the task a contributor runs is the one CI runs (tests/deno-tasks.test.ts).
  const deno = await step("tests under Deno (deno task test)", bin("deno"), ["task", "test"], {
    capture: true,
    env: { ...env, NO_COLOR: "1" },
  });
  const summary = /(\d+) passed (?:\(\d+ steps?\) )?\| (\d+) failed/.exec(deno.output);
  counts.passed += Number(summary?.[1] ?? 0);
  counts.failed += Number(summary?.[2] ?? 0);
}

process.stdout.write(`\nTests: ${counts.passed} passed, ${counts.failed} failed\n`);
process.exit(failedSteps === 0 && counts.failed === 0 && counts.passed > 0 ? 0 : 1);
