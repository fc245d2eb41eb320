// Preload for `node --import`: records every module the process loads, ESM
// through a `module.register` load hook (which runs on the hooks thread and
// appends each URL synchronously before the module is handed back, so the log
// is complete whenever the main thread looks at it) and CommonJS through
// Module._load. When the first `initialize` result is written to stdout, a
// marker line is appended, so the log shows what was loaded at that moment.
// The log path comes from MAGI_BENCH_MODULE_LOG. Used only by
// bench/cold-start.mjs for the loaded-module check, never in timed runs.
import { appendFileSync } from "node:fs";
import Module, { register } from "node:module";

const log = process.env.MAGI_BENCH_MODULE_LOG;
if (log !== undefined && log !== "") {
  register(new URL("./module-probe-hooks.mjs", import.meta.url), { data: { log } });

  const originalLoad = Module._load;
  Module._load = function load(request, parent, isMain) {
    let resolved = request;
    try {
      resolved = Module._resolveFilename(request, parent, isMain);
    } catch {
      // Leave the request as written; the real load reports the error.
    }
    appendFileSync(log, `cjs ${resolved}\n`);
    return originalLoad.apply(this, arguments);
  };

  const stdout = process.stdout;
  const originalWrite = stdout.write;
  let marked = false;
  stdout.write = function write(chunk, ...rest) {
    if (!marked) {
      const text = typeof chunk === "string" ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString("utf8");
      if (text.includes('"capabilities"')) {
        marked = true;
        appendFileSync(log, "--- initialize answered ---\n");
      }
    }
    return originalWrite.call(this, chunk, ...rest);
  };
}
