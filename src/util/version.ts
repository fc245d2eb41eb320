/**
 * The magi-code release version; a test keeps it equal to `package.json`'s.
 *
 * @module
 */

/** The release version printed by `--version`. */
export const VERSION = "0.1.0";
