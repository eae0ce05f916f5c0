import { randomBytes } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, storage } from '../../shared/clients.ts';
import { config } from '../../shared/config.ts';
import { attachment } from '../../shared/content-disposition.ts';
import { artifactObjectKey, artifactPut } from '../../shared/db/entities/artifact.ts';
import { artifactDownload } from '../../shared/domain/executions.ts';
import { PutObjectCommand } from '../../shared/s3.ts';

// An artifact's download name (issue 41, finding 9): a name with a character above U+00FF could not be
// downloaded (the S3 emulator answered 500 on the Content-Disposition it was given), and bidi
// controls such as U+202E reached the name the browser saves. The header is RFC 6266 with an ASCII
// `filename` and the whole name in RFC 5987's `filename*`, controls and invisible formatting stripped.

/** The name a browser saves: RFC 5987's `filename*` decoded (it wins over `filename` where both are). */
const savedName = (header: string) => {
  const ext = /filename\*=UTF-8''([^;]+)/.exec(header)?.[1];
  return ext === undefined ? undefined : decodeURIComponent(ext);
};
const fallbackName = (header: string) => /filename="([^"]*)"/.exec(header)?.[1];

async function artifactNamed(name: string) {
  const accountId = `acc_${randomBytes(8).toString('hex')}`;
  const executionId = `ex_${randomBytes(8).toString('hex')}`;
  const artifactId = `ar_${randomBytes(8).toString('hex')}`;
  const objectKey = artifactObjectKey(accountId, executionId, artifactId);
  const s3 = await storage();
  await s3.send(new PutObjectCommand({ Bucket: config().ARTIFACTS_BUCKET, Key: objectKey, Body: 'body', ContentType: 'text/plain' }));
  const { Put } = artifactPut({
    artifactId,
    accountId,
    executionId,
    stepId: 's',
    name,
    contentType: 'text/plain',
    size: 4,
    createdAt: Date.now(),
    objectKey,
  });
  await db().send(new PutCommand(Put));
  return { accountId, executionId, artifactId };
}

describe('an artifact download', () => {
  const cases: [string, string, string][] = [
    // name, the name saved, the ASCII fallback
    ['報告 2026.pdf', '報告 2026.pdf', '__ 2026.pdf'],
    ['résumé.txt', 'résumé.txt', 'r_sum_.txt'],
    ['report\u202Efdp.exe', 'reportfdp.exe', 'reportfdp.exe'],
    ['a\u2066b\u2069\u200Bc\u200Fd.txt', 'abcd.txt', 'abcd.txt'],
    ['line\r\nbreak\t\u0000\u0085.txt', 'linebreak.txt', 'linebreak.txt'],
    ['quote "q" back\\slash 100%.json', 'quote "q" back\\slash 100%.json', 'quote _q_ back_slash 100_.json'],
    ["it's (draft) *v2*.md", "it's (draft) *v2*.md", "it's (draft) *v2*.md"],
    ['🚀 launch.txt', '🚀 launch.txt', '__ launch.txt'],
    ['\u202E\u200B', '', ''],
  ];

  it('downloads any name: filename* in UTF-8, an ASCII fallback, controls and bidi characters stripped', async () => {
    for (const [name, saved, fallback] of cases) {
      const a = await artifactNamed(name);
      const link = await artifactDownload(a.accountId, a.executionId, a.artifactId);
      const res = await fetch(link.url);
      expect(res.status, `${JSON.stringify(name)}: ${res.status}`).toBe(200);
      expect(await res.text()).toBe('body');
      const header = res.headers.get('content-disposition') ?? '';
      expect(header).toMatch(/^attachment; filename="[\x20-\x7e]*"; filename\*=UTF-8''[A-Za-z0-9!#$&+.^_`|~%-]+$/);
      // A name with nothing left is the artifact's id.
      expect(savedName(header), JSON.stringify(name)).toBe(saved || a.artifactId);
      expect(fallbackName(header), JSON.stringify(name)).toBe(fallback || a.artifactId);
    }
  });

  it('encodes a lone surrogate instead of failing', () => {
    expect(attachment('a\uD800b.txt')).toBe(`attachment; filename="a_b.txt"; filename*=UTF-8''a%EF%BF%BDb.txt`);
  });
});
