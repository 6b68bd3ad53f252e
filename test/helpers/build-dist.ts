/**
 * Vitest global setup: rebuilds dist/ when any file of src/ is newer than it (or it is missing),
 * so that tests which run the compiled command never pass on a stale build, however vitest was
 * started.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');

function newest(dir: string): number {
  let latest = 0;
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    const stat = statSync(file);
    latest = Math.max(latest, stat.isDirectory() ? newest(file) : stat.mtimeMs);
  }
  return latest;
}

function builtAt(): number {
  try {
    return statSync(path.join(root, 'dist', 'cli', 'main.js')).mtimeMs;
  } catch {
    return 0;
  }
}

export default function setup(): void {
  const sources = Math.max(
    newest(path.join(root, 'src')),
    statSync(path.join(root, 'tsconfig.build.json')).mtimeMs,
  );
  if (builtAt() >= sources) return;
  execFileSync(
    process.execPath,
    [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
  chmodSync(path.join(root, 'dist', 'cli', 'main.js'), 0o755);
}
