/**
 * The one HTTP request of a signal for cron (a push, a notification): a connection of its own,
 * closed after, so nothing is left to hold the process open once the command has ended, and an
 * abort signal that is the signals' one deadline. A failure is said in words without the URL's
 * path: a chat webhook's path is its secret.
 */
import type { Readable } from 'node:stream';
import { Agent, request } from 'undici';

/** What a signal's endpoint answered. */
export interface Answer {
  status: number;
  /** The answer's body (its start, unless more is asked for), for a warning that says why it refused. */
  text: string;
}

/** The longest part of an answer's body kept for a warning. */
const ANSWER_KEPT = 200;

/** Sends one request and reads its answer, within `signal`. */
export async function send(
  url: URL,
  method: 'GET' | 'PUT' | 'POST',
  signal: AbortSignal,
  body?: { contentType: string; data: string | Readable },
  kept = ANSWER_KEPT,
): Promise<Answer> {
  const agent = new Agent({ connections: 1, pipelining: 0 });
  try {
    const response = await request(url, {
      method,
      dispatcher: agent,
      signal,
      headers: {
        'user-agent': 'payouts',
        ...(body ? { 'content-type': body.contentType } : {}),
      },
      ...(body ? { body: body.data } : {}),
    });
    const text = await response.body.text();
    return { status: response.statusCode, text: text.slice(0, kept) };
  } finally {
    await agent.destroy().catch(() => {});
  }
}

/** Whether an answer is a success (2xx). */
export function accepted(answer: Answer): boolean {
  return answer.status >= 200 && answer.status < 300;
}

/** Why a request failed, in words: refused, timed out, or the error's own message. */
export function failureInWords(error: unknown, timedOut: boolean): string {
  if (timedOut) return 'no answer in time';
  const code =
    (error as { code?: string; cause?: { code?: string } } | null)?.cause?.code ??
    (error as { code?: string } | null)?.code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'no such host';
  if (code === 'ECONNRESET') return 'connection reset';
  return error instanceof Error ? error.message : String(error);
}
