/** A register failure in words (never a bare SQLSTATE), and whether waiting mends it. */
import { describe, expect, it } from 'vitest';
import { pgFailureOf } from '../../src/register/pg-errors.js';

const coded = (code: string, message = 'driver words') => Object.assign(new Error(message), { code });

describe('pgFailureOf', () => {
  it.each([
    [coded('57P03'), 'the PostgreSQL server is restarting (57P03)', true],
    [coded('57P01'), 'the PostgreSQL server is shutting down (57P01)', true],
    [coded('57014'), 'a statement ran past its deadline and was cancelled (57014)', true],
    [coded('25006'), 'the database is read-only here (a standby, as during a failover) (25006)', true],
    [coded('08006'), 'the connection to the database broke (08006)', true],
    [coded('08P01'), 'the connection to the database broke (08P01)', true],
    [coded('53300'), 'the PostgreSQL server has no free connection (53300)', true],
    [
      coded('ECONNREFUSED'),
      'the connection was refused (is the database server running there?) (ECONNREFUSED)',
      true,
    ],
    [coded('ECONNRESET'), 'the connection was reset (ECONNRESET)', true],
    [coded('ENOTFOUND'), 'the host name does not resolve (ENOTFOUND)', true],
    [
      coded('EAI_AGAIN'),
      'the host name could not be resolved (the resolver did not answer) (EAI_AGAIN)',
      true,
    ],
    [new Error('Connection terminated unexpectedly'), 'the connection to the database broke', true],
    [new Error('timeout exceeded when trying to connect'), 'no connection within the deadline', true],
    [new Error('Query read timeout'), 'the server did not answer within the deadline', true],
    [coded('28P01'), 'the database refused the user name or password (28P01)', false],
    [coded('3D000'), 'the database does not exist (3D000)', false],
    [coded('42P01'), 'the database answered with an error (42P01)', false],
    [
      coded('DEPTH_ZERO_SELF_SIGNED_CERT'),
      "the server's certificate is not trusted (DEPTH_ZERO_SELF_SIGNED_CERT): name its authority with sslrootcert=FILE in the URL (or PGSSLROOTCERT), or use sslmode=require to encrypt without verifying",
      false,
    ],
    [
      new Error('The server does not support SSL connections'),
      'the server does not support TLS, and sslmode=require asks for it',
      false,
    ],
  ] as const)('%s', (error, words, outage) => {
    expect(pgFailureOf(error)).toEqual({ words, outage });
  });

  it('names the sslmode the register was opened with', () => {
    expect(pgFailureOf(new Error('The server does not support SSL connections'), 'verify-full').words).toBe(
      'the server does not support TLS, and sslmode=verify-full asks for it',
    );
  });
});
