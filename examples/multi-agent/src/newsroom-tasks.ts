/** One headline task: a news item and the keyword the headline must mention. */
export interface HeadlineTask {
  id: string;
  item: string;
  keyword: string;
}

/** The shipped tasks. */
export const HEADLINE_TASKS: readonly HeadlineTask[] = [
  {
    id: 'h1',
    keyword: 'ferry',
    item: 'The island council approved a second daily ferry between Oskel and Ilsa after a year of overcrowded crossings. Service starts in May.',
  },
  {
    id: 'h2',
    keyword: 'observatory',
    item: 'Astronomers at the mountain observatory recorded the brightest meteor shower in a decade on Tuesday night. Clear skies helped.',
  },
  {
    id: 'h3',
    keyword: 'festival',
    item: 'Organisers of the August folk festival in Brennholm sold out all four days within an hour of opening ticket sales.',
  },
  {
    id: 'h4',
    keyword: 'lighthouse',
    item: 'Volunteers finished restoring the 1871 lighthouse on Skarn, which will shine again for the first time since 1990.',
  },
  {
    id: 'h5',
    keyword: 'harbour',
    item: 'Fishing crews in Port Tarsk welcomed the new harbour wall that protects boats from winter storms from the north.',
  },
  {
    id: 'h6',
    keyword: 'university',
    item: 'Velmora University opened a kelp research station funded by the central bank, with twelve new jobs for marine biologists.',
  },
];

/** At most this many words in a headline. */
export const MAX_WORDS = 8;

/** Whether a headline meets the task's constraints. */
export function meetsConstraints(headline: string, task: HeadlineTask): boolean {
  const words = headline.trim().split(/\s+/u).filter(Boolean);
  return words.length > 0 && words.length <= MAX_WORDS && headline.toLowerCase().includes(task.keyword);
}

/** Reward: 1 for a headline that meets the constraints at once, 0.5 when it needed the reviewer's revision, else 0. */
export function headlineReward(headline: string, task: HeadlineTask, revised: boolean): number {
  if (!meetsConstraints(headline, task)) return 0;
  return revised ? 0.5 : 1;
}
