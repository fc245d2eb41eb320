/**
 * Plays a browser that is already signed in at an OAuth authorization
 * server: for the `mcp login` tests and the conformance driver, whose
 * authorization endpoints redirect at once.
 *
 * @module
 */

/** Follows `start`'s redirects (at most 5) to where they end, such as a login's loopback callback. */
export async function browse(start: string): Promise<void> {
  let next = start;
  for (let hop = 0; hop < 5; hop++) {
    const response = await fetch(next, { redirect: "manual" });
    await response.body?.cancel();
    const location = response.headers.get("location");
    if (location === null) return;
    next = new URL(location, next).href;
  }
}
