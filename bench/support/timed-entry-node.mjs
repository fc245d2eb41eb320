// A stand-in for dist/runtime/node.js that stamps performance.now() (ms since
// the process's time origin) after each group of imports, around the startup
// work and at the first stdout write (the initialize response), then prints
// the stamps as one JSON line on stderr at exit. The imports are dynamic and
// in dependency order, so each stamp is the incremental cost of that group.
// Used by bench/startup-breakdown.mjs; never by the timed cold-start runs.
const stamps = { bootstrap: performance.nodeTiming.bootstrapComplete, entry: performance.now() };
const dist = new URL("../../dist/", import.meta.url);
await import("node:child_process");
await import("node:fs/promises");
await import("node:net");
await import("node:tty");
stamps.builtins = performance.now();
await import("valibot");
stamps.valibot = performance.now();
await import("jsonc-parser");
stamps.jsonc = performance.now();
const { main } = await import(new URL("src/cli.js", dist).href);
stamps.own = performance.now();
const { createNodeRuntime } = await import(new URL("runtime/node-runtime.js", dist).href);
stamps.adapter = performance.now();

const subtle = globalThis.crypto.subtle;
const digest = subtle.digest.bind(subtle);
subtle.digest = async (...args) => {
  stamps.digestStart ??= performance.now();
  const result = await digest(...args);
  stamps.digestEnd ??= performance.now();
  return result;
};
const write = process.stdout.write;
process.stdout.write = function (...args) {
  stamps.response ??= performance.now();
  return write.apply(this, args);
};
const runtime = createNodeRuntime();
stamps.runtimeCreated = performance.now();
const code = await main(runtime);
process.stderr.write(`${JSON.stringify(stamps)}\n`, () => runtime.exit(code));
