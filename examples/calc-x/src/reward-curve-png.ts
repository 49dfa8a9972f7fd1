import { deflateSync } from 'node:zlib';

/** A series to plot: points (x, y) with y in [0, 1], drawn in `color` (RGB). */
export interface CurveSeries {
  points: Array<[number, number]>;
  color: [number, number, number];
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** Renders reward curves (y in [0, 1]) as an RGB PNG, pure JS: grid lines at 0.25 steps, one polyline per series. */
export function rewardCurvePng(options: { series: CurveSeries[]; width?: number; height?: number }): Buffer {
  const w = options.width ?? 480;
  const h = options.height ?? 240;
  const pad = 20;
  const px = Buffer.alloc(w * h * 3, 255);
  const set = (x: number, y: number, [r, g, b]: [number, number, number]): void => {
    if (x < 0 || y < 0 || x >= w || y >= h) return;
    const i = (Math.round(y) * w + Math.round(x)) * 3;
    px[i] = r;
    px[i + 1] = g;
    px[i + 2] = b;
  };
  for (let q = 0; q <= 4; q += 1) {
    const y = h - pad - (q / 4) * (h - 2 * pad);
    for (let x = pad; x < w - pad; x += q === 0 ? 1 : 3) set(x, y, [180, 180, 180]);
  }
  for (let y = pad; y <= h - pad; y += 1) set(pad, y, [120, 120, 120]);
  const xs = options.series.flatMap((s) => s.points.map((p) => p[0]));
  const xMin = Math.min(...xs, 0);
  const xMax = Math.max(...xs, xMin + 1);
  const toPx = ([x, y]: [number, number]): [number, number] => [
    pad + ((x - xMin) / (xMax - xMin)) * (w - 2 * pad),
    h - pad - Math.min(Math.max(y, 0), 1) * (h - 2 * pad),
  ];
  for (const s of options.series) {
    const pts = s.points.map(toPx);
    for (let i = 0; i < pts.length; i += 1) {
      const [x0, y0] = pts[i]!;
      for (let dx = -2; dx <= 2; dx += 1) for (let dy = -2; dy <= 2; dy += 1) set(x0 + dx, y0 + dy, s.color);
      const next = pts[i + 1];
      if (!next) continue;
      const steps = Math.ceil(Math.max(Math.abs(next[0] - x0), Math.abs(next[1] - y0))) + 1;
      for (let t = 0; t <= steps; t += 1) {
        const x = x0 + ((next[0] - x0) * t) / steps;
        const y = y0 + ((next[1] - y0) * t) / steps;
        set(x, y, s.color);
        set(x, y + 1, s.color);
      }
    }
  }
  const raw = Buffer.alloc((w * 3 + 1) * h);
  for (let y = 0; y < h; y += 1) px.copy(raw, y * (w * 3 + 1) + 1, y * w * 3, (y + 1) * w * 3);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([sig, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}
