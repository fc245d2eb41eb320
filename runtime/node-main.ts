/**
 * What `runtime/node.ts` starts once Node's compile cache is on: builds the
 * Node runtime and runs the command line with it. One module, so the bundle
 * keeps everything start-up needs in one chunk.
 *
 * @module
 */

import { main } from "../src/cli.ts";
import { createNodeRuntime } from "./node-runtime.ts";

/** Runs the command line on a new Node runtime and exits with its status. */
export async function start(): Promise<void> {
  const runtime = createNodeRuntime();
  runtime.exit(await main(runtime));
}
