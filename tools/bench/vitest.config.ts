import { aglVitestProject } from '../vitest-preset';

export default aglVitestProject('bench');
