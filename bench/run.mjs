// `npm run bench`: measures payouts against floors on the same files in the same run.
// Sections: sheet (validate vs csv-parse/exceljs floors), report (validate with and without the
// approver's report), sandbox (mixed API traffic at
// `payouts sandbox`, bench/sandbox.mjs), run (bench/run-bench.mjs), run-scale (runs of up to a
// million rows: memory, bench/run-scale.mjs), shared (runs sharing a
// PostgreSQL register, bench/shared-register.mjs), webhooks (the webhook receiver on SQLite and
// PostgreSQL, bench/webhooks.mjs). Run one with: npm run bench -- sheet
// Sizes: BENCH_CSV_ROWS (default 1,000,000), BENCH_XLSX_ROWS (default 100,000); the sandbox
// section's knobs are in bench/sandbox.mjs.
import { spawn } from 'node:child_process';
import { mkdir, open, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateCsv, generateXlsx } from './generate.mjs';
import { runSection } from './run-bench.mjs';
import { runScaleSection } from './run-scale.mjs';
import { sandboxSection } from './sandbox.mjs';
import { sharedSection } from './shared-register.mjs';
import { webhooksSection } from './webhooks.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const outDir = path.join(here, 'out');
const cli = path.join(root, 'dist', 'cli', 'main.js');
const MB = 1024 * 1024;

/** Runs `node args` with the RSS reporter preloaded; resolves to { seconds, maxRssBytes, code }. */
async function measure(args, { env = {} } = {}) {
  const report = path.join(outDir, `report-${process.pid}-${Math.random().toString(36).slice(2)}.json`);
  const child = spawn(process.execPath, ['--import', path.join(here, 'rss-report.mjs'), ...args], {
    cwd: root,
    env: { ...process.env, ...env, BENCH_REPORT: report },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const code = await new Promise((resolve) => child.on('close', resolve));
  const measured = JSON.parse(await readFile(report, 'utf8'));
  await rm(report, { force: true });
  return { ...measured, code, stderr };
}

const fmt = (n, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function sheetSection(results) {
  const csvRows = Number(process.env.BENCH_CSV_ROWS ?? 1_000_000);
  const xlsxRows = Number(process.env.BENCH_XLSX_ROWS ?? 100_000);
  const csv = path.join(outDir, `bench-${csvRows}.csv`);
  const xlsx = path.join(outDir, `bench-${xlsxRows}.xlsx`);
  console.log(`generating ${fmt(csvRows)}-row CSV and ${fmt(xlsxRows)}-row XLSX ...`);
  await generateCsv(csv, csvRows);
  await generateXlsx(xlsx, xlsxRows);

  for (const [format, file, rows, floorScript, target] of [
    ['csv', csv, csvRows, 'floor-csv.mjs', 0.6],
    ['xlsx', xlsx, xlsxRows, 'floor-xlsx.mjs', 0.7],
  ]) {
    const floor = await measure([
      path.join(here, floorScript),
      file,
      path.join(outDir, `floor-out.${format}`),
    ]);
    const ours = await measure([cli, 'validate', file, '--out', path.join(outDir, `validate-out.${format}`)]);
    if (ours.code !== 0) throw new Error(`payouts validate exited ${ours.code}: ${ours.stderr}`);
    const floorRate = rows / floor.seconds;
    const ourRate = rows / ours.seconds;
    const ratio = ourRate / floorRate;
    const entry = {
      format,
      rows,
      floorRowsPerSecond: Math.round(floorRate),
      validateRowsPerSecond: Math.round(ourRate),
      ratio: Number(ratio.toFixed(3)),
      target,
      floorPeakRssMB: Math.round(floor.maxRssBytes / MB),
      validatePeakRssMB: Math.round(ours.maxRssBytes / MB),
    };
    results.sheet.push(entry);
    console.log(
      `${format.toUpperCase()} ${fmt(rows)} rows: floor ${fmt(floorRate)} rows/s (${entry.floorPeakRssMB} MB), ` +
        `validate ${fmt(ourRate)} rows/s (${entry.validatePeakRssMB} MB peak RSS), ratio ${ratio.toFixed(2)} ` +
        `(target ≥ ${target}${format === 'csv' ? ', RSS < 200 MB' : ''}) ${ratio >= target ? 'OK' : 'BELOW TARGET'}`,
    );
  }
  await registerCase(results, csv, csvRows);
  await rm(csv, { force: true });
  await rm(xlsx, { force: true });
}

/**
 * `validate` on the CSV with a register of as many paid references as the sheet has
 * rows, read read-only and offline. Target: >= 0.6 of the csv-parse floor, peak RSS < 250 MB.
 * Each register is what a run of this version leaves behind: its payouts name their payee, and
 * every payee paid has a history, so `validate` reads the payee histories of every batch of rows
 * and compares the sheet with the previous batch. Four registers, each measured beside its own
 * floor run:
 * - next-sheet: an earlier sheet's references, paid 30 days ago to the same payees and accounts
 *   (next month's validate: every look-up misses, every payee is known);
 * - same-sheet: this sheet's references, paid yesterday as they are (every row `skipped`, with a
 *   message; the payee histories name this very sheet, whose own payouts are left out);
 * - edited-sheet: this sheet's references, paid yesterday for other amounts to other accounts
 *   (every row `invalid`, with both versions in its message: the costliest verdict);
 * - distinct-payees: same-sheet on a sheet whose rows pay most payees once each (the bench
 *   sheet's rows share 7 payees), so each row has a payee history of its own to read.
 * Each case is measured in TURNS turns (BENCH_TURNS, 5 by default).
 */
async function registerCase(results, csv, rows) {
  const service = 'http://127.0.0.1:9';
  const distinctCsv = path.join(outDir, `bench-${rows}-distinct.csv`);
  await generateCsv(distinctCsv, rows, { distinct: true });
  console.log(`filling four registers with ${fmt(rows)} paid references each ...`);
  const files = {
    ...(await fillRegisters(csv, service, ['next-sheet', 'same-sheet', 'edited-sheet'])),
    ...(await fillRegisters(distinctCsv, service, ['same-sheet'], 'distinct-payees')),
  };
  for (const [name, file] of Object.entries(files)) {
    const sheet = name === 'distinct-payees' ? distinctCsv : csv;
    const out = path.join(outDir, 'validate-register-out.csv');
    // In turns, floor then validate, TURNS times: the fastest of each is compared, so that one
    // slow moment of a shared machine does not decide; the peak RSS is the highest of the turns.
    let floor;
    let ours;
    // Every turn's seconds, floor and validate, for the record: how far the machine moved.
    const turns = [];
    for (let turn = 0; turn < TURNS; turn++) {
      await readThrough(sheet);
      const f = await measure([path.join(here, 'floor-csv.mjs'), sheet, path.join(outDir, 'floor-out.csv')]);
      await readThrough(file);
      const v = await measure([
        cli,
        'validate',
        sheet,
        '--register',
        file,
        '--base-url',
        service,
        '--out',
        out,
      ]);
      if (v.code !== (name === 'edited-sheet' ? 1 : 0))
        throw new Error(`payouts validate with the ${name} register exited ${v.code}: ${v.stderr}`);
      turns.push([Number(f.seconds.toFixed(1)), Number(v.seconds.toFixed(1))]);
      floor = floor === undefined || f.seconds < floor.seconds ? f : floor;
      ours = {
        seconds: Math.min(ours?.seconds ?? Infinity, v.seconds),
        maxRssBytes: Math.max(ours?.maxRssBytes ?? 0, v.maxRssBytes),
      };
    }
    const ratio = rows / ours.seconds / (rows / floor.seconds);
    const entry = {
      format: `csv+register:${name}`,
      rows,
      floorRowsPerSecond: Math.round(rows / floor.seconds),
      validateRowsPerSecond: Math.round(rows / ours.seconds),
      ratio: Number(ratio.toFixed(3)),
      target: 0.6,
      validatePeakRssMB: Math.round(ours.maxRssBytes / MB),
      turns: TURNS,
      floorAndValidateSeconds: turns,
    };
    results.sheet.push(entry);
    console.log(
      `CSV ${fmt(rows)} rows, register ${name} (${fmt(rows)} paid references): floor ${fmt(entry.floorRowsPerSecond)} rows/s, ` +
        `validate ${fmt(entry.validateRowsPerSecond)} rows/s (${entry.validatePeakRssMB} MB peak RSS), ratio ${ratio.toFixed(2)} ` +
        `(best of ${TURNS} turns; target ≥ 0.6, RSS < 250 MB) ${ratio >= 0.6 && entry.validatePeakRssMB < 250 ? 'OK' : 'BELOW TARGET'}` +
        ` - floor/validate seconds by turn: ${turns.map(([f, v]) => `${f}/${v}`).join(', ')}`,
    );
    await rm(out, { force: true });
  }
  for (const file of Object.values(files))
    for (const suffix of ['', '-wal', '-shm']) await rm(`${file}${suffix}`, { force: true });
  await rm(distinctCsv, { force: true });
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Reads a file once, so that what is measured next reads it from memory: this machine's host
 * pages out files not read for a minute, and a register read from its disk (about 100 MB/s)
 * added up to 9 s to a turn of `validate`, which compares time spent computing with the floor's.
 */
async function readThrough(file) {
  const handle = await open(file);
  try {
    const buffer = Buffer.alloc(1 << 20);
    while ((await handle.read(buffer, 0, buffer.length, null)).bytesRead > 0);
  } finally {
    await handle.close();
  }
}

/**
 * Turns of floor and validate per register case (registerCase). Five, not three: this host's
 * speed moves by a third within minutes (the same validate took 38 to 54 s of CPU time in four
 * runs of one hour), and a case of three turns could meet a slow moment in every validate turn
 * and a fast one in a floor turn (a floor of 14.1 s beside validate turns of 29 s or more).
 */
const TURNS = Number(process.env.BENCH_TURNS ?? 5);

/**
 * Registers of registerCase, filled in one read of the sheet; `prefix` names them apart. Rows
 * go in as `payouts run` writes them (register/store.ts), in one transaction: payouts naming
 * their payee (the keyed hash of its identity, and its name), and each payee's history built
 * with the register's own rules (withPayment), under the tag of the sheet that paid it. Returns
 * their files by name.
 */
async function fillRegisters(csv, service, names, prefix) {
  const { openSqliteRegister: openRegister } = await import(path.join(root, 'dist', 'register', 'sqlite.js'));
  const { prepareSheet } = await import(path.join(root, 'dist', 'batch', 'prepare.js'));
  const { BatchDigest } = await import(path.join(root, 'dist', 'batch', 'digest.js'));
  const { detailsOf } = await import(path.join(root, 'dist', 'register', 'details.js'));
  const { withPayment } = await import(path.join(root, 'dist', 'register', 'rules.js'));
  const { historyFromText, historyText } = await import(
    path.join(root, 'dist', 'register', 'history-text.js')
  );
  const { PayeeWarnings, encodeWarnings } = await import(path.join(root, 'dist', 'batch', 'warnings.js'));
  const { default: Database } = await import('libsql');
  const now = Date.now();
  const iso = (ms) => new Date(ms).toISOString();
  // This sheet's tag, as a run of it names its payouts in the payee histories.
  const tagged = await prepareSheet({ sheetPath: csv });
  const digest = new BatchDigest(tagged.header.index);
  for await (const batch of tagged.batches)
    for (const row of batch) if (row.issues.length === 0 && row.totals === undefined) digest.add(row);
  const { tag } = digest.finish();
  const targets = [];
  for (const name of names) {
    const file = path.join(outDir, `bench-register-${prefix ?? name}.db`);
    for (const suffix of ['', '-wal', '-shm']) await rm(`${file}${suffix}`, { force: true });
    const register = openRegister(file);
    const store = await register.openScope({ service, integratorId: 'bench' });
    const paidAt = iso(now - (name === 'next-sheet' ? 30 : 1) * DAY_MS);
    await store.beginRun({
      id: 'bench-run',
      sheet: name === 'next-sheet' ? 'april.csv' : path.basename(csv),
      digest: 'd',
      host: 'bench',
      pid: 1,
      startedAt: paidAt,
    });
    await store.finishRun('bench-run', { rows: 0, statuses: {}, exitCode: 0 });
    await register.close();
    const db = new Database(file);
    db.exec('BEGIN');
    const insert = db.prepare(
      `INSERT INTO payouts (scope_id, reference, amount, currency, rail, payee, payee_hint, state,
         idempotency_key, transaction_id, run_id, sheet, paid_at, updated_at, payee_key, payee_name, warnings)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'submitted', ?, ?, 'bench-run', ?, ?, ?, ?, ?, ?)`,
    );
    const insertHistory = db.prepare(
      'INSERT INTO payee_history (scope_id, payee, history, updated_at) VALUES (?, ?, ?, ?)',
    );
    targets.push({
      name: prefix ?? name,
      kind: name,
      file,
      db,
      insert,
      insertHistory,
      store,
      scopeId: store.scope.id,
      paidAt,
      sheet: name === 'next-sheet' ? 'april.csv' : path.basename(csv),
      batch: name === 'same-sheet' ? tag : `${name}-${'0'.repeat(64 - name.length - 1)}`,
      payees: new Map(),
      histories: new Map(),
    });
  }
  const prepared = await prepareSheet({ sheetPath: csv });
  // Each payout keeps the warnings its run judged: this sheet's first month, every payee new.
  const judged = new PayeeWarnings(undefined, now);
  let i = 0;
  for await (const batch of prepared.batches) {
    for (const row of batch) {
      const kept = encodeWarnings(judged.of(row));
      for (const target of targets) {
        const { kind, insert, store, scopeId, paidAt } = target;
        const d = detailsOf(row.payout, (canonical) => store.fingerprint(canonical));
        const reference = kind === 'next-sheet' ? `APRIL-${i}` : row.payout.reference;
        const edited = kind === 'edited-sheet';
        const amount = edited ? '1.00' : d.amount;
        const account = edited ? 'another payee' : d.payee;
        let payee = row.payee === undefined ? undefined : target.payees.get(row.payee.key);
        if (row.payee !== undefined && payee === undefined) {
          payee = store.fingerprint(`payee:${row.payee.key}`);
          target.payees.set(row.payee.key, payee);
        }
        insert.run(
          scopeId,
          reference,
          amount,
          d.currency,
          d.rail,
          account,
          d.payeeHint,
          `key-${i}`,
          `tx-${i}`,
          target.sheet,
          paidAt,
          paidAt,
          payee ?? null,
          row.payee?.name ?? null,
          kept,
        );
        if (payee === undefined) continue;
        const held = target.histories.get(payee);
        const payment = {
          account,
          accountHint: d.payeeHint,
          reference,
          rail: d.rail,
          paidAt,
          amount,
          currency: d.currency,
        };
        const history = withPayment(held && historyFromText(held), payment, target.batch, row.payee.name);
        target.histories.set(payee, historyText(history));
      }
      i += 1;
    }
  }
  const files = {};
  for (const { name, file, db, insertHistory, scopeId, histories, paidAt } of targets) {
    for (const [payee, history] of histories) insertHistory.run(scopeId, payee, history, paidAt);
    db.exec('COMMIT');
    db.close();
    files[name] = file;
  }
  return files;
}

/**
 * The approver's report: `validate` on the 1M-row CSV with its default report and with
 * `--no-report`, measured in turns (three each, the best of each kept, so that one slow moment of
 * the machine does not decide). Target: the report costs at most 10% more time and 30 MB more
 * peak RSS, and weighs under 2 MB.
 */
async function reportSection(results) {
  const rows = Number(process.env.BENCH_CSV_ROWS ?? 1_000_000);
  const csv = path.join(outDir, `bench-${rows}.csv`);
  console.log(`generating ${fmt(rows)}-row CSV ...`);
  await generateCsv(csv, rows);
  const out = path.join(outDir, 'validate-report-out.csv');
  const page = path.join(outDir, 'validate-report.html');
  const best = { with: undefined, without: undefined };
  for (let turn = 0; turn < 3; turn++) {
    for (const [name, extra] of [
      ['without', ['--no-report']],
      ['with', ['--report', page]],
    ]) {
      const m = await measure([cli, 'validate', csv, '--out', out, ...extra]);
      if (m.code !== 0) throw new Error(`payouts validate ${extra.join(' ')} exited ${m.code}: ${m.stderr}`);
      const kept = best[name];
      best[name] = {
        seconds: Math.min(kept?.seconds ?? Infinity, m.seconds),
        maxRssBytes: Math.min(kept?.maxRssBytes ?? Infinity, m.maxRssBytes),
      };
    }
  }
  const { size } = await import('node:fs').then((fs) => fs.statSync(page));
  const timeRatio = best.with.seconds / best.without.seconds;
  const rssMB = (best.with.maxRssBytes - best.without.maxRssBytes) / MB;
  const ok = timeRatio <= 1.1 && rssMB <= 30 && size < 2 * MB;
  results.report = {
    rows,
    withoutSeconds: Number(best.without.seconds.toFixed(2)),
    withSeconds: Number(best.with.seconds.toFixed(2)),
    timeRatio: Number(timeRatio.toFixed(3)),
    withoutPeakRssMB: Math.round(best.without.maxRssBytes / MB),
    withPeakRssMB: Math.round(best.with.maxRssBytes / MB),
    reportKB: Math.round(size / 1024),
  };
  console.log(
    `validate ${fmt(rows)} rows: --no-report ${best.without.seconds.toFixed(2)} s (${results.report.withoutPeakRssMB} MB), ` +
      `with the report ${best.with.seconds.toFixed(2)} s (${results.report.withPeakRssMB} MB), ` +
      `+${((timeRatio - 1) * 100).toFixed(1)}% time, ${rssMB >= 0 ? '+' : ''}${rssMB.toFixed(0)} MB, report ${fmt(size / 1024)} KB ` +
      `(target ≤ +10%, ≤ +30 MB, < 2 MB) ${ok ? 'OK' : 'BELOW TARGET'}`,
  );
  for (const file of [csv, out, page]) await rm(file, { force: true });
}

const SECTIONS = {
  sheet: sheetSection,
  report: reportSection,
  sandbox: sandboxSection,
  run: runSection,
  'run-scale': runScaleSection,
  shared: sharedSection,
  webhooks: webhooksSection,
};

async function main() {
  const only = process.argv.slice(2);
  await mkdir(outDir, { recursive: true });
  const results = { node: process.version, date: new Date().toISOString(), sheet: [] };
  for (const [name, run] of Object.entries(SECTIONS)) {
    if (only.length > 0 && !only.includes(name)) continue;
    console.log(`\n== ${name}`);
    await run(results);
  }
  await writeFile(path.join(outDir, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nfigures written to ${path.relative(root, path.join(outDir, 'results.json'))}`);
}

await main();
