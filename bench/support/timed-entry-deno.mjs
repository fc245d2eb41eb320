// The Deno counterpart of timed-entry-node.mjs: stamps performance.now() after
// each import group, around the digest and at the first stdout write, and
// prints them as one JSON line on stderr at exit. Deno loads a module's static
// graph before running it, so the imports are dynamic to be timed one by one.
const stamps = { entry: performance.now() };
await import("valibot");
stamps.valibot = performance.now();
await import("jsonc-parser");
stamps.jsonc = performance.now();
const { main } = await import("../../src/cli.ts");
stamps.own = performance.now();
const { createDenoRuntime } = await import("../../runtime/deno-runtime.ts");
stamps.adapter = performance.now();

const subtle = globalThis.crypto.subtle;
const digest = subtle.digest.bind(subtle);
subtle.digest = async (...args) => {
  stamps.digestStart ??= performance.now();
  const result = await digest(...args);
  stamps.digestEnd ??= performance.now();
  return result;
};
const write = Deno.stdout.write.bind(Deno.stdout);
Deno.stdout.write = (bytes) => {
  stamps.response ??= performance.now();
  return write(bytes);
};
const runtime = createDenoRuntime();
stamps.runtimeCreated = performance.now();
const code = await main(runtime);
await Deno.stderr.write(new TextEncoder().encode(`${JSON.stringify(stamps)}\n`));
runtime.exit(code);
