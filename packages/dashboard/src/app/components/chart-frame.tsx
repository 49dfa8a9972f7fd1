import type { ReactElement } from 'react';
import { CartesianGrid, Legend, Tooltip, XAxis, type XAxisProps, YAxis, type YAxisProps } from 'recharts';

/**
 * The grid, axes, tooltip and legend every dashboard chart draws, as children for a recharts chart
 * (`<BarChart ...>{chartFrame({ dataKey: 'name' })}<Bar .../></BarChart>`).
 */
export function chartFrame(x: XAxisProps, y: YAxisProps = {}): ReactElement[] {
  return [
    <CartesianGrid key="grid" strokeDasharray="3 3" />,
    <XAxis key="x" {...x} />,
    <YAxis key="y" {...y} />,
    <Tooltip key="tooltip" />,
    <Legend key="legend" />,
  ];
}
