/**
 * The Deno entry point, for `deno run` and `deno compile`: builds the Deno
 * runtime and runs the command line with it.
 *
 * @module
 */

import { main } from "../src/cli.ts";
import { createDenoRuntime } from "./deno-runtime.ts";

const runtime = createDenoRuntime();
runtime.exit(await main(runtime));
