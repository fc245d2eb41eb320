/**
 * The Deno entry point, for `deno run` and `deno compile`: builds the Deno
 * runtime and runs the command line with it. `serve --stdio` first checks
 * that the permissions it needs were granted (`permissions.ts`), so a
 * too-narrow spawn line fails at launch, naming the missing flag.
 *
 * @module
 */

import { main } from "../src/cli.ts";
import { createDenoRuntime } from "./deno-runtime.ts";
import { missingPermission, missingPermissionLine } from "./permissions.ts";

const runtime = createDenoRuntime();
const serving = runtime.args.length === 2 && runtime.args[0] === "serve" && runtime.args[1] === "--stdio";
const missing = serving ? missingPermission((name) => Deno.permissions.querySync({ name }).state) : null;
if (missing !== null) {
  // One short line fits any pipe buffer, so the synchronous write cannot hang on an undrained stderr.
  Deno.stderr.writeSync(new TextEncoder().encode(missingPermissionLine(missing)));
  runtime.exit(2);
}
runtime.exit(await main(runtime));
