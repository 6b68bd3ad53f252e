import { isIP } from 'node:net';

/**
 * Why a webhook callback URL is refused, or undefined when it is accepted. docs/service.md
 * "Webhook delivery" says the callback URL should be HTTPS; the sandbox also accepts plain http
 * to a loopback host, so a receiver on the integrator's own machine works (the same rule payouts
 * applies to its own `--base-url`: README "Options of `validate` and `run`").
 */
export function callbackUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `url must be an absolute URL such as https://example.com/webhooks, got "${text}"`;
  }
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return undefined;
  return `url must use https (plain http is accepted only for loopback hosts such as 127.0.0.1), got "${text}"`;
}

/** localhost, 127.0.0.0/8 and ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}
