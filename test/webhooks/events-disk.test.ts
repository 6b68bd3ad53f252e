/**
 * The events file is an export: a write error there (a full disk) is said and tried again,
 * never sticky, and never changes what the receiver answers. Needs root to mount a small tmpfs
 * (CI runs as root); skipped, saying so, elsewhere.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { EventRecord } from '../../src/webhooks/events-file.js';
import type { ReceiverNotice } from '../../src/webhooks/receiver.js';
import { eventually } from '../helpers/eventually.js';
import { jsonLines, payload, post, receiver, tempDir } from './helpers.js';

const canMount = process.getuid?.() === 0 && process.platform === 'linux';

describe('the events file on a full disk', () => {
  it.skipIf(!canMount)(
    'is written again once the disk has room: deliveries stay 200, nothing is lost',
    async () => {
      const dir = path.join(await tempDir(), 'disk');
      await mkdir(dir);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'ignore' });
      onTestFinished(() => {
        execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
      });
      const eventsFile = path.join(dir, 'events.jsonl');
      const held = new Set<string>();
      const notices: ReceiverNotice[] = [];
      const r = await receiver({
        eventsFile,
        onNotice: (n) => void notices.push(n),
        persist: async (e: EventRecord) =>
          !held.has(e.event.resourceId) && Boolean(held.add(e.event.resourceId)),
      });
      const filler = path.join(dir, 'filler');
      // Fill the disk: the file grows until the device says no more.
      await writeFile(filler, Buffer.alloc(60 * 1024)).catch(() => {});
      try {
        execFileSync('sh', ['-c', `cat /dev/zero >> ${filler}`], { stdio: 'ignore' });
      } catch {
        // ENOSPC: full, as wanted.
      }
      const during = await Promise.all(
        ['a', 'b', 'c'].map((id) => post(r.url, JSON.stringify(payload({ resourceId: id })))),
      );
      // The register recorded them: the answers are 200 whatever the export does.
      expect(during.map((d) => d.status)).toEqual([200, 200, 200]);
      expect(
        notices.some((n) => n.kind === 'failed' && /events file could not be written/.test(n.reason)),
      ).toBe(true);

      await rm(filler);
      expect((await post(r.url, JSON.stringify(payload({ resourceId: 'd' })))).status).toBe(200);
      // Within seconds the export holds every event, each once.
      const ids = await eventually(async () => {
        const lines = (await jsonLines(eventsFile)).map(
          (l) => (l['event'] as { resourceId: string }).resourceId,
        );
        return lines.length === 4 ? lines : undefined;
      }, 5000);
      expect([...ids].sort()).toEqual(['a', 'b', 'c', 'd']);
    },
  );
});
