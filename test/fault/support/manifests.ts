import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isCycleId } from '../../../protocol/index.js';
import { ManifestSchema, type Manifest } from '../../../schemas/index.js';
import { createAjv } from '../../../daemon/schema-check.js';

const validate = createAjv().compile(ManifestSchema);
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

export interface ManifestOnDisk {
  readonly path: string;
  readonly sha256: string;
  readonly manifest: Manifest;
}

/**
 * Every manifest revision under `<repo>/.session-handoff/<cycle>/` (out leg and `return/`): each must
 * parse, validate against the schema and match the sha256 of every artifact it lists. Temp files a
 * crash left behind (`.name.tmp.*`) are not manifests and are counted separately.
 */
export function readAllManifests(root: string): { manifests: ManifestOnDisk[]; problems: string[]; temps: number } {
  const dir = join(root, '.session-handoff');
  const manifests: ManifestOnDisk[] = [];
  const problems: string[] = [];
  let temps = 0;
  if (!existsSync(dir)) return { manifests, problems, temps };
  for (const cycle of readdirSync(dir).filter(isCycleId)) {
    for (const sub of ['', 'return']) {
      const legDir = join(dir, cycle, sub);
      if (!existsSync(legDir)) continue;
      for (const name of readdirSync(legDir)) {
        if (name.startsWith('.') && name.includes('.tmp.')) temps += 1;
        if (!/^manifest(\.\d+)?\.json$/.test(name)) continue;
        const path = join(legDir, name);
        const bytes = readFileSync(path);
        let manifest: Manifest;
        try {
          manifest = JSON.parse(bytes.toString('utf8')) as Manifest;
        } catch {
          problems.push(`${path} does not parse`);
          continue;
        }
        if (!validate(manifest)) {
          problems.push(`${path} does not match the schema: ${JSON.stringify(validate.errors?.slice(0, 2))}`);
          continue;
        }
        if (manifest.cycle_id !== cycle) problems.push(`${path} names cycle ${manifest.cycle_id}`);
        for (const artifact of manifest.integrity.artifacts) {
          const artifactPath = join(dir, cycle, artifact.path);
          if (!existsSync(artifactPath)) problems.push(`${artifactPath} is missing`);
          else if (sha256(readFileSync(artifactPath)) !== artifact.sha256) problems.push(`${artifactPath} does not match its manifest`);
        }
        manifests.push({ path, sha256: sha256(bytes), manifest });
      }
    }
  }
  return { manifests, problems, temps };
}
