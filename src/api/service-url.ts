/**
 * The one check of a service URL (`--base-url`, `--auth-url`), shared by every command that
 * names the service: those that call it (run, reconcile, webhooks) and those that only write it
 * into what they record (approve's statement). Kept apart from the HTTP client so that an
 * offline command checks the URL without loading it.
 */
import { ConfigError } from '../errors.js';

const LOOPBACK_HOSTS = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/**
 * Parses a service URL (`--base-url`, `--auth-url`): https, or plain http to a loopback
 * address only (README "Options of `validate` and `run`"). Credentials inside the URL are refused
 * so they can never reach an error message.
 */
export function parseServiceUrl(text: string, option: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(`${option} is not a URL - give it as https://host[:port][/prefix]`);
  }
  if (url.username || url.password) {
    throw new ConfigError(`${option} must not contain credentials - pass them in the PAYOUTS_* variables`);
  }
  if (url.search || url.hash) {
    throw new ConfigError(`${option} must not have a query or fragment: ${url.origin}${url.pathname}`);
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:') {
    if (LOOPBACK_HOSTS.test(url.hostname)) return url;
    throw new ConfigError(
      `${option} ${url.origin} uses plain http://, which is refused except to loopback addresses (127.0.0.1, ::1, localhost) - use https://`,
    );
  }
  throw new ConfigError(`${option} ${url.origin} must use https://`);
}
