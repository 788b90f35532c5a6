// One version for the package, the API document and the changelog (semver), without a database.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (file: string) => fs.readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

describe('versions', () => {
  it('the OpenAPI document carries the package version, which is semver and has its CHANGELOG entry', () => {
    const { version } = JSON.parse(read('package.json')) as { version: string };
    expect(version).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
    expect((JSON.parse(read('openapi.json')) as { info: { version: string } }).info.version).toBe(version);
    const changelog = read('CHANGELOG.md');
    expect(changelog).toContain('## [Unreleased]');
    expect(changelog).toMatch(new RegExp(`^## \\[${version.replace(/\./g, '\\.')}\\] - \\d{4}-\\d{2}-\\d{2}$`, 'm'));
  });
});
