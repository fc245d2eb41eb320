#!/usr/bin/env node
// Seeds a realistic, deterministic session history for benches and manual
// tests:
//
//   node scripts/seed-session.mjs --home <MC_HOME> --cwd <abs path> [--id <session id>]
//        [--bytes 64MiB | --turns N] [--torn] [--seed N]
//
// writes <home>/sessions/<id>.jsonl (0600, created exclusively; sessions dir
// 0700) and prints one summary line. The generator is tests/support/seed.ts,
// imported compiled from dist/ (build first: npx tsc -p tsconfig.json), so
// every record goes through the same schemas as the appender's (`encodeRecord`).
// --bytes fills with turns to just under the target (K/M/G suffixes are
// 1,024-based) within 100,000 lines; --turns writes exactly N turns (default
// 20); --torn appends a partial record without LF; the same --seed (default 1)
// gives the same bytes. Without --id the session id is a UUIDv7 derived from the seed.
import { existsSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const USAGE = "usage: node scripts/seed-session.mjs --home <MC_HOME> --cwd <abs path> [--id <session id>] [--bytes 64MiB | --turns N] [--torn] [--seed N]";

function fail(message) {
  console.error(`seed-session: ${message}`);
  console.error(USAGE);
  process.exit(2);
}

function parseArgs(argv) {
  const flags = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--torn") flags.torn = true;
    else if (arg === "--help" || arg === "-h") {
      console.log(USAGE);
      process.exit(0);
    } else if (/^--(home|cwd|id|bytes|turns|seed)$/.test(arg)) {
      if (i + 1 >= argv.length) fail(`${arg} needs a value`);
      flags[arg.slice(2)] = argv[++i];
    } else if (/^--(home|cwd|id|bytes|turns|seed)=/.test(arg)) {
      const eq = arg.indexOf("=");
      flags[arg.slice(2, eq)] = arg.slice(eq + 1);
    } else fail(`unknown argument ${arg}`);
  }
  return flags;
}

const flags = parseArgs(process.argv.slice(2));
if (flags.home === undefined || flags.cwd === undefined) fail("--home and --cwd are required");
if (!isAbsolute(flags.cwd)) fail("--cwd must be an absolute path");
if (flags.bytes !== undefined && flags.turns !== undefined) fail("give --bytes or --turns, not both");

const compiled = join(ROOT, "dist", "tests", "support", "seed.js");
const adapter = join(ROOT, "dist", "runtime", "node-runtime.js");
if (!existsSync(compiled) || !existsSync(adapter)) fail("dist/ is missing; build first: npx tsc -p tsconfig.json");
const { parseByteSize, seedSession } = await import(pathToFileURL(compiled).href);
const { nodeFileSystem } = await import(pathToFileURL(adapter).href);

const options = { cwd: flags.cwd, torn: flags.torn === true };
if (flags.id !== undefined) {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(flags.id)) fail("--id must match [A-Za-z0-9_-]{1,64}");
  options.sessionId = flags.id;
}
if (flags.seed !== undefined) {
  const seed = Number(flags.seed);
  if (!Number.isSafeInteger(seed)) fail("--seed must be an integer");
  options.seed = seed;
}
if (flags.bytes !== undefined) {
  const bytes = parseByteSize(flags.bytes);
  if (bytes === null) fail("--bytes must be a size such as 67108864, 64MiB or 512K");
  options.targetBytes = bytes;
}
if (flags.turns !== undefined) {
  const turns = Number(flags.turns);
  if (!Number.isSafeInteger(turns) || turns < 0) fail("--turns must be a non-negative integer");
  options.turns = turns;
}

let result;
try {
  result = await seedSession(nodeFileSystem, resolve(flags.home), options);
} catch (error) {
  console.error(`seed-session: ${error?.code === "exists" ? "the session file already exists" : error?.message ?? error}`);
  process.exit(1);
}
const n = (value) => value.toLocaleString("en-US");
console.log(
  `${result.path}: ${n(result.bytes.length)} bytes, ${n(result.lines)} lines, ${n(result.turns)} turns` +
    `${result.torn ? ", torn tail" : ""} (session ${result.sessionId}, seed ${options.seed ?? 1}, cwd ${result.cwd})`,
);
