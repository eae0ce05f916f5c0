// `fast-sha256` (a SHA-256 in JavaScript, 6 KiB) as the `standardwebhooks` package uses it: its HMAC,
// from Node's crypto (see ../bundling.ts, ALIASES; test/unit/bundle-shims.test.ts compares the two).
const { createHmac } = process.getBuiltinModule('node:crypto');

exports.hmac = (key, data) => new Uint8Array(createHmac('sha256', key).update(data).digest());
