// The S3 parts the service uses, in one module that is loaded on first use (`await import`): the
// functions that never touch S3 skip its cost at a cold start, and the bundles keep only these.
export { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
