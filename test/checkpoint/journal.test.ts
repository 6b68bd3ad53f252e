import { appendFile, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { idempotencyKey } from '../../src/checkpoint/fingerprint.js';
import { type Journal, type JournalEntry, openJournal, scrubMessage } from '../../src/checkpoint/journal.js';
import { GuardError } from '../../src/errors.js';

const SHEET = { sheetHash: 'a'.repeat(64), batchId: 'b-aaaaaaaaaaaaaaaaaaaaaaaa', keySalt: 'salt-1' };
const OTHER = { sheetHash: 'c'.repeat(64), batchId: 'b-cccccccccccccccccccccccc', keySalt: 'salt-2' };
const clock = { now: () => Date.UTC(2025, 0, 1) };

let dir: string;
let path: string;
const open_: Journal[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'payouts-journal-'));
  path = join(dir, 'sheet.checkpoint.jsonl');
});
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open_.splice(0).map((j) => j.close().catch(() => {})));
  await rm(dir, { recursive: true, force: true });
});

async function journal(options = SHEET): Promise<Journal> {
  const j = await openJournal(path, { ...options, clock });
  open_.push(j);
  return j;
}

async function lines(): Promise<Record<string, unknown>[]> {
  const text = await readFile(path, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const key = idempotencyKey(SHEET.batchId, 'INV-1');

describe('openJournal', () => {
  it('creates the file with a header record', async () => {
    const j = await journal();
    expect(j.created).toBe(true);
    expect(await lines()).toEqual([
      {
        type: 'header',
        version: 1,
        sheetHash: SHEET.sheetHash,
        batchId: SHEET.batchId,
        createdAt: '2025-01-01T00:00:00.000Z',
      },
    ]);
  });

  it('refuses the checkpoint of another sheet (GuardError, exit 4) and leaves it untouched', async () => {
    await (await journal()).close();
    const before = await readFile(path, 'utf8');
    const err = (await openJournal(path, OTHER).catch((e: unknown) => e)) as GuardError;
    expect(err).toBeInstanceOf(GuardError);
    expect(err.exitCode).toBe(4);
    expect(err.message).toMatch(
      /^checkpoint .*sheet\.checkpoint\.jsonl belongs to another sheet \(sheet hash aaaaaaaaaaaa…/,
    );
    expect(err.message).toContain('pass --checkpoint PATH or remove it');
    expect(await readFile(path, 'utf8')).toBe(before);
  });

  it('refuses a file that is not a checkpoint, and one written by a newer version', async () => {
    await writeFile(path, '{"type":"step","row":2,"reference":"x","step":"simulation","ok":true,"at":"t"}\n');
    await expect(openJournal(path, SHEET)).rejects.toThrow(/not a payouts checkpoint/);
    await writeFile(path, `${JSON.stringify({ type: 'header', version: 9, ...SHEET, createdAt: 't' })}\n`);
    await expect(openJournal(path, SHEET)).rejects.toThrow(/newer payouts \(journal version 9\)/);
  });

  it('refuses a journal damaged in the middle', async () => {
    const j = await journal();
    await j.append({ type: 'final', row: 2, reference: 'INV-1', status: 'submitted' });
    await j.close();
    open_.pop();
    await appendFile(
      path,
      'garbage\n{"type":"final","row":3,"reference":"INV-2","status":"failed","at":"t"}\n',
    );
    await expect(openJournal(path, SHEET)).rejects.toThrow(/damaged at line 3/);
  });
});

describe('append and replay', () => {
  const entries: JournalEntry[] = [
    { type: 'beneficiary', key: 'ben|Ana|ana@example.com', id: 'ben-1', row: 2, reference: 'INV-1' },
    { type: 'step', row: 2, reference: 'INV-1', step: 'beneficiary', ok: true, id: 'ben-1' },
    { type: 'recipient', key: 'ACH|021000021|000123456789', id: 'rcp-1' },
    { type: 'step', row: 2, reference: 'INV-1', step: 'recipient', ok: true, id: 'rcp-1' },
    { type: 'step', row: 2, reference: 'INV-1', step: 'simulation', ok: true, id: 'sim-1' },
    { type: 'intent', row: 2, reference: 'INV-1', idempotencyKey: key, simulationId: 'sim-1' },
    {
      type: 'outcome',
      row: 2,
      reference: 'INV-1',
      idempotencyKey: key,
      status: 'submitted',
      transactionId: 'tx-1',
    },
    { type: 'final', row: 2, reference: 'INV-1', status: 'submitted' },
    {
      type: 'step',
      row: 3,
      reference: 'INV-2',
      step: 'recipient',
      ok: false,
      status: 400,
      error: 'clabe has an invalid checksum',
    },
    {
      type: 'final',
      row: 3,
      reference: 'INV-2',
      status: 'failed',
      errors: ['clabe has an invalid checksum'],
    },
    { type: 'step', row: 4, reference: 'INV-3', step: 'simulation', ok: true, id: 'sim-3' },
    { type: 'intent', row: 4, reference: 'INV-3', idempotencyKey: 'k3', simulationId: 'sim-3' },
  ];

  it('replays what was appended, across a reopen', async () => {
    const j = await journal();
    for (const e of entries) await j.append(e);
    await j.close();
    open_.pop();

    const again = await journal();
    expect(again.created).toBe(false);
    const state = again.replay();
    expect(state.beneficiaryId('ben|Ana|ana@example.com')).toBe('ben-1');
    expect(state.recipientId('ACH|021000021|000123456789')).toBe('rcp-1');
    expect(state.recipientId('ACH|021000021|999')).toBeUndefined();
    const inv1 = state.rows.get('INV-1')!;
    expect(inv1.row).toBe(2);
    expect(inv1.steps.simulation?.id).toBe('sim-1');
    expect(inv1.outcome).toMatchObject({ status: 'submitted', transactionId: 'tx-1' });
    expect(inv1.final?.status).toBe('submitted');
    expect(state.rows.get('INV-2')?.steps.recipient).toMatchObject({ ok: false, status: 400 });
    // The intent of INV-3 has no outcome: the request may have left when the run stopped.
    expect(state.pendingIntents().map((i) => i.reference)).toEqual(['INV-3']);
  });

  it('the live state follows acknowledged appends', async () => {
    const j = await journal();
    await j.append(entries[5]!);
    expect(j.replay().pendingIntents()).toHaveLength(1);
    await j.append(entries[6]!);
    expect(j.replay().pendingIntents()).toHaveLength(0);
  });

  it('a new intent starts over; an outcome of the old key does not close it', async () => {
    const j = await journal();
    await j.append({ type: 'intent', row: 2, reference: 'INV-1', idempotencyKey: 'k0', simulationId: 's0' });
    await j.append({
      type: 'outcome',
      row: 2,
      reference: 'INV-1',
      idempotencyKey: 'k0',
      status: 'failed',
      error: 'expired',
    });
    await j.append({ type: 'intent', row: 2, reference: 'INV-1', idempotencyKey: 'k1', simulationId: 's1' });
    expect(j.replay().rows.get('INV-1')?.outcome).toBeUndefined();
    await j.append({ type: 'outcome', row: 2, reference: 'INV-1', idempotencyKey: 'k0', status: 'failed' });
    expect(j.replay().pendingIntents()).toHaveLength(1);
    await j.append({
      type: 'outcome',
      row: 2,
      reference: 'INV-1',
      idempotencyKey: 'k1',
      status: 'submitted',
    });
    expect(j.replay().pendingIntents()).toHaveLength(0);
  });

  it('refuses a record it could not replay', async () => {
    const j = await journal();
    await expect(j.append({ type: 'final', row: -1, reference: 'x', status: 'failed' })).rejects.toThrow(
      TypeError,
    );
    // @ts-expect-error: not a status
    await expect(j.append({ type: 'final', row: 1, reference: 'x', status: 'paid' })).rejects.toThrow(
      TypeError,
    );
  });
});

describe('torn last line', () => {
  it('is cut off on open; the records before it stay and appends continue on a clean line', async () => {
    const j = await journal();
    await j.append({ type: 'final', row: 2, reference: 'INV-1', status: 'submitted' });
    await j.close();
    open_.pop();
    await appendFile(path, '{"type":"intent","row":3,"reference":"INV-2","idempot');

    const again = await journal();
    expect(again.repairedBytes).toBe('{"type":"intent","row":3,"reference":"INV-2","idempot'.length);
    expect(again.replay().pendingIntents()).toEqual([]);
    expect(again.replay().rows.get('INV-1')?.final?.status).toBe('submitted');
    await again.append({ type: 'final', row: 3, reference: 'INV-2', status: 'failed' });
    expect((await lines()).map((l) => l.type)).toEqual(['header', 'final', 'final']);
  });

  it('a torn header (crash while creating) starts the journal afresh', async () => {
    await writeFile(path, '{"type":"header","vers');
    const j = await journal();
    expect(j.created).toBe(true);
    expect((await lines()).map((l) => l.type)).toEqual(['header']);
  });

  it('a complete record without its newline was never acknowledged: it is dropped too', async () => {
    await (await journal()).close();
    open_.pop();
    await appendFile(
      path,
      JSON.stringify({ type: 'final', row: 2, reference: 'INV-1', status: 'submitted', at: 't' }),
    );
    const j = await journal();
    expect(j.replay().rows.size).toBe(0);
  });
});

/** Counts datasync calls on every FileHandle (the prototype is shared). */
async function spyDatasync() {
  const probe = await open(join(dir, 'probe'), 'w');
  const proto = Object.getPrototypeOf(probe) as { datasync: (this: unknown) => Promise<void> };
  await probe.close();
  const real = proto.datasync;
  return { spy: vi.spyOn(proto, 'datasync'), real };
}

describe('durability and group commit', () => {
  it('append resolves only after the fsync covering its line', async () => {
    const j = await journal();
    const events: string[] = [];
    const { spy, real } = await spyDatasync();
    spy.mockImplementation(async function (this: unknown) {
      events.push('fsync start');
      await new Promise((r) => setTimeout(r, 20));
      await real.call(this);
      events.push('fsync done');
    });
    await j
      .append({ type: 'intent', row: 2, reference: 'INV-1', idempotencyKey: key, simulationId: 's' })
      .then(() => events.push('append resolved'));
    expect(events).toEqual(['fsync start', 'fsync done', 'append resolved']);
  });

  it('groups concurrent appends into few fsyncs, keeping call order in the file', async () => {
    const j = await journal();
    const { spy } = await spyDatasync();
    const n = 200;
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        j.append({ type: 'final', row: i + 2, reference: `R${i}`, status: 'submitted' }),
      ),
    );
    expect(spy.mock.calls.length).toBeGreaterThanOrEqual(1);
    expect(spy.mock.calls.length).toBeLessThanOrEqual(3);
    const rows = (await lines()).slice(1).map((l) => l.row);
    expect(rows).toEqual(Array.from({ length: n }, (_, i) => i + 2));
  });

  it('workers appending while fsyncs run: every record lands once, in the order of each worker', async () => {
    const j = await journal();
    const worker = async (w: number) => {
      for (let i = 0; i < 25; i++) {
        await j.append({
          type: 'step',
          row: w,
          reference: `W${w}`,
          step: 'simulation',
          ok: true,
          id: `${w}-${i}`,
        });
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)));
    const records = (await lines()).slice(1);
    expect(records).toHaveLength(200);
    for (let w = 0; w < 8; w++) {
      expect(records.filter((r) => r.row === w).map((r) => r.id)).toEqual(
        Array.from({ length: 25 }, (_, i) => `${w}-${i}`),
      );
    }
    expect(j.replay().rows.get('W3')?.steps.simulation?.id).toBe('3-24');
  });

  it('a failed fsync fails that append and every later one', async () => {
    const j = await journal();
    const { spy } = await spyDatasync();
    spy.mockRejectedValueOnce(Object.assign(new Error('EIO: i/o error'), { code: 'EIO' }));
    await expect(j.append({ type: 'final', row: 2, reference: 'a', status: 'failed' })).rejects.toThrow(
      /cannot be written: EIO/,
    );
    await expect(j.append({ type: 'final', row: 3, reference: 'b', status: 'failed' })).rejects.toThrow(
      /cannot be written/,
    );
    await expect(j.flush()).rejects.toThrow(/cannot be written/);
  });

  it('close flushes pending appends', async () => {
    const j = await journal();
    const pending = j.append({ type: 'final', row: 2, reference: 'INV-1', status: 'skipped' });
    await j.close();
    await pending;
    expect((await lines()).map((l) => l.type)).toEqual(['header', 'final']);
    await expect(j.append({ type: 'final', row: 2, reference: 'x', status: 'skipped' })).rejects.toThrow(
      /closed/,
    );
  });
});

describe('no secrets, no account numbers', () => {
  it('stores dedupe keys hashed, strips unknown fields and scrubs messages', async () => {
    const j = await journal();
    await j.append({ type: 'recipient', key: 'ACH|021000021|000123456789', id: 'rcp-1' });
    await j.append({
      type: 'step',
      row: 2,
      reference: 'INV-1',
      step: 'recipient',
      ok: false,
      error: 'account 000123456789 refused; Authorization: Bearer eyJhbGciOi.secret.sig',
      // @ts-expect-error: a field the journal does not know is dropped, not stored
      accountNumber: '000123456789',
    });
    await j.append({
      type: 'final',
      row: 2,
      reference: 'INV-1',
      status: 'failed',
      errors: ['password=hunter2'],
    });
    const text = await readFile(path, 'utf8');
    expect(text).not.toMatch(/000123456789|021000021|eyJhbGciOi|hunter2|accountNumber/);
    expect(text).toContain('****6789');
    expect(j.replay().recipientId('ACH|021000021|000123456789')).toBe('rcp-1');
  });

  it('scrubMessage keeps SPEC.md 7.2 messages word for word', () => {
    for (const m of [
      'clabe must be 18 digits long',
      'routingNumber must be 9 characters long',
      'documentNumber must be 11 characters (CPF) or 14 characters (CNPJ)',
      'swiftCode must be provided and matches the regex: ^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$',
    ]) {
      expect(scrubMessage(m)).toBe(m);
    }
  });
});
