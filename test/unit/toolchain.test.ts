import { describe, expect, it } from 'vitest';

describe('toolchain', () => {
  it('runs on Node.js 24, the Lambda runtime, not the machine default', () => {
    expect(Number(process.versions.node.split('.')[0])).toBe(24);
  });
});
