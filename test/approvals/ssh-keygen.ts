/**
 * Real keys and signatures from the system's ssh-keygen, made in a temporary folder at test
 * time: payouts' verifier is held to what OpenSSH writes and accepts. Tests that need
 * ssh-keygen skip, saying why, where it is not installed (CI installs openssh-client).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function probe(): boolean {
  const result = spawnSync('ssh-keygen', ['-Y', 'nonsense'], { stdio: 'ignore' });
  return (result.error as NodeJS.ErrnoException | undefined)?.code !== 'ENOENT';
}

/** Whether ssh-keygen can be run here. */
export const HAS_SSH_KEYGEN = probe();

/** Appended to the title of a describe that needs ssh-keygen: says why it is skipped. */
export const SSH_KEYGEN_NOTE = HAS_SSH_KEYGEN
  ? ''
  : ' (SKIPPED: ssh-keygen is not on PATH; install openssh-client to run these)';

export type KeySpec =
  | { type: 'ed25519' }
  | { type: 'ecdsa'; bits: 256 | 384 | 521 }
  | { type: 'rsa'; bits: number };

/** A key pair made by ssh-keygen. */
export interface TestKey {
  readonly name: string;
  /** The private key file. */
  readonly path: string;
  /** The .pub line without its comment: `type base64`. */
  readonly publicKey: string;
  readonly type: string;
  /** The fingerprint as `ssh-keygen -l` prints it. */
  readonly fingerprint: string;
}

/** A temporary folder of keys and files, removed by cleanup(). */
export class KeyFolder {
  readonly dir = mkdtempSync(join(tmpdir(), 'payouts-approvals-test-'));
  private files = 0;

  /** Makes a key pair with ssh-keygen (no passphrase unless given). */
  key(name: string, spec: KeySpec, passphrase = ''): TestKey {
    const path = join(this.dir, name);
    const args = ['-q', '-t', spec.type, '-N', passphrase, '-C', `${name}@test`, '-f', path];
    if (spec.type !== 'ed25519') args.push('-b', String(spec.bits));
    run(args);
    const [type, base64] = readFileSync(`${path}.pub`, 'utf8').trim().split(' ') as [string, string];
    const fingerprint = run(['-l', '-E', 'sha256', '-f', `${path}.pub`]).split(' ')[1]!;
    return { name, path, publicKey: `${type} ${base64}`, type, fingerprint };
  }

  /** The fingerprint `ssh-keygen -l` prints for a public key line. */
  fingerprint(publicKeyLine: string): string {
    return run(['-l', '-E', 'sha256', '-f', this.file(`${publicKeyLine}\n`)]).split(' ')[1]!;
  }

  /** Writes a file in the folder and returns its path. */
  file(text: string | Buffer, name = `file-${++this.files}`): string {
    const path = join(this.dir, name);
    writeFileSync(path, text);
    return path;
  }

  /** Plain `ssh-keygen -Y sign` over `message`; returns the armored signature. */
  sign(key: TestKey, message: string | Buffer, namespace = 'payouts-approval', extra: string[] = []): string {
    const path = this.file(message);
    run(['-Y', 'sign', '-f', key.path, '-n', namespace, ...extra, path]);
    return readFileSync(`${path}.sig`, 'utf8');
  }

  /**
   * `ssh-keygen -Y verify`: its exit code and what it printed. `at` checks the allowed-signers
   * times at that instant (`-O verify-time`) instead of now; `timeZone` is the TZ ssh-keygen
   * reads times without Z in.
   */
  verify(
    allowedSigners: string,
    principal: string,
    signature: string,
    message: string | Buffer,
    namespace = 'payouts-approval',
    { at, timeZone }: { at?: number; timeZone?: string } = {},
  ): { status: number | null; output: string } {
    const signers = this.file(allowedSigners);
    const sig = this.file(signature);
    const args = ['-Y', 'verify', '-f', signers, '-I', principal, '-n', namespace, '-s', sig];
    if (at !== undefined) args.push('-O', `verify-time=${utcSeconds(at)}`);
    const result = spawnSync('ssh-keygen', args, {
      input: message,
      encoding: 'utf8',
      timeout: TIMEOUT_MS,
      ...(timeZone === undefined ? {} : { env: { ...process.env, TZ: timeZone } }),
    });
    return { status: result.status, output: `${result.stdout}${result.stderr}${result.error ?? ''}` };
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** ssh-keygen answers in milliseconds; a hung one fails its test instead of holding the run. */
const TIMEOUT_MS = 20_000;

/** An instant (milliseconds) as ssh-keygen reads a time in UTC: YYYYMMDDHHMMSSZ. */
function utcSeconds(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace(/[-T:]/g, '')}Z`;
}

function run(args: string[]): string {
  const result = spawnSync('ssh-keygen', args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: TIMEOUT_MS,
  });
  if (result.status !== 0) throw new Error(`ssh-keygen ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}
