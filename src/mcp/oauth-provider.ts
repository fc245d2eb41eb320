/**
 * The SDK's `OAuthClientProvider` over the tokens file (`oauth-tokens.ts`),
 * in one of two modes:
 *
 * - `login` (`magi-code mcp login`): registers a client for this login's
 *   loopback redirect, keeps the PKCE verifier in memory, and hands the
 *   authorization URL to the command, which prints it and waits for the
 *   redirect;
 * - `startup`: offers the stored tokens; the SDK refreshes them when the
 *   server answers 401 (the new tokens are stored), and anything that would
 *   need the user (a new authorization) throws {@link LoginNeeded} instead:
 *   startup never prompts.
 *
 * Loaded only when an HTTP server with stored tokens starts, or by `login`.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthClientProvider, OAuthTokens } from "./sdk.ts";
import { VERSION } from "../util/version.ts";
import { type StoredOAuth, updateMcpTokens } from "./oauth-tokens.ts";

/** Thrown where the SDK would send the user to authorize: startup cannot ask. */
export class LoginNeeded extends Error {
  constructor() {
    super("The MCP server needs a login: run 'magi-code mcp login'");
    // open.ts tells it by name, so it need not load this module.
    this.name = "LoginNeeded";
  }
}

/** How the provider behaves: the interactive login, or a startup that must not ask. */
export type ProviderMode =
  | { readonly kind: "startup" }
  | { readonly kind: "login"; readonly redirectUrl: string; readonly state: string; readonly authorize: (url: URL) => void };

/** Stands in for the redirect URL at startup, where nothing is redirected (the SDK treats none as a non-interactive grant). */
const NO_REDIRECT = "http://127.0.0.1/callback";

/** One server's OAuth client for the SDK. */
export class StoredOAuthProvider implements OAuthClientProvider {
  readonly #runtime: Runtime;
  readonly #home: string;
  readonly #name: string;
  readonly #url: string;
  readonly #mode: ProviderMode;
  #client: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier = "";
  readonly #saved = new Set<() => void>();

  /** For server `name` at `url`, with what is stored for it (ignored by a login, which starts afresh). */
  constructor(runtime: Runtime, home: string, target: { readonly name: string; readonly url: string }, stored: StoredOAuth | null, mode: ProviderMode) {
    this.#runtime = runtime;
    this.#home = home;
    this.#name = target.name;
    this.#url = target.url;
    this.#mode = mode;
    if (mode.kind === "startup" && stored !== null) {
      this.#client = stored.client as OAuthClientInformationMixed;
      this.#tokens = (stored.tokens ?? undefined) as OAuthTokens | undefined;
    }
  }

  get redirectUrl(): string {
    return this.#mode.kind === "login" ? this.#mode.redirectUrl : NO_REDIRECT;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "magi-code",
      software_id: "magi-code",
      software_version: VERSION,
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  state(): string {
    if (this.#mode.kind !== "login") throw new LoginNeeded();
    return this.#mode.state;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#client;
  }

  async saveClientInformation(client: OAuthClientInformationMixed): Promise<void> {
    this.#client = client;
    await this.#store();
  }

  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    this.#tokens = tokens;
    // Told before the file is written: the tokens are live once the SDK has them, stored or not.
    for (const listener of this.#saved) listener();
    await this.#store();
  }

  /** Calls `listener` whenever new tokens arrive (a refresh), so they can be redacted from then on. */
  onTokensSaved(listener: () => void): void {
    this.#saved.add(listener);
  }

  redirectToAuthorization(url: URL): void {
    if (this.#mode.kind !== "login") throw new LoginNeeded();
    this.#mode.authorize(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    return this.#verifier;
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    // Only what is in memory: the file keeps the old state until a login replaces it or logout removes it.
    if (scope === "all" || scope === "tokens") this.#tokens = undefined;
    if (scope === "all" || scope === "client") this.#client = undefined;
  }

  async #store(): Promise<void> {
    const client = this.#client;
    if (client === undefined) return;
    const entry: StoredOAuth = { url: this.#url, client: { ...client }, tokens: this.#tokens === undefined ? null : { ...this.#tokens } };
    const written = await updateMcpTokens(this.#runtime, this.#home, this.#name, () => entry);
    if (!written.ok) throw new Error("The OAuth tokens could not be stored");
  }
}
