// `@stablelib/base64` as the `standardwebhooks` package uses it (encode, decode), from Node's Buffer
// (see ../bundling.ts, ALIASES; test/unit/bundle-shims.test.ts compares the two). Decoding refuses
// what the original refuses: fewer than 4 characters, more than two `=` at the end, or any character
// outside the standard alphabet before them.
exports.encode = (data) => Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');

exports.decode = (s) => {
  if (s.length === 0) return new Uint8Array(0);
  const body = s.replace(/={0,3}$/, '');
  if (s.length < 4 || s.length - body.length > 2) throw new Error('Base64Coder: incorrect padding');
  // Like the original, a last character that completes no byte is not read at all.
  const read = body.length % 4 === 1 ? body.slice(0, -1) : body;
  if (/[^A-Za-z0-9+/]/.test(read)) throw new Error('Base64Coder: incorrect characters for decoding');
  return new Uint8Array(Buffer.from(read, 'base64'));
};
