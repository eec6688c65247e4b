import { describe, expect, it } from 'vitest';
import { blockedWayOut, type WayOutFailure } from '../../../protocol/index.js';

const failure = (kind: WayOutFailure['kind'], words: string): WayOutFailure => ({
  remote: 'origin',
  step: 'lfs_endpoint',
  kind,
  transport: 'http',
  sshAgent: false,
  words,
  timeoutSeconds: 60,
  endpoint: 'https://git.example.invalid/r.git/info/lfs',
});

describe('a Git LFS endpoint that did not answer the rehearsal, named with its fix', () => {
  it('asks for credentials: a credential helper for that endpoint', () => {
    const { cause, fix } = blockedWayOut(failure('credentials', 'Git credentials for https://git.example.invalid/r.git not found'));
    expect(cause).toBe(
      "the repository uses Git LFS and origin's LFS endpoint (https://git.example.invalid/r.git/info/lfs) asks for credentials the daemon's environment cannot give (it never prompts): Git credentials for https://git.example.invalid/r.git not found",
    );
    expect(fix).toMatch(/^configure a credential helper that needs no terminal for that endpoint/);
  });

  it('serves no LFS API: enable it on the server, never an endpoint .lfsconfig names', () => {
    const { cause, fix } = blockedWayOut(failure('rejected', 'Repository or object not found'));
    expect(cause).toMatch(/does not serve the Git LFS API: Repository or object not found$/);
    expect(fix).toMatch(/^enable Git LFS for the repository on the server .*never to one \.lfsconfig names/);
  });

  it('does not answer, or not in time', () => {
    expect(blockedWayOut(failure('timed_out', '')).cause).toMatch(/did not answer within 60 s$/);
    expect(blockedWayOut(failure('unreachable', 'dial tcp: connection refused')).cause).toMatch(/does not answer: dial tcp: connection refused$/);
  });
});
