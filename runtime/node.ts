#!/usr/bin/env node
/**
 * The Node.js entry point (the npm `bin`): builds the Node runtime and runs
 * the command line with it.
 *
 * @module
 */

import { main } from "../src/cli.ts";
import { createNodeRuntime } from "./node-runtime.ts";

const runtime = createNodeRuntime();
runtime.exit(await main(runtime));
