/**
 * Sends late feedback from its own process, as a support tool or a nightly job would:
 * `node send-feedback-main.ts '[{"rolloutId": "...", "reward": 1, "comment": "..."}]'` with `AGL_STORE_URL` set.
 */
import { feedback } from '@agl/client';

const items = JSON.parse(process.argv[2] ?? '[]') as { rolloutId: string; reward: number; comment?: string }[];
for (const item of items) await feedback(item.rolloutId, item.reward, item.comment ? { comment: item.comment } : {});
console.log(`sent ${items.length} feedback`);
