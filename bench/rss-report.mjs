// Preloaded into a benchmarked child (node --import): on exit, writes the process's peak RSS
// (bytes), wall time and CPU time to the file named by BENCH_REPORT, so the parent measures the child
// exactly, whatever the child is.
import { writeFileSync } from 'node:fs';

const started = process.hrtime.bigint();
process.on('exit', () => {
  const file = process.env.BENCH_REPORT;
  if (!file) return;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const usage = process.resourceUsage();
  const cpuSeconds = (usage.userCPUTime + usage.systemCPUTime) / 1e6;
  writeFileSync(file, JSON.stringify({ maxRssBytes: usage.maxRSS * 1024, seconds, cpuSeconds }));
});
