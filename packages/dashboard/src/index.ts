/**
 * `@agl/dashboard`: the AGL dashboard web app (rollouts, traces, rewards, resources, runners). This Node entry tells a
 * server where the built app lives; `agl store serve` serves it at `/`.
 */
export { dashboardAssetsDir, isDashboardBuilt } from './dashboard-assets';
