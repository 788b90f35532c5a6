// The explorers in a real browser (Debian's headless Chromium driven by playwright-core) against the
// real server: GraphiQL and the REST reference load with no request leaving the server, explain a 401,
// and run a board query / GET /backend/pipelines with a key; GraphiQL fetches the schema once a key is
// pasted. Skipped, with the reason, where
// /usr/bin/chromium is missing (`apt-get install -y chromium`; .ci/run installs it).
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { domains } from '../../src/domains/index.js';
import { startServer, type StartedServer } from '../helpers/server.js';

const CHROMIUM = '/usr/bin/chromium';
const available = fs.existsSync(CHROMIUM);
const SKIP_REASON = `skipped: ${CHROMIUM} not found (apt-get install -y chromium)`;
if (!available) console.warn(`[explorers] browser tests ${SKIP_REASON}`);
// CI installs Chromium (.ci/run): there a missing browser fails these tests instead of skipping them.
const runBrowser = available || process.env.CI === 'true';
const browserIt = (name: string, fn: () => Promise<void>, timeout?: number) =>
  runBrowser ? it(name, fn, timeout) : it.skip(`${name} — ${SKIP_REASON}`, fn);

let server: StartedServer;
let browser: Browser;

beforeAll(async () => {
  if (!available) return;
  server = await startServer();
  const call = async (method: string, path: string, body: unknown) => {
    const r = await fetch(server.url + path, {
      method,
      headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
    return r.json();
  };
  const pipeline = await call('POST', '/backend/pipelines', { name: 'Funil de Vendas', new_group_name: 'Comercial' });
  await call('POST', '/backend/pipeline/deals', {
    pipeline_id: pipeline.id,
    stage_id: pipeline.stages[1].id,
    new_lead: { name: 'Ana Souza', phone: '+5511987650001' },
    value: 1500,
  });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** A page whose every request is recorded; one to another address is aborted and listed in `outside`. */
async function guardedPage(): Promise<{ page: Page; context: BrowserContext; outside: string[] }> {
  const context = await browser.newContext();
  const outside: string[] = [];
  const origin = new URL(server.url).origin;
  const isOutside = (url: string) => /^(https?|wss?):/.test(url) && new URL(url).origin !== origin;
  const note = (url: string) => void (outside.includes(url) || outside.push(url));
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (isOutside(url)) {
      note(url);
      return route.abort();
    }
    return route.continue();
  });
  context.on('request', (request) => isOutside(request.url()) && note(request.url()));
  return { page: await context.newPage(), context, outside };
}

/** Replaces the text of a GraphiQL (Monaco) editor the way a person pastes into it. */
async function typeInto(page: Page, section: string, text: string) {
  await page.locator(`${section} .monaco-editor .view-lines`).locator('visible=true').first().click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

describe('explorers in a browser', () => {
  browserIt('the outside-request guard catches a page that loads from elsewhere', async () => {
    const { page, context, outside } = await guardedPage();
    await page.goto(`${server.url}/health`);
    await page.evaluate(() => fetch('https://cdn.example.invalid/graphiql.js').catch(() => null));
    expect(outside).toEqual(['https://cdn.example.invalid/graphiql.js']);
    await context.close();
  });

  browserIt(
    'GraphiQL loads with no outside request, explains the 401, and runs a board query with a key',
    async () => {
      const { page, context, outside } = await guardedPage();
      await page.goto(`${server.url}/graphql`);
      // Opened without a key: the schema request is refused and GraphiQL shows why.
      const result = page.locator('section.result-window');
      await result.getByText('Authorization: Bearer <chave de API>').waitFor({ timeout: 60_000 });
      // Monaco renders spaces as non-breaking ones.
      expect((await page.locator('section.graphiql-editor-tool').innerText()).replace(/\u00a0/g, ' ')).toContain('"Authorization": ""');

      await typeInto(page, 'section.graphiql-editor-tool', JSON.stringify({ Authorization: `Bearer ${server.key}` }));
      await typeInto(
        page,
        'section.graphiql-query-editor',
        'query Board { pipelines { pipelines { name stages { name deals(first: 10) { totalCount nodes { lead_name total } } } } } }',
      );
      const answered = page.waitForResponse(
        (r) => r.url() === `${server.url}/graphql` && (r.request().postData() ?? '').includes('query Board'),
      );
      await page.locator('button.graphiql-execute-button').click();
      const response = await answered;
      expect(response.status()).toBe(200);
      // The result pane shows the data (it renders only the lines in view: check a few).
      await result.getByText('"Funil de Vendas"').waitFor({ timeout: 30_000 });
      expect(await result.innerText()).toContain('"totalCount"');
      const { data } = await response.json();
      expect(data.pipelines.pipelines[0]).toMatchObject({
        name: 'Funil de Vendas',
        stages: [
          { name: 'Entrada', deals: { totalCount: 0, nodes: [] } },
          { name: 'Em andamento', deals: { totalCount: 1, nodes: [{ lead_name: 'Ana Souza', total: 1500 }] } },
          { name: 'Ganho', deals: { totalCount: 0 } },
          { name: 'Perdido', deals: { totalCount: 0 } },
        ],
      });
      expect(outside).toEqual([]);
      await context.close();
    },
    120_000,
  );

  browserIt(
    'GraphiQL: once a key is pasted into the headers, the docs pane shows the schema with no further click',
    async () => {
      const { page, context, outside } = await guardedPage();
      // The schema requests GraphiQL makes, in order, with their status.
      const introspections: { authorization: string | undefined; status: number }[] = [];
      page.on('response', (r) => {
        if (r.url() === `${server.url}/graphql` && (r.request().postData() ?? '').includes('__schema')) {
          introspections.push({ authorization: r.request().headers().authorization, status: r.status() });
        }
      });
      await page.goto(`${server.url}/graphql`);
      const docs = page.locator('section.graphiql-doc-explorer');
      await page.locator('.graphiql-sidebar button[aria-label="Show Documentation Explorer"]').click();
      // Opened without a key: the schema requests (GraphiQL tries a second form) are refused.
      await docs.getByText('Error fetching schema').waitFor({ timeout: 60_000 });
      const before = introspections.length;
      expect(before).toBeGreaterThan(0);
      expect(introspections.every((i) => i.status === 401 && !i.authorization)).toBe(true);

      await typeInto(page, 'section.graphiql-editor-tool', JSON.stringify({ Authorization: `Bearer ${server.key}` }));
      // Nothing else is clicked or pressed: the paste alone fetches the schema again.
      await docs.getByText('Root Types').waitFor({ timeout: 30_000 });
      await docs.getByText('Query', { exact: true }).first().waitFor();
      expect(await docs.getByText('Error fetching schema').count()).toBe(0);
      // One request, with the key.
      expect(introspections.slice(before)).toEqual([{ authorization: `Bearer ${server.key}`, status: 200 }]);
      expect(outside).toEqual([]);
      await context.close();
    },
    120_000,
  );

  browserIt(
    'the REST reference loads with no outside request, lists operations by tag and runs GET /backend/pipelines with the key',
    async () => {
      const { page, context, outside } = await guardedPage();
      await page.goto(`${server.url}/backend/docs`);
      await page.locator('.opblock-tag').first().waitFor({ timeout: 60_000 });
      // One tag per domain, in the order of the list of domains, with the domain's description.
      expect(await page.locator('.opblock-tag').evaluateAll((tags) => tags.map((t) => t.getAttribute('data-tag')))).toEqual(
        domains.map((d) => d.name),
      );
      expect((await page.locator('.opblock-tag').allInnerTexts()).map((text) => text.split('\n').filter(Boolean).slice(0, 2))).toEqual(
        domains.map((d) => [d.name, d.description?.replaceAll('`', '')]), // Markdown: code spans lose their backticks
      );
      expect(
        await page
          .locator('.opblock-tag-section')
          .filter({ has: page.locator('#operations-tag-deals') })
          .locator('.opblock')
          .count(),
      ).toBeGreaterThan(10);

      await page.locator('button.authorize').first().click();
      const apiKey = page.locator('.modal-ux .auth-container').filter({ hasText: 'apiKey' });
      await apiKey.locator('input').fill(server.key);
      await apiKey.locator('button.authorize').click();
      await page.locator('.modal-ux button.close-modal').click();

      const operation = page.locator('#operations-pipelines-pipelines');
      await operation.locator('.opblock-summary').click();
      await operation.getByRole('button', { name: 'Try it out' }).click();
      await operation.getByRole('button', { name: 'Execute' }).click();
      const status = operation.locator('.live-responses-table tbody .response-col_status').first();
      await status.waitFor({ timeout: 30_000 });
      expect((await status.innerText()).trim()).toBe('200');
      const body = await operation.locator('.live-responses-table tbody .response-col_description .microlight').first().innerText();
      expect(JSON.parse(body)).toMatchObject({ groups: [{ name: 'Comercial' }], pipelines: [{ name: 'Funil de Vendas' }] });
      expect(outside).toEqual([]);
      await context.close();
    },
    120_000,
  );
});
