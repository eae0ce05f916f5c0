// A stand-in handler module for test/infra/placement.test.ts: a route inserted into the route table there
// names it (synth without bundling only checks that the module exists).
export const handler = async () => ({ statusCode: 204 });
