import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/**
 * What a release is built from: the functions' sources and lock file, and `infra/` (how they are
 * bundled, configured and wired: a changed alias, event source or bundling setting is a release too).
 */
export const RELEASE_SOURCES = ['functions', 'shared', 'infra', 'package-lock.json'] as const;

function files(path: string): string[] {
  try {
    return readdirSync(path, { withFileTypes: true }).flatMap((d) => files(join(path, d.name)));
  } catch {
    return [path];
  }
}

/** Every file a release digest covers, relative to `root`, sorted. */
export const releaseFiles = (root = ROOT): string[] =>
  RELEASE_SOURCES.flatMap((s) => files(join(root, s)))
    .map((f) => relative(root, f))
    .sort();

/**
 * A digest of a release: the sources of `RELEASE_SOURCES` and the settings every function gets
 * (resolved: as CloudFormation sees them).
 * Same code and settings, same digest (synth stays deterministic); anything else, a new one, which
 * is what makes the startup-sweep trigger run on every deployment that restarts the service.
 */
export function releaseDigest(settings: unknown, root = ROOT): string {
  const hash = createHash('sha256');
  for (const file of releaseFiles(root)) {
    hash
      .update(file)
      .update('\0')
      .update(readFileSync(join(root, file)))
      .update('\0');
  }
  hash.update(JSON.stringify(settings));
  return hash.digest('hex').slice(0, 32);
}
