// An S3-compatible server for tests (s3rver, files in a temporary directory), on a free loopback port
// with one bucket: `startS3()` gives the settings the app reads (STORAGE=s3, S3_*) and a client for the
// test to look inside the bucket. Stop it with stop(); its files are removed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import type { S3Settings } from '../../src/config.js';
import { createS3Client } from '../../src/storage/s3-storage.js';

export interface TestS3 {
  endpoint: string;
  bucket: string;
  settings: S3Settings;
  /** The environment that makes the app store its files in this bucket. */
  env: Record<string, string>;
  client: S3Client;
  /** Every object key in the bucket, sorted. */
  objectKeys(): Promise<string[]>;
  /** Moves an object's last-modified time into the past (s3rver keeps it as its file's mtime). */
  age(key: string, ms: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startS3({ bucket = 'funil-test' }: { bucket?: string } = {}): Promise<TestS3> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  // s3rver accepts these fixed credentials (any signature made with them).
  const settings: S3Settings = {
    bucket,
    endpoint,
    region: 'us-east-1',
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    forcePathStyle: true,
  };
  const client = createS3Client(settings);
  return {
    endpoint,
    bucket,
    settings,
    env: s3Env(settings),
    client,
    async objectKeys() {
      const keys: string[] = [];
      let ContinuationToken: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken }));
        for (const object of page.Contents ?? []) keys.push(object.Key!);
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
      return keys.sort();
    },
    async age(key, ms) {
      const past = new Date(Date.now() - ms);
      const file = path.join(directory, bucket, `${key}._S3rver_object`);
      // s3rver may answer a PUT a moment before its file is in place (seen on a loaded machine).
      for (const until = Date.now() + 10_000; !fs.existsSync(file) && Date.now() < until;) await new Promise((r) => setTimeout(r, 20));
      fs.utimesSync(file, past, past);
    },
    async stop() {
      client.destroy();
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}

export function s3Env(settings: S3Settings): Record<string, string> {
  return {
    STORAGE: 's3',
    S3_BUCKET: settings.bucket,
    S3_ENDPOINT: settings.endpoint ?? '',
    S3_REGION: settings.region,
    S3_ACCESS_KEY_ID: settings.accessKeyId ?? '',
    S3_SECRET_ACCESS_KEY: settings.secretAccessKey ?? '',
    S3_FORCE_PATH_STYLE: String(settings.forcePathStyle),
  };
}
