import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** What the deployed functions are built from. */
const SOURCES = ['functions', 'shared', 'package-lock.json'];

function files(path: string): string[] {
  try {
    return readdirSync(path, { withFileTypes: true }).flatMap((d) => files(join(path, d.name)));
  } catch {
    return [path];
  }
}

/**
 * A digest of a release: the functions' sources and lock file, and the settings every function gets
 * (resolved: as CloudFormation sees them).
 * Same code and settings, same digest (synth stays deterministic); anything else, a new one, which
 * is what makes the startup-sweep trigger run on every deployment that restarts the service.
 */
export function releaseDigest(settings: unknown): string {
  const hash = createHash('sha256');
  for (const file of SOURCES.flatMap((s) => files(join(ROOT, s))).sort()) {
    hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  hash.update(JSON.stringify(settings));
  return hash.digest('hex').slice(0, 32);
}
