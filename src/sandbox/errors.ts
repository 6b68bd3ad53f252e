import { STATUS_CODES } from 'node:http';
import { type ErrorBody, VALIDATION_MESSAGE_SEPARATOR } from '../api/contract.js';
import { isoWithOffset } from './time.js';

/** What a route answers: a status, an optional JSON body and extra headers. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * An answer with the service's error body (docs/service.md "Error body"). Routes throw it; the
 * server turns it into the body with the request's path and the time of the answer.
 */
export class HttpError extends Error {
  readonly status: number;
  readonly headers: Record<string, string> | undefined;
  readonly errors: string[] | undefined;

  constructor(
    status: number,
    message: string,
    options: { headers?: Record<string, string>; errors?: string[] } = {},
  ) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
    this.headers = options.headers;
    this.errors = options.errors;
  }
}

/** 400 carrying validation messages word for word: joined in `message`, one per item in `errors`. */
export function validationError(messages: readonly string[]): HttpError {
  return new HttpError(400, messages.join(VALIDATION_MESSAGE_SEPARATOR), { errors: [...messages] });
}

/** The reason phrase of a status (the error body's `error`). */
export function reasonPhrase(status: number): string {
  return STATUS_CODES[status] ?? 'Unknown Status';
}

/** The service's error body (docs/service.md "Error body"). */
export function errorBody(
  status: number,
  message: string,
  path: string,
  now: number,
  errors?: string[],
): ErrorBody {
  const body: ErrorBody = {
    timestamp: isoWithOffset(now),
    status,
    error: reasonPhrase(status),
    message,
    path,
  };
  if (errors !== undefined) body.errors = errors;
  return body;
}

/** The reply for an HttpError. */
export function errorReply(error: HttpError, path: string, now: number): Reply {
  return {
    status: error.status,
    body: errorBody(error.status, error.message, path, now, error.errors),
    headers: error.headers,
  };
}
