/**
 * Every top-level `agl` command, one export line each: a factory `(io) => Command`. To add a command, write
 * `commands/<name>-command.ts` exporting such a factory and add one line here.
 */
export { storeCommand } from './store-command';
export { trainCommand } from './train-command';
export { rolloutsCommand } from './rollouts-command';
export { spansCommand } from './spans-command';
export { gatewayCommand } from './gateway-serve';
export { exportCommand } from './export-command';
export { finetuneCommand } from './finetune-command';
export { datasetCommand } from './dataset-command';
export { judgeCommand } from './judge-command';
export { feedbackCommand } from './feedback-command';
export { resourcesCommand } from './resources-command';
export { releaseCommand } from './release-command';
export { tinyCommand } from './tiny-command';
