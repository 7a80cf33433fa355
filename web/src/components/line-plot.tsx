/** One series of a plot. */
export interface Series {
  name: string;
  /** A CSS colour (a variable such as `var(--accent)`). */
  color: string;
  points: readonly { x: number; y: number }[];
  /** Draw steps (a running total) instead of straight segments. */
  step?: boolean;
}

/** Options of `LinePlot`. */
export interface LinePlotProps {
  series: readonly Series[];
  /** The accessible name of the plot. */
  label: string;
  /** How an x or y value reads on an axis. */
  formatX?: (value: number) => string;
  formatY?: (value: number) => string;
  /** Horizontal lines (a threshold), with a name. */
  rules?: readonly { y: number; name: string; color: string }[];
  /** x positions to mark with a tick (scene cuts). */
  marks?: readonly number[];
  height?: number;
}

const WIDTH = 1000;
const PAD = { left: 56, right: 12, top: 10, bottom: 24 };

/**
 * A small SVG line plot: a shared x axis (time), y from 0 to the largest value (or rule), the
 * extremes labelled, a legend below. Scales with its container; empty series draw an empty frame
 * that says so.
 */
export function LinePlot(props: LinePlotProps) {
  const { series, label, rules = [], marks = [], height = 220 } = props;
  const formatX = props.formatX ?? String;
  const formatY = props.formatY ?? ((value: number) => value.toLocaleString("en-US"));
  const all = series.flatMap((one) => one.points);
  const xs = all.map((point) => point.x);
  const minX = Math.min(...xs);
  const maxX = Math.max(...xs);
  const maxY = Math.max(0, ...all.map((point) => point.y), ...rules.map((rule) => rule.y)) || 1;
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = height - PAD.top - PAD.bottom;
  const x = (value: number) =>
    PAD.left + (maxX === minX ? plotW / 2 : ((value - minX) / (maxX - minX)) * plotW);
  const y = (value: number) => PAD.top + plotH - (value / maxY) * plotH;
  const path = (one: Series) =>
    one.points
      .map((point, index) => {
        const at = `${x(point.x).toFixed(1)},${y(point.y).toFixed(1)}`;
        if (index === 0) return `M${at}`;
        return one.step ? `H${x(point.x).toFixed(1)}V${y(point.y).toFixed(1)}` : `L${at}`;
      })
      .join("");
  return (
    <figure className="plot">
      <svg viewBox={`0 0 ${WIDTH} ${height}`} role="img" aria-label={label}>
        <title>{label}</title>
        <line className="axis" x1={PAD.left} x2={PAD.left} y1={PAD.top} y2={PAD.top + plotH} />
        <line
          className="axis"
          x1={PAD.left}
          x2={WIDTH - PAD.right}
          y1={PAD.top + plotH}
          y2={PAD.top + plotH}
        />
        <text className="tick" x={PAD.left - 6} y={PAD.top + 8} textAnchor="end">
          {formatY(maxY)}
        </text>
        <text className="tick" x={PAD.left - 6} y={PAD.top + plotH} textAnchor="end">
          0
        </text>
        {all.length === 0 ? (
          <text
            className="tick"
            x={PAD.left + plotW / 2}
            y={PAD.top + plotH / 2}
            textAnchor="middle"
          >
            no data yet
          </text>
        ) : (
          <>
            <text className="tick" x={PAD.left} y={height - 6}>
              {formatX(minX)}
            </text>
            <text className="tick" x={WIDTH - PAD.right} y={height - 6} textAnchor="end">
              {formatX(maxX)}
            </text>
          </>
        )}
        {rules.map((rule) => (
          <line
            key={rule.name}
            x1={PAD.left}
            x2={WIDTH - PAD.right}
            y1={y(rule.y)}
            y2={y(rule.y)}
            stroke={rule.color}
            strokeDasharray="4 3"
          />
        ))}
        {marks.map((mark) => (
          <line
            key={mark}
            className="mark"
            x1={x(mark)}
            x2={x(mark)}
            y1={PAD.top}
            y2={PAD.top + plotH}
          />
        ))}
        {series.map((one) =>
          one.points.length === 1 ? (
            <circle
              key={one.name}
              cx={x(one.points[0]!.x)}
              cy={y(one.points[0]!.y)}
              r={3}
              fill={one.color}
            />
          ) : (
            <path key={one.name} d={path(one)} fill="none" stroke={one.color} strokeWidth={1.5} />
          ),
        )}
      </svg>
      <figcaption className="legend">
        {series.map((one) => (
          <span key={one.name}>
            <i style={{ background: one.color }} /> {one.name}
          </span>
        ))}
        {rules.map((rule) => (
          <span key={rule.name}>
            <i className="dashed" style={{ borderColor: rule.color }} /> {rule.name}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
