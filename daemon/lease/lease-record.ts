import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../store/index.js';
import { workspaceDir } from '../workspaces/workspace-dir.js';

/** The holder's credential for the return leg, written by the daemon beside the receiver's work. */
export interface LeaseRecord {
  readonly cycle: string;
  readonly home: string;
  readonly executor: string;
  readonly token: number;
}

const LEASE_FILE = 'lease.json';

export const writeLeaseRecord = (checkout: string, record: LeaseRecord): Promise<void> =>
  writeFileAtomic(join(workspaceDir(checkout), LEASE_FILE), `${JSON.stringify(record, null, 2)}\n`, 0o600);

export async function readLeaseRecord(checkout: string): Promise<LeaseRecord | null> {
  try {
    return JSON.parse(await readFile(join(workspaceDir(checkout), LEASE_FILE), 'utf8')) as LeaseRecord;
  } catch {
    return null;
  }
}
