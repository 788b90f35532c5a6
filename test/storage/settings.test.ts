// STORAGE and the S3_* settings: disk by default, s3 with its bucket; settings that cannot work are
// refused at start, naming them.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

function configError(env: Record<string, string>): string {
  try {
    loadConfig({ NODE_ENV: 'test', ...env });
  } catch (e) {
    if (e instanceof ConfigError) return e.message;
    throw e;
  }
  throw new Error('the configuration was accepted');
}

describe('storage settings', () => {
  it('defaults to the directory, and reads a bucket with STORAGE=s3', () => {
    expect(loadConfig({ NODE_ENV: 'test' }).storage).toEqual({ kind: 'disk' });
    expect(loadConfig({ NODE_ENV: 'test', STORAGE: 's3', S3_BUCKET: 'arquivos' }).storage).toEqual({
      kind: 's3',
      bucket: 'arquivos',
      endpoint: undefined,
      region: 'us-east-1',
      accessKeyId: undefined,
      secretAccessKey: undefined,
      forcePathStyle: false,
    });
    const all = {
      STORAGE: 's3',
      S3_BUCKET: 'b',
      S3_ENDPOINT: 'http://minio:9000',
      S3_REGION: 'sa-east-1',
      S3_ACCESS_KEY_ID: 'id',
      S3_SECRET_ACCESS_KEY: 'segredo',
      S3_FORCE_PATH_STYLE: 'true',
    };
    expect(loadConfig({ NODE_ENV: 'test', ...all }).storage).toEqual({
      kind: 's3',
      bucket: 'b',
      endpoint: 'http://minio:9000',
      region: 'sa-east-1',
      accessKeyId: 'id',
      secretAccessKey: 'segredo',
      forcePathStyle: true,
    });
  });

  it('refuses settings that cannot work, naming them', () => {
    expect(configError({ STORAGE: 'ftp' })).toContain('STORAGE must be disk or s3');
    expect(configError({ STORAGE: 's3' })).toContain('S3_BUCKET');
    expect(configError({ STORAGE: 's3', S3_BUCKET: 'b', S3_ENDPOINT: 'minio:9000' })).toContain('S3_ENDPOINT');
    expect(configError({ STORAGE: 's3', S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'id' })).toContain('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY');
    expect(configError({ STORAGE: 's3', S3_BUCKET: 'b', S3_FORCE_PATH_STYLE: 'talvez' })).toContain('S3_FORCE_PATH_STYLE');
  });
});
