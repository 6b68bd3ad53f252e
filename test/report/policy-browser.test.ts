/**
 * The approval policy where approvers look: `validate --json` gives each rule with whether it
 * applies, who signed and how many more are needed, and the report shows the same, read here in
 * Chromium (as browser.test.ts drives it), with real ssh-keygen keys; `status --approvals` gives the same rules.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_SSH_KEYGEN, KeyFolder, SSH_KEYGEN_NOTE, type TestKey } from '../approvals/ssh-keygen.js';
import { runCli } from '../helpers/cli.js';
import { testDir } from '../helpers/payouts.js';
import { initTestRegister } from '../helpers/register.js';
import { sampleRows, writeSheet } from '../helpers/sheets.js';

const CANDIDATES = [process.env['PAYOUTS_CHROMIUM'], '/usr/bin/chromium', '/usr/bin/chromium-browser'];
const SERVICE = 'https://pay.example';

describe.skipIf(!HAS_SSH_KEYGEN)(`the approval policy in validate and its report${SSH_KEYGEN_NOTE}`, () => {
  let browser: Browser;
  let keys: KeyFolder;
  let team: Record<'alice' | 'bob' | 'carol', TestKey>;
  beforeAll(async () => {
    const executablePath = CANDIDATES.find((p): p is string => p !== undefined && existsSync(p));
    if (executablePath === undefined) throw new Error('no Chromium found: apt-get install chromium');
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
    keys = new KeyFolder();
    team = {
      alice: keys.key('alice', { type: 'ed25519' }),
      bob: keys.key('bob', { type: 'ed25519' }),
      carol: keys.key('carol', { type: 'ed25519' }),
    };
  });
  afterAll(async () => {
    await browser?.close();
    keys?.cleanup();
  });

  it('shows each rule: whether it applies, who signed, how many more and who is waited on', async () => {
    const dir = await testDir();
    const register = initTestRegister(path.join(dir, 'register.db'));
    const cli = (args: string[]) =>
      runCli([...args, '--base-url', SERVICE, '--register', register, '--log-format', 'text'], { env: {} });
    const policyFile = path.join(dir, 'policy.json');
    await writeFile(
      policyFile,
      JSON.stringify({
        signers: Object.entries(team).map(([name, key]) => `${name}@corp ${key.publicKey}`),
        groups: { approvers: ['alice@corp', 'bob@corp'], treasury: ['carol@corp'], admins: ['alice@corp'] },
        rules: [
          { name: 'every batch', require: 1, from: 'approvers' },
          {
            name: 'large batches',
            when: { sendTotalOver: { USD: '1000.00' } },
            require: 2,
            from: 'approvers',
          },
          { name: 'pix payouts', when: { rails: ['PIX'] }, require: 1, from: 'treasury' },
        ],
        admins: { require: 1, from: 'admins' },
      }),
    );
    expect((await cli(['policy', 'set', policyFile, '--key', team.alice.path])).code).toBe(0);
    // Ana's two ACH rows: USD 2,625.50 to send, no PIX row.
    const sheet = path.join(dir, 'november.csv');
    await writeSheet(sheet, sampleRows().slice(0, 2));
    expect((await cli(['approve', sheet, '--key', team.alice.path])).code).toBe(0);

    const checked = await cli(['validate', sheet, '--json']);
    expect(checked.code, checked.stderr).toBe(0);
    const summary = JSON.parse(checked.stdout);
    expect(summary.policy).toEqual({
      version: 1,
      satisfied: false,
      rules: [
        {
          name: 'every batch',
          applies: true,
          require: 1,
          from: 'approvers',
          signed: ['alice@corp'],
          missing: 0,
          waitingOn: ['bob@corp'],
        },
        {
          name: 'large batches',
          applies: true,
          require: 2,
          from: 'approvers',
          signed: ['alice@corp'],
          missing: 1,
          waitingOn: ['bob@corp'],
        },
        {
          name: 'pix payouts',
          applies: false,
          require: 1,
          from: 'treasury',
          signed: [],
          missing: 0,
          waitingOn: ['carol@corp'],
        },
      ],
    });
    // status --approvals shows the same rules, beside who approved.
    const statusOf = (...args: string[]) =>
      runCli(['status', '--approvals', sheet, ...args, '--base-url', SERVICE, '--register', register], {
        env: {},
      });
    const status = await statusOf('--json');
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).policy).toEqual(summary.policy);
    const statusText = await statusOf();
    expect(statusText.stdout).toContain('approved by alice@corp');
    expect(statusText.stdout).toContain('large batches: 2 of approvers: signed by alice@corp, 1 more needed');
    const text = await cli(['validate', sheet, '--no-report']);
    expect(text.stderr).toContain('Approval policy version 1: not met');
    expect(text.stderr).toContain(
      'large batches: 2 of approvers: signed by alice@corp, 1 more needed (waiting on bob@corp)',
    );

    const page = await browser.newPage();
    try {
      await page.goto(pathToFileURL(summary.report).href);
      const section = page.locator('section.policy');
      await expect(section.locator('h2').textContent()).resolves.toBe('Approval policy (version 1)');
      const cells = await section
        .locator('tbody tr')
        .evaluateAll((rows) =>
          rows.map((row) => [...row.querySelectorAll('td')].map((td) => td.textContent)),
        );
      expect(cells).toEqual([
        ['every batch', 'yes', '1 of approvers', 'alice@corp', '', 'met'],
        ['large batches', 'yes', '2 of approvers', 'alice@corp', 'bob@corp', '1 more needed'],
        ['pix payouts', 'no', '1 of treasury', 'nobody', '', 'does not apply'],
      ]);
      await expect(section.locator('p').textContent()).resolves.toContain('a run sends nothing until it is');
    } finally {
      await page.close();
    }
  });

  it('gives policy null without a policy in the register', async () => {
    const dir = await testDir();
    const register = initTestRegister(path.join(dir, 'register.db'));
    const sheet = path.join(dir, 'november.csv');
    await writeSheet(sheet, sampleRows().slice(0, 1));
    const checked = await runCli(
      ['validate', sheet, '--json', '--no-report', '--base-url', SERVICE, '--register', register],
      {
        env: {},
      },
    );
    expect(JSON.parse(checked.stdout).policy).toBeNull();
  });
});
