import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bodyOf, generated, SOURCES } from '../../infra/console/assets.ts';
import { ASSET } from '../../shared/console/asset-names.generated.ts';
import { BODIES } from '../../shared/console/asset-bodies.generated.ts';

describe("the console's generated asset modules", () => {
  it('are what `npm run assets` writes from the files as they are now (run it after changing an asset or a package)', () => {
    for (const [file, text] of Object.entries(generated())) expect(readFileSync(file, 'utf8'), file).toBe(text);
  });

  it('name every asset by a hash of its content, and hold its body under that name', () => {
    expect(Object.keys(ASSET).sort()).toEqual(SOURCES.map((s) => s.key).sort());
    for (const s of SOURCES) {
      const name = (ASSET[s.key] as string).split('/').pop() as string;
      expect(BODIES[name]?.body).toBe(bodyOf(s));
      expect(BODIES[name]?.type).toBe(s.type);
    }
  });
});
