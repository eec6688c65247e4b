#!/usr/bin/env node
// `npm run demo`: one full cycle NORMAL → PREPARE → EVACUATE → HANDOFF_READY → TAKEOVER →
// RETURN_HANDOFF_READY → CLOSED, narrated, on a scratch repository with a bare remote and a throw-away
// daemon. Driven by real payload shapes (payloads/, copies of the project's telemetry fixtures) with
// their paths, times and percentages rewritten to this run.
//
//   node examples/demo/run-demo.mjs [--dir DIR] [--clean] [--quiet]
//     --dir DIR   build the scratch repositories in DIR (default: a new temp dir, kept for you to look at)
//     --clean     remove the scratch dir at the end
//     --quiet     print the narration only, not each command's output
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../dist/bin/handoff.js', import.meta.url));
const PAYLOADS = new URL('./payloads/', import.meta.url);
const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name) => {
  const at = args.indexOf(name);
  return at === -1 ? undefined : args[at + 1];
};

const colour = process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code, text) => (colour ? `\u001b[${code}m${text}\u001b[0m` : text);
const say = (text) => console.log(`\n${paint('1;36', '──')} ${paint(1, text)}`);
const note = (text) => console.log(`   ${text}`);

if (!existsSync(CLI)) {
  console.error(`error: ${CLI} is missing\nhint: run \`npm run build\` first (npm run demo does)`);
  process.exit(69);
}

const base = option('--dir') ?? mkdtempSync(join(tmpdir(), 'handoff-demo-'));
mkdirSync(base, { recursive: true });
const root = realpathSync(base);
const stateDir = join(root, 'state');
const remote = join(root, 'remote.git');
const laptop = join(root, 'laptop');
const rescue = join(root, 'rescue');
const env = {
  ...process.env,
  HANDOFF_STATE_DIR: stateDir,
  GIT_AUTHOR_NAME: 'demo',
  GIT_AUTHOR_EMAIL: 'demo@example.invalid',
  GIT_COMMITTER_NAME: 'demo',
  GIT_COMMITTER_EMAIL: 'demo@example.invalid',
  NO_COLOR: '1',
};
delete env.HANDOFF_TEST_KILL_AFTER_STEP;

const git = (cwd, ...gitArgs) => execFileSync('git', gitArgs, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** Runs `handoff …` as a user would; shows the command and its output; fails the demo on a surprise. */
function handoff(cwd, handoffArgs, { input, expect = [0], show = true } = {}) {
  const where = cwd === laptop ? 'laptop' : cwd === rescue ? 'rescue' : cwd;
  if (show) console.log(`   ${paint(2, `${where}$`)} handoff ${handoffArgs.join(' ')}`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...handoffArgs], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (show && !flag('--quiet')) {
        for (const line of `${stdout}${stderr}`.trimEnd().split('\n')) if (line !== '') console.log(`     ${line}`);
      }
      if (!expect.includes(code)) reject(new Error(`handoff ${handoffArgs.join(' ')} exited ${code}\n${stdout}${stderr}`));
      else resolve({ code, stdout, stderr, json: handoffArgs.includes('--json') ? JSON.parse(stdout) : null });
    });
    child.stdin.end(input ?? '');
  });
}

const state = async (cwd) => (await handoff(cwd, ['status', '--json'], { show: false })).json.data.state;

async function until(what, probe, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

function expectState(actual, wanted) {
  if (actual !== wanted) throw new Error(`expected ${wanted}, the daemon says ${actual}`);
  console.log(`   ${paint('1;32', '✓')} state ${paint(1, actual)}`);
}

// ---------------------------------------------------------------- real payloads, rewritten to now

const nowS = () => Math.floor(Date.now() / 1000);

/** The Claude Code status line payload, as Claude Code pipes it to its statusLine command. */
function statusLine(fiveHourPercent) {
  const payload = JSON.parse(readFileSync(new URL('claude-statusline.json', PAYLOADS), 'utf8'));
  payload.cwd = laptop;
  payload.workspace.current_dir = laptop;
  payload.workspace.project_dir = laptop;
  payload.rate_limits.five_hour.used_percentage = fiveHourPercent;
  // The fixture's windows reset in 2026-08; a reading whose window has reset is not credible.
  payload.rate_limits.five_hour.resets_at = nowS() + 3 * 3600;
  payload.rate_limits.seven_day.resets_at = nowS() + 5 * 86400;
  return JSON.stringify(payload);
}

/** A Codex CLI rollout file (JSONL), as Codex writes it under ~/.codex/sessions. */
function codexRollout(cwd) {
  const lines = readFileSync(new URL('codex-rollout.jsonl', PAYLOADS), 'utf8').trim().split('\n');
  const start = Date.parse(JSON.parse(lines[0]).timestamp);
  return lines
    .map((text) => {
      const line = JSON.parse(text);
      line.timestamp = new Date(Date.now() - 60_000 + (Date.parse(line.timestamp) - start) / 10).toISOString();
      if (line.payload.cwd) line.payload.cwd = cwd;
      for (const window of [line.payload.rate_limits?.primary, line.payload.rate_limits?.secondary]) {
        if (window) window.resets_at = nowS() + window.window_minutes * 60 - 600;
      }
      return JSON.stringify(line);
    })
    .join('\n');
}

// ---------------------------------------------------------------- the story

let daemon;
try {
  say(`Scratch world in ${root}`);
  git(root, 'init', '-q', '--bare', '-b', 'main', remote);
  git(root, 'init', '-q', '-b', 'main', laptop);
  mkdirSync(join(laptop, 'src'));
  writeFileSync(join(laptop, 'README.md'), '# acme-api\n');
  writeFileSync(join(laptop, 'AGENTS.md'), '# Rules for agents\nRun the tests before you hand over.\n');
  writeFileSync(join(laptop, 'src', 'auth.ts'), 'export const retries = 1;\n');
  git(laptop, 'add', '.');
  git(laptop, 'commit', '-q', '-m', 'initial');
  git(laptop, 'remote', 'add', 'origin', remote);
  git(laptop, 'push', '-q', '-u', 'origin', 'main');
  git(root, 'clone', '-q', remote, rescue);
  note(`remote.git  a bare remote (think: GitHub)`);
  note(`laptop/     the primary checkout, where a Claude Code session works`);
  note(`rescue/     a second clone, where an emergency executor will take over`);
  note(`state/      the daemon's private state dir (token, journal, log)`);

  daemon = spawn(process.execPath, [CLI, 'daemon', '--port', '0'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let daemonErr = '';
  daemon.stderr.on('data', (chunk) => (daemonErr += chunk));
  await until('the daemon', async () => {
    if (daemon.exitCode !== null) throw new Error(`the daemon exited: ${daemonErr}`);
    return existsSync(join(stateDir, 'daemon.json'));
  });
  note(`the daemon listens on ${daemonErr.trim().replace(/^handoff daemon listening on /, '')}`);

  say('1. NORMAL — the agent reports its real quota through the status line');
  note('Claude Code pipes this JSON to its statusLine command after every message; here it is fed by hand.');
  await handoff(laptop, ['ingest', 'claude-statusline'], { input: statusLine(23.5) });
  expectState(await state(laptop), 'NORMAL');

  say('2. PREPARE — the five-hour window passes 80 %');
  writeFileSync(join(laptop, 'src', 'auth.ts'), 'export const retries = 3;\n');
  writeFileSync(join(laptop, 'src', 'auth.test.ts'), "import { retries } from './auth';\nif (retries !== 3) throw new Error('flaky');\n");
  note('The session kept working (src/auth.ts changed, src/auth.test.ts is new and untracked).');
  await handoff(laptop, ['ingest', 'claude-statusline'], { input: statusLine(83) });
  expectState(await state(laptop), 'PREPARE');
  note('The agent keeps working and refreshes its continuation capsule:');
  const capsule = join(root, 'capsule.json');
  writeFileSync(
    capsule,
    JSON.stringify({
      objective: 'Fix the flaky auth tests',
      acceptance_criteria: ['npm test passes ten times in a row'],
      work: { completed: ['found the race in the token refresh'], in_progress: ['raise retries to 3 in src/auth.ts'], remaining: ['add a regression test'] },
      decisions: ['retry instead of a longer timeout: the timeout hides real failures'],
      do_not_repeat: ['do not mock the clock in the auth tests'],
      first_files: ['src/auth.ts', 'src/auth.test.ts'],
      next_action: 'Run the auth tests ten times and commit src/auth.ts with its test',
    }),
  );
  await handoff(laptop, ['capsule', 'set', '--file', capsule]);
  await handoff(laptop, ['status']);

  say('3. EVACUATE — the window passes 90 %: finish the atomic step, checkpoint, offer the lease');
  await handoff(laptop, ['ingest', 'claude-statusline'], { input: statusLine(92) });
  expectState(await state(laptop), 'EVACUATE');
  note('The agent finishes only its current atomic step and says so:');
  await handoff(laptop, ['drained']);
  note('The daemon inspects, validates, snapshots the work tree onto handoff/<cycle> without touching');
  note('the index, HEAD or files, pushes that branch, reads it back from the remote, writes the package.');

  say('4. HANDOFF_READY — the work is recoverable from the remote; the lease is on offer');
  await until(
    'HANDOFF_READY',
    async () => (await state(laptop)) === 'HANDOFF_READY' || (await handoff(laptop, ['status', '--json'], { show: false })).json.data.blocked,
  );
  const ready = (await handoff(laptop, ['status', '--json'], { show: false })).json.data;
  if (ready.blocked) throw new Error(`the drain is blocked: ${ready.blocked}`);
  expectState(ready.state, 'HANDOFF_READY');
  const cycle = ready.cycle.id;
  note(`cycle ${cycle}; the remote now has:`);
  for (const line of git(laptop, 'ls-remote', remote, 'refs/heads/handoff/*').split('\n')) note(`  ${line}`);
  note(`the user's own branch is untouched: ${git(laptop, 'status', '--short').split('\n').join(', ')}`);
  const handoffMd = join(laptop, '.session-handoff', cycle, 'HANDOFF.md');
  note(`HANDOFF.md begins:`);
  for (const line of readFileSync(handoffMd, 'utf8').split('\n').slice(0, 5)) note(`  ${paint(2, '│')} ${line}`);

  say('5. TAKEOVER — an emergency executor verifies everything, then takes the lease');
  await handoff(rescue, ['verify', cycle]);
  await handoff(rescue, ['accept', cycle, '--as', 'rescue-agent']);
  expectState(await state(laptop), 'TAKEOVER');
  note('The rescue agent (a Codex session) reports its own quota from its rollout file:');
  const rollout = join(root, 'rollout-rescue.jsonl');
  writeFileSync(rollout, `${codexRollout(rescue)}\n`);
  await handoff(rescue, ['ingest', 'codex-rollout', '--file', rollout]);
  note('It works: it finishes the change and adds the regression test.');
  writeFileSync(
    join(rescue, 'src', 'auth.test.ts'),
    "import { retries } from './auth';\nif (retries !== 3) throw new Error('flaky');\n// regression: the token refresh race\n",
  );
  writeFileSync(join(rescue, 'NOTES.md'), 'Ran the auth tests ten times: green.\n');

  say('6. RETURN_HANDOFF_READY — the executor hands the work back (the return leg)');
  await handoff(rescue, ['return', '--no-wait']);
  expectState(await state(laptop), 'RETURN_HANDOFF_READY');

  say('7. CLOSED — the primary verifies the returned work and takes the lease back');
  await handoff(laptop, ['accept', cycle, '--return', '--as', 'primary']);
  expectState(await state(laptop), 'CLOSED');
  note(`laptop/ now has the rescued work: ${git(laptop, 'status', '--short').split('\n').join(', ')}`);
  await handoff(laptop, ['status']);

  say('Where to look');
  note(`HANDOFF.md of the out leg:     ${handoffMd}`);
  note(`HANDOFF.md of the return leg:  ${join(laptop, '.session-handoff', cycle, 'return', 'HANDOFF.md')}`);
  note(`the manifests beside them:     manifest.json (out), return/manifest.json (return)`);
  note(`the checkpoints on the remote: git -C ${remote} log --oneline --all`);
  note(`every change, in order:        ${join(stateDir, 'journal.jsonl')}`);
  note(`the dashboard:                 HANDOFF_STATE_DIR=${stateDir} handoff daemon &  then  handoff open`);
  note(`                               (from a clone: node dist/bin/handoff.js instead of handoff)`);
} catch (error) {
  console.error(`\n${paint('1;31', 'demo failed:')} ${error.message}`);
  process.exitCode = 1;
} finally {
  if (daemon !== undefined && daemon.exitCode === null) {
    await handoff(laptop, ['daemon', 'stop'], { show: false, expect: [0, 69, 75] }).catch(() => daemon.kill('SIGTERM'));
  }
  if (flag('--clean')) rmSync(root, { recursive: true, force: true });
  else console.log(`\n(the scratch dir stays for you to look at: rm -rf ${root})`);
}
