/**
 * Worker tokens on the Workers page, in a real browser against the real API and
 * PostgreSQL: a token created with "Add a worker" is rotated from its row (the new
 * secret is shown once as the start command) and then revoked after a confirmation;
 * after each step a real workerHello with each secret proves which one the API accepts.
 * A token revoked elsewhere shows the API's NotFoundError instead of failing silently.
 */
import { describe, expect, it } from 'vitest';
import { screenshot, startDashboard } from './helpers/dashboard.js';

const d = await startDashboard();
const WAIT = { timeout: 15_000 };
const user = await d.signUp();
const COMMAND = /^CHATGPU_WORKER_TOKEN=(cgw_\S+) npx chatgpu-worker --server (\S+)$/;

/** What the API answers a worker that says hello with `token`: WorkerHelloResult, or the error's code. */
async function helloWith(token: string, name: string) {
  const r = await d.gql(
    `mutation($name: String!) { workerHello(input: { name: $name, version: "0.1.0", slots: 1, capabilities: {} }) { __typename } }`,
    { name },
    token,
  );
  return r.data?.workerHello?.__typename ?? r.errors?.[0]?.extensions?.code;
}

function tokenOf(command: string | null) {
  const m = COMMAND.exec(command ?? '');
  expect(m, command ?? '(no command)').not.toBeNull();
  return m![1]!;
}

describe('worker tokens on the Workers page', () => {
  it('rotates a token (old secret refused, new one accepted) and revokes it after a confirmation (new secret refused)', async () => {
    const page = await d.page(user.token);
    await page.goto(`${d.url}/workers`);
    await page.getByText('No worker tokens yet.').waitFor(WAIT);
    await page.getByLabel('Machine name').fill('spare-box');
    await page.getByRole('button', { name: 'Create worker token' }).click();
    const first = tokenOf(await page.locator('[data-testid=worker-command] code').textContent(WAIT));
    expect(await helloWith(first, 'spare-box')).toBe('WorkerHelloResult');
    const row = page.locator('tr[data-token="spare-box"]');
    await row.waitFor(WAIT);
    expect(await row.locator('code').textContent()).toBe(`${first.slice(0, 10)}…`);

    await row.getByRole('button', { name: 'Rotate' }).click();
    const rotated = page.locator('[data-testid=rotated-command]');
    const second = tokenOf(await rotated.locator('code').textContent(WAIT));
    expect(second).not.toBe(first);
    expect(await page.getByTestId('rotated-notice').textContent()).toMatch(
      /New secret for spare-box\..*old one stopped working just now.*must be restarted with this command/,
    );
    // The row shows the new secret's prefix (the mutation's answer updates it).
    await row
      .locator('code')
      .getByText(`${second.slice(0, 10)}…`)
      .waitFor(WAIT);
    await screenshot(page, 'worker-tokens');
    expect(await helloWith(first, 'spare-box')).toBe('UNAUTHENTICATED');
    expect(await helloWith(second, 'spare-box')).toBe('WorkerHelloResult');

    // Revoke asks first; cancelling changes nothing.
    await row.getByRole('button', { name: 'Revoke' }).click();
    const confirm = row.getByRole('group', { name: 'Revoke spare-box?' });
    expect(await confirm.textContent()).toContain('Workers using it stop at their next call.');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached', ...WAIT });
    expect(await helloWith(second, 'spare-box')).toBe('WorkerHelloResult');

    await row.getByRole('button', { name: 'Revoke' }).click();
    await confirm.getByRole('button', { name: 'Yes, revoke' }).click();
    await page.getByText('No worker tokens yet.').waitFor(WAIT);
    // The one-time command of a revoked token is no longer offered.
    expect(await rotated.count()).toBe(0);
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await helloWith(second, 'spare-box')).toBe('UNAUTHENTICATED');
    await page.close();
  });

  it('shows the API’s NotFoundError for a token revoked elsewhere, and drops it from the list', async () => {
    const created = await d.gql(
      `mutation { createWorkerToken(input: { name: "stale-box" }) { __typename ... on CreatedWorkerToken { workerToken { id } } } }`,
      {},
      user.token,
    );
    const id = created.data.createWorkerToken.workerToken.id as string;
    const page = await d.page(user.token);
    await page.goto(`${d.url}/workers`);
    const row = page.locator('tr[data-token="stale-box"]');
    await row.waitFor(WAIT);
    const revoked = await d.gql(`mutation($id: ID!) { revokeWorkerToken(id: $id) { __typename } }`, { id }, user.token);
    expect(revoked.data.revokeWorkerToken.__typename).toBe('MutationRevokeWorkerTokenSuccess');

    await row.getByRole('button', { name: 'Rotate' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /^WorkerToken not found/ })
      .waitFor(WAIT);
    await row.waitFor({ state: 'detached', ...WAIT });
    expect(await page.locator('[data-testid=rotated-command]').count()).toBe(0);
    await page.close();
  });
});
