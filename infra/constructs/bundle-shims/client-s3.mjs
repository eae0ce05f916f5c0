// The three parts of `@aws-sdk/client-s3` the service uses (shared/s3.ts), from the package's own
// files (see ../bundling.ts, ALIASES). Replaces the package's index in the bundles only: `shared/s3.ts`
// is loaded with `await import`, and esbuild then keeps the whole index (every command's schema).
// By relative path: the alias would send `@aws-sdk/client-s3/...` here again.
export { S3Client } from '../../../node_modules/@aws-sdk/client-s3/dist-es/S3Client.js';
export { GetObjectCommand } from '../../../node_modules/@aws-sdk/client-s3/dist-es/commands/GetObjectCommand.js';
export { PutObjectCommand } from '../../../node_modules/@aws-sdk/client-s3/dist-es/commands/PutObjectCommand.js';
