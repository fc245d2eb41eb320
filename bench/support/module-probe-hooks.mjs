// Module hooks registered by module-probe.mjs: logs each ESM load (URL and
// format) before handing the module to the main thread.
import { appendFileSync } from "node:fs";

let log = null;

export function initialize(data) {
  log = data?.log ?? null;
}

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  if (log !== null) appendFileSync(log, `esm ${result.format ?? "?"} ${url}\n`);
  return result;
}
