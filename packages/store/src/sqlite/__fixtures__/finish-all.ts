// Child process: marks the latest attempt of every given rollout succeeded.
import { SqliteStore } from '../index';

const path = process.argv[2]!;
const store = new SqliteStore({ path });
for (const id of process.argv.slice(3)) await store.updateAttempt(id, 'latest', { status: 'succeeded' });
await store.close();
