/**
 * Signing a statement through the system's ssh-keygen (`ssh-keygen -Y sign -f KEY -n
 * payouts-approval FILE`), so that passphrases, ssh-agent and hardware keys work as approvers
 * expect: the private key is read by ssh-keygen alone, never by payouts. The statement goes on a
 * private temporary file; ssh-keygen keeps the terminal for a passphrase or a PIN, and its
 * messages (touch the key) reach the approver (docs/approval.md, "Signing an approval").
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignatureError, SigningError } from './errors.js';
import { APPROVAL_NAMESPACE, verifyArmoredSignature } from './sshsig.js';

export interface SignOptions {
  /** The statement's exact text. */
  readonly statement: string;
  /** The private key, or its .pub when the key is in ssh-agent or on a security key. */
  readonly keyPath: string;
  readonly namespace?: string;
  /** The ssh-keygen to run: `ssh-keygen` from PATH unless told otherwise. */
  readonly sshKeygen?: string;
  /** Where ssh-keygen's messages go (a security key's "confirm user presence"): stderr by default. */
  readonly messages?: NodeJS.WritableStream;
  /**
   * Whether ssh-keygen may read the terminal for a passphrase: by default when stdin is one.
   * Without it ssh-keygen asks SSH_ASKPASS or fails on a key that has a passphrase.
   */
  readonly interactive?: boolean;
  readonly env?: NodeJS.ProcessEnv;
  readonly signal?: AbortSignal;
}

/** ssh-keygen's own progress lines, which say nothing to an approver. */
const NOISE = /^(Signing file |Write signature to )/;
/** How much of ssh-keygen's output is kept for an error message. */
const KEPT_CHARS = 4096;

/** Signs the statement with ssh-keygen; returns the armored signature, checked before it is returned. */
export async function signStatement(options: SignOptions): Promise<string> {
  const namespace = options.namespace ?? APPROVAL_NAMESPACE;
  const program = options.sshKeygen ?? 'ssh-keygen';
  const folder = await mkdtemp(join(tmpdir(), 'payouts-approval-'));
  try {
    const file = join(folder, 'statement.txt');
    await writeFile(file, options.statement, { mode: 0o600 });
    const { code, output } = await run(
      program,
      ['-Y', 'sign', '-f', options.keyPath, '-n', namespace, file],
      options,
    );
    if (code !== 0) {
      const said = output.trim();
      throw new SigningError(
        `ssh-keygen could not sign with ${options.keyPath} (exit ${code})${said === '' ? '' : `: ${said}`}`,
      );
    }
    let armored: string;
    try {
      armored = await readFile(`${file}.sig`, 'utf8');
    } catch (cause) {
      throw new SigningError(`ssh-keygen reported success but wrote no signature for ${options.keyPath}`, {
        cause,
      });
    }
    try {
      verifyArmoredSignature(armored, options.statement, namespace);
    } catch (cause) {
      if (!(cause instanceof SignatureError)) throw cause;
      throw new SigningError(`ssh-keygen wrote a signature that does not verify: ${cause.message}`, {
        cause,
      });
    }
    return armored;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

function run(
  program: string,
  args: string[],
  options: SignOptions,
): Promise<{ code: number | null; output: string }> {
  const interactive = options.interactive ?? process.stdin.isTTY === true;
  const messages = options.messages ?? process.stderr;
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, {
      stdio: [interactive ? 'inherit' : 'ignore', 'pipe', 'pipe'],
      env: options.env ?? process.env,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    let output = '';
    let pending = '';
    const take = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      if (output.length < KEPT_CHARS) output += text.slice(0, KEPT_CHARS - output.length);
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) if (!NOISE.test(line)) messages.write(`${line}\n`);
      // A prompt without a line break (touch the key, enter the PIN) is shown as it comes.
      if (pending !== '' && !NOISE.test(pending) && /[:?]\s*$/.test(pending)) {
        messages.write(pending);
        pending = '';
      }
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') {
        reject(
          new SigningError(
            `${program} was not found: install OpenSSH's client (openssh-client), or sign the statement elsewhere with ssh-keygen -Y sign -n ${options.namespace ?? APPROVAL_NAMESPACE} and record the .sig file`,
            { cause: error },
          ),
        );
      } else if (error.name === 'AbortError') {
        reject(new SigningError('signing was interrupted', { cause: error }));
      } else {
        reject(
          new SigningError(`${program} could not be started (${error.code ?? error.message})`, {
            cause: error,
          }),
        );
      }
    });
    child.on('close', (code) => {
      if (pending !== '' && !NOISE.test(pending)) messages.write(`${pending}\n`);
      resolve({
        code,
        output: output
          .split('\n')
          .filter((line) => !NOISE.test(line))
          .join('\n'),
      });
    });
  });
}
