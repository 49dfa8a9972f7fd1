import { aglVitestProject } from '../../tools/vitest-preset';

export default aglVitestProject('tinker');
