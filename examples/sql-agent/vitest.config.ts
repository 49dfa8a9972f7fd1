import { aglVitestProject } from '../../tools/vitest-preset';

export default aglVitestProject('sql-agent');
