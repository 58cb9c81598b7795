package dev.lease.fence.http.operations;

import java.util.List;
import java.util.Locale;

/**
 * Draws scraped samples as an SVG of stacked panels, one per series, with instance A and B as two lines and the
 * scenario's events as dashed verticals: the picture of docs/operations.md comes from a real run, not a drawing.
 */
final class FailoverChart {

    private static final int WIDTH = 760;
    private static final int PANEL = 120;
    private static final int LEFT = 150;
    private static final int RIGHT = 20;
    private static final int TOP = 40;
    private static final String[] COLOURS = {"#1f77b4", "#d62728"};

    private FailoverChart() {
    }

    /**
     * @param rows each: seconds since start, then per instance (A, B) one value per series
     * @param series the series' titles, in row order
     * @param marks each: seconds since start, what happened
     */
    static String draw(List<double[]> rows, List<String> series, List<String[]> marks) {
        double end = rows.isEmpty() ? 1 : Math.max(1, rows.get(rows.size() - 1)[0]);
        int height = TOP + series.size() * (PANEL + 30) + 40;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "font-family=\"sans-serif\" font-size=\"12\">%n", WIDTH, height));
        svg.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        svg.append("<text x=\"10\" y=\"20\" font-size=\"14\">Two instances, scraped every 250 ms: A's link to "
                + "ZooKeeper freezes</text>\n");
        legend(svg);
        for (int s = 0; s < series.size(); s++) {
            int top = TOP + s * (PANEL + 30);
            double max = 1;
            for (double[] row : rows) {
                max = Math.max(max, Math.max(row[1 + s], row[1 + series.size() + s]));
            }
            svg.append(String.format(Locale.ROOT, "<text x=\"10\" y=\"%d\">%s</text>%n", top + PANEL / 2,
                    series.get(s)));
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>%n", LEFT - 6,
                    top + 10, format(max)));
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>%n", LEFT - 6,
                    top + PANEL));
            svg.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                    + "stroke=\"#bbb\"/>%n", LEFT, top, WIDTH - LEFT - RIGHT, PANEL));
            for (int instance = 0; instance < 2; instance++) {
                StringBuilder points = new StringBuilder();
                for (double[] row : rows) {
                    double value = row[1 + instance * series.size() + s];
                    points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x(row[0], end),
                            top + PANEL - value / max * (PANEL - 4)));
                }
                svg.append(String.format(Locale.ROOT, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
                        + "points=\"%s\"/>%n", COLOURS[instance], points.toString().strip()));
            }
        }
        int bottom = TOP + series.size() * (PANEL + 30) - 30;
        for (int i = 0; i < marks.size(); i++) {
            double at = x(Double.parseDouble(marks.get(i)[0]), end);
            svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#555\" "
                    + "stroke-dasharray=\"4 3\"/>%n", at, TOP, at, bottom));
            svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\">%s</text>%n", at + 3,
                    bottom + 14 + 13 * i, marks.get(i)[1]));
        }
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s s</text>%n",
                WIDTH - RIGHT, height - 5, format(end)));
        return svg.append("</svg>\n").toString();
    }

    private static void legend(StringBuilder svg) {
        String[] names = {"instance A", "instance B"};
        for (int i = 0; i < 2; i++) {
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"30\" x2=\"%d\" y2=\"30\" stroke=\"%s\" "
                    + "stroke-width=\"2\"/><text x=\"%d\" y=\"34\">%s</text>%n", 470 + i * 140, 495 + i * 140,
                    COLOURS[i], 500 + i * 140, names[i]));
        }
    }

    private static double x(double seconds, double end) {
        return LEFT + seconds / end * (WIDTH - LEFT - RIGHT);
    }

    private static String format(double value) {
        return value == Math.rint(value) ? String.valueOf((long) value) : String.format(Locale.ROOT, "%.1f", value);
    }
}
