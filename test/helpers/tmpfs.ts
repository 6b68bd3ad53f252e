/**
 * A small file system of its own for a test (a tmpfs, root on Linux only, as CI runs): a disk
 * that fills, or turns read-only, without touching the machine's.
 */
import { execFileSync } from 'node:child_process';
import { onTestFinished } from 'vitest';

/** Whether this process may mount a tmpfs. */
export const CAN_MOUNT = process.getuid?.() === 0 && process.platform === 'linux';

/** Appended to the title of a describe that needs a tmpfs: says why it is skipped. */
export const MOUNT_NOTE = CAN_MOUNT ? '' : ' (SKIPPED: mounting a tmpfs needs root on Linux, as CI runs)';

/** Mounts a tmpfs of `size` (`64k`, `8m`) on `dir`, detached when the test ends. */
export function mountTmpfs(dir: string, size: string): void {
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
  // Lazy: detached at once even if a file on it is still open, so no mount outlives the test.
  onTestFinished(() => {
    execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
  });
}

/** Makes the tmpfs on `dir` read-only. */
export function remountReadOnly(dir: string): void {
  execFileSync('mount', ['-o', 'remount,ro', dir], { stdio: 'ignore' });
}
