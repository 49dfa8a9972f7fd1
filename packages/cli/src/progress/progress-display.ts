import { Listr } from 'listr2';
import { formatProgress, type ProgressSnapshot } from '@agl/trainer';

export { formatProgress };

/** Where progress goes. */
export interface ProgressDisplay {
  update(snapshot: ProgressSnapshot): void;
  finish(snapshot: ProgressSnapshot | null): Promise<void>;
}

/**
 * A live display for a training run: a listr2 task whose title updates in place on a TTY; plain lines (at most one
 * every `plainIntervalSeconds`, and only on change) when stdout is not a TTY or `CI` is set.
 */
export function createProgressDisplay(
  options: { title?: string; stream?: NodeJS.WriteStream; plainIntervalSeconds?: number; forcePlain?: boolean } = {},
): ProgressDisplay {
  const stream = options.stream ?? process.stdout;
  const plain = options.forcePlain || !stream.isTTY || Boolean(process.env.CI);
  const title = options.title ?? 'training';
  if (plain) {
    let lastLine = '';
    let lastAt = 0;
    const interval = (options.plainIntervalSeconds ?? 5) * 1000;
    return {
      update(snapshot) {
        const line = formatProgress(snapshot);
        const now = Date.now();
        if (line === lastLine || now - lastAt < interval) return;
        lastLine = line;
        lastAt = now;
        stream.write(`[${title}] ${line}\n`);
      },
      async finish(snapshot) {
        if (snapshot) stream.write(`[${title}] ${formatProgress(snapshot)}\n`);
      },
    };
  }
  let latest = 'starting';
  let apply: (text: string) => void = () => undefined;
  const setTitle = (text: string): void => {
    latest = text;
    apply(text);
  };
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const list = new Listr(
    [
      {
        title: `${title}: ${latest}`,
        task: async (_ctx, task): Promise<void> => {
          apply = (text) => {
            task.title = `${title}: ${text}`;
          };
          apply(latest);
          await done;
        },
      },
    ],
    { rendererOptions: { lazy: false }, exitOnError: false },
  );
  const running = list.run();
  return {
    update(snapshot) {
      setTitle(formatProgress(snapshot));
    },
    async finish(snapshot) {
      if (snapshot) setTitle(formatProgress(snapshot));
      resolveDone();
      await running;
    },
  };
}
