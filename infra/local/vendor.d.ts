// s3rver ships no type declarations; this is the part local mode uses.
declare module 's3rver' {
  export default class S3rver {
    constructor(options: { port: number; address: string; directory: string; silent?: boolean });
    run(): Promise<unknown>;
    close(): Promise<void>;
  }
}
