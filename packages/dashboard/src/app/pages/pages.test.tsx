// @vitest-environment happy-dom
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '@agl/store';
import { createStoreServer, type StoreServer } from '@agl/store/server';
import { fillDemoStore, type DemoStore } from '../../__fixtures__/demo-store';
import { ApiClient } from '../api/api-client';
import { App } from '../app';
import { navigate } from '../lib/router';
import { TOKEN_KEY } from '../lib/token-store';
import { ResourcesPage } from './resources-page';
import { RewardsPage } from './rewards-page';
import { RolloutDetailPage } from './rollout-detail-page';
import { RolloutsPage } from './rollouts-page';
import { RunnersPage } from './runners-page';

const TOKEN = 'component-token';
let store: MemoryStore;
let server: StoreServer;
let demo: DemoStore;
let client: ApiClient;

beforeAll(async () => {
  store = new MemoryStore();
  demo = await fillDemoStore(store);
  server = await createStoreServer({ store, port: 0, token: TOKEN, corsOrigin: '*' });
  client = new ApiClient({ baseUrl: server.url, token: TOKEN });
});
afterAll(async () => {
  await server.close();
  await store.close();
});
afterEach(() => {
  cleanup();
  window.sessionStorage.clear();
});

const rows = () => screen.getAllByTestId('rollout-row');

describe('RolloutsPage against a real store server', () => {
  it("shows the store's total and one row per rollout, newest first", async () => {
    render(<RolloutsPage client={client} pollMs={60_000} />);
    await waitFor(() => expect(screen.getByTestId('rollouts-total').textContent).toBe('6'));
    expect(rows()).toHaveLength(6);
    expect(rows()[0]!.textContent).toContain('queuing');
  });

  it('sorts by reward on the server when the header is clicked', async () => {
    render(<RolloutsPage client={client} pollMs={60_000} />);
    await waitFor(() => expect(rows()).toHaveLength(6));
    fireEvent.click(screen.getByRole('button', { name: /^Reward/ }));
    await waitFor(() =>
      expect(screen.getAllByTestId('rollout-reward').map((c) => c.textContent)).toEqual([
        '1',
        '1',
        '0.3',
        '0',
        '—',
        '—',
      ]),
    );
    fireEvent.click(screen.getByRole('button', { name: /^Reward/ }));
    await waitFor(() => expect(screen.getAllByTestId('rollout-reward')[0]!.textContent).toBe('0'));
  });

  it('filters by mode and status, and shows an empty state when nothing matches', async () => {
    render(<RolloutsPage client={client} pollMs={60_000} />);
    await waitFor(() => expect(rows()).toHaveLength(6));
    fireEvent.change(screen.getByLabelText('Mode filter'), { target: { value: 'val' } });
    await waitFor(() => expect(screen.getByTestId('rollouts-total').textContent).toBe('2'));
    fireEvent.change(screen.getByLabelText('Status filter'), { target: { value: 'failed' } });
    await waitFor(() => expect(screen.getByTestId('empty-state').textContent).toContain('No rollout matches'));
  });

  it('pages on the server', async () => {
    render(<RolloutsPage client={client} pollMs={60_000} />);
    await waitFor(() => expect(rows()).toHaveLength(6));
    fireEvent.change(screen.getByLabelText('Page size'), { target: { value: '25' } });
    const small = await client.rollouts({ limit: 4, offset: 4, sortBy: 'start_time', sortOrder: 'desc' });
    expect(small.items).toHaveLength(2);
    expect(small.total).toBe(6);
  });

  it('updates live: a rollout enqueued while the page is open appears on the next poll', async () => {
    const live = new MemoryStore();
    const s = await createStoreServer({ store: live, port: 0, corsOrigin: '*' });
    try {
      await live.enqueueRollout({ input: 1, mode: 'train' });
      render(<RolloutsPage client={new ApiClient({ baseUrl: s.url })} pollMs={50} />);
      await waitFor(() => expect(screen.getByTestId('rollouts-total').textContent).toBe('1'));
      await live.enqueueRollout({ input: 2, mode: 'train' });
      await waitFor(() => expect(screen.getByTestId('rollouts-total').textContent).toBe('2'));
      expect(rows()).toHaveLength(2);
    } finally {
      cleanup();
      await s.close();
    }
  });

  it('shows the empty state of an empty store', async () => {
    const empty = new MemoryStore();
    const s = await createStoreServer({ store: empty, port: 0, corsOrigin: '*' });
    try {
      render(<RolloutsPage client={new ApiClient({ baseUrl: s.url })} pollMs={60_000} />);
      await waitFor(() => expect(screen.getByTestId('empty-state').textContent).toContain('No rollouts yet'));
    } finally {
      await s.close();
    }
  });

  it('shows the server error when the token is wrong', async () => {
    render(<RolloutsPage client={new ApiClient({ baseUrl: server.url, token: 'wrong' })} pollMs={60_000} />);
    await waitFor(() => expect(screen.getByTestId('error-state').textContent).toContain('Invalid bearer token'));
  });
});

describe('RolloutDetailPage', () => {
  it('shows the reward, the attempts and one waterfall bar per span; a click opens the LLM messages', async () => {
    render(<RolloutDetailPage client={client} rolloutId={demo.richRolloutId} />);
    await waitFor(() => expect(screen.getByTestId('detail-reward').textContent).toBe('1'));
    expect(screen.getAllByTestId('attempt-row')).toHaveLength(1);
    const attemptSpans = Number(screen.getByTestId('attempt-span-count').textContent);
    expect(attemptSpans).toBe(4);
    await waitFor(() => expect(screen.getAllByTestId('waterfall-bar')).toHaveLength(attemptSpans));
    const kinds = screen.getAllByTestId('waterfall-row').map((r) => r.getAttribute('data-kind'));
    expect(kinds).toEqual(['agent', 'llm', 'tool', 'reward']);
    expect(screen.getByTestId('reward-marker').textContent).toContain('1');
    fireEvent.click(screen.getAllByTestId('waterfall-row')[1]!);
    const detail = screen.getByTestId('span-detail');
    expect(
      within(detail)
        .getAllByTestId('prompt-message')
        .map((m) => m.textContent),
    ).toEqual(['systemPick a room.', 'userBook a room for 4 people with a projector.']);
    expect(within(detail).getByTestId('response-message').textContent).toContain('Room B12');
    expect(detail.textContent).toContain('tokens in 21 / out 3');
    expect(screen.queryByTestId('raw-attributes')).toBeNull();
    fireEvent.click(within(detail).getByTestId('toggle-raw'));
    expect(screen.getByTestId('raw-attributes').textContent).toContain('gen_ai.usage.input_tokens');
  });

  it('says so when the rollout does not exist', async () => {
    render(<RolloutDetailPage client={client} rolloutId="ro-nope" />);
    await waitFor(() => expect(screen.getByTestId('empty-state').textContent).toContain('does not exist'));
  });
});

describe('ResourcesPage, RewardsPage, RunnersPage', () => {
  it('lists versions with masked keys and diffs the selected one against the previous', async () => {
    navigate('/resources');
    render(<ResourcesPage client={client} pollMs={60_000} />);
    await waitFor(() => expect(screen.getAllByTestId('version-row')).toHaveLength(2));
    expect(screen.getByTestId('selected-version').textContent).toBe(demo.resourceIds[1]);
    expect(screen.getAllByTestId('diff-add').map((l) => l.textContent)).toContain(
      '+ Pick the smallest room that fits.',
    );
    expect(screen.getAllByTestId('diff-del').map((l) => l.textContent)).toContain('- Pick a room.');
    fireEvent.click(screen.getAllByTestId('version-row')[0]!);
    await waitFor(() => expect(screen.getByTestId('selected-version').textContent).toBe(demo.resourceIds[0]));
    expect(screen.getByTestId('api-key').textContent).toBe('••••0042');
    expect(document.body.textContent).not.toContain('sk-very-secret');
  });

  it('shows mean reward and success rate per mode', async () => {
    render(<RewardsPage client={client} pollMs={60_000} />);
    await waitFor(() => expect(screen.getByTestId('reward-card-val').textContent).toContain('0.65'));
    expect(screen.getByTestId('reward-card-val').textContent).toContain('success 50%');
    expect(screen.getByTestId('reward-card-train').textContent).toContain('0.5');
  });

  it('lists runners with their heartbeat age', async () => {
    const worker = await store.getWorkerById('Worker-0');
    render(<RunnersPage client={client} pollMs={60_000} now={() => worker!.lastHeartbeatTime! + 65} />);
    await waitFor(() => expect(screen.getAllByTestId('runner-row')).toHaveLength(1));
    expect(screen.getByTestId('heartbeat-age').textContent).toBe('1m 05s ago');
  });
});

describe('App: token gate', () => {
  it('asks for the token once, keeps it in sessionStorage, then shows the rollouts', async () => {
    navigate('/rollouts');
    render(<App baseUrl={server.url} />);
    await waitFor(() => expect(screen.getByTestId('token-form')).toBeTruthy());
    fireEvent.change(screen.getByLabelText('Store token'), { target: { value: TOKEN } });
    fireEvent.submit(screen.getByTestId('token-form'));
    await waitFor(() => expect(screen.getByTestId('rollouts-total').textContent).toBe('6'));
    expect(window.sessionStorage.getItem(TOKEN_KEY)).toBe(TOKEN);
    cleanup();
    render(<App baseUrl={server.url} />);
    await waitFor(() => expect(screen.getByTestId('rollouts-total').textContent).toBe('6'));
    expect(screen.queryByTestId('token-form')).toBeNull();
  });
});
