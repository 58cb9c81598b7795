package dev.lease.samples.billing.demo;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.lease.samples.billing.BillingEvent;
import dev.lease.samples.billing.BillingEvent.Kind;

/**
 * Draws a {@link Timeline} as one self-contained HTML page with an SVG picture: a lane per instance, a bar for each
 * lease held (from grant to its end), a hatched band while the instance was cut off, numbered markers for the
 * events, and the numbered list below.
 */
final class TimelinePicture {

    private static final int LEFT = 70;
    private static final int WIDTH = 900;
    private static final int LANE = 70;
    private static final int TOP = 30;

    private TimelinePicture() {
    }

    static Path write(Timeline timeline, String title, List<String> summary, Path file) throws IOException {
        List<Timeline.Entry> entries = timeline.entries();
        Map<String, Integer> lanes = new LinkedHashMap<>();
        entries.stream().map(e -> e.event().instance()).sorted().forEach(i -> lanes.putIfAbsent(i, lanes.size()));
        double end = entries.isEmpty() ? 1 : seconds(entries.get(entries.size() - 1).at()) * 1.05 + 0.5;
        double scale = WIDTH / end;
        int height = TOP + lanes.size() * LANE + 40;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
                + "font-family='sans-serif' font-size='12'>%n", LEFT + WIDTH + 20, height));
        svg.append("<defs><pattern id='hatch' width='6' height='6' patternUnits='userSpaceOnUse' "
                + "patternTransform='rotate(45)'><rect width='3' height='6' fill='#bbb'/></pattern></defs>\n");
        lanes.forEach((instance, lane) -> {
            int y = laneY(lane);
            svg.append(String.format(Locale.ROOT, "<text x='10' y='%d' font-weight='bold'>%s</text>"
                    + "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#999'/>%n", y + 4, esc(instance), LEFT, y,
                    LEFT + WIDTH, y));
        });
        for (Timeline.Outage outage : timeline.outages()) {
            Integer lane = lanes.get(outage.instance());
            if (lane == null) {
                continue;
            }
            double x1 = LEFT + seconds(outage.from()) * scale;
            double x2 = LEFT + seconds(outage.to()) * scale;
            svg.append(String.format(Locale.ROOT, "<rect x='%.1f' y='%d' width='%.1f' height='%d' fill='url(#hatch)'>"
                    + "<title>%s</title></rect><text x='%.1f' y='%d' fill='#555'>%s</text>%n", x1, laneY(lane) - 28,
                    Math.max(1, x2 - x1), 56, esc(outage.label()), x1 + 3, laneY(lane) + 27, esc(outage.label())));
        }
        for (Hold hold : holds(entries)) {
            double x1 = LEFT + seconds(hold.from()) * scale;
            double x2 = LEFT + seconds(hold.to()) * scale;
            int y = laneY(lanes.get(hold.instance())) - 8;
            svg.append(String.format(Locale.ROOT, "<rect x='%.1f' y='%d' width='%.1f' height='16' rx='3' "
                    + "fill='#cfe3ff' stroke='#4a7fc1'/><text x='%.1f' y='%d' fill='#1d3f6e'>token %d</text>%n", x1, y,
                    Math.max(2, x2 - x1), x1 + 3, y - 4, hold.token()));
        }
        int n = 1;
        for (Timeline.Entry entry : entries) {
            double x = LEFT + seconds(entry.at()) * scale;
            int y = laneY(lanes.get(entry.event().instance()));
            svg.append(String.format(Locale.ROOT, "<circle cx='%.1f' cy='%d' r='8' fill='%s'><title>%s</title></circle>"
                    + "<text x='%.1f' y='%d' text-anchor='middle' font-size='9' fill='white'>%d</text>%n", x, y,
                    color(entry.event().kind()), esc(entry.line().strip()), x, y + 3, n++));
        }
        for (int s = 0; s <= (int) end; s += Math.max(1, (int) end / 10)) {
            double x = LEFT + s * scale;
            svg.append(String.format(Locale.ROOT, "<text x='%.1f' y='%d' fill='#777' text-anchor='middle'>%ds</text>%n",
                    x, height - 10, s));
        }
        svg.append("</svg>\n");

        StringBuilder html = new StringBuilder("<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>")
                .append(esc(title)).append("</title><style>body{font-family:sans-serif;margin:2em}"
                        + "li{margin:.2em 0}.ACCEPTED{color:#1a7f37}.REJECTED{color:#c0392b}.LOST{color:#d35400}"
                        + "</style></head><body>\n<h1>").append(esc(title)).append("</h1>\n").append(svg).append("<ol>\n");
        for (Timeline.Entry entry : entries) {
            BillingEvent e = entry.event();
            html.append(String.format(Locale.ROOT, "<li class='%s'><b>%.2fs %s</b> %s</li>%n", e.kind(),
                    seconds(entry.at()), esc(e.instance()), esc(e.text())));
        }
        html.append("</ol>\n<h2>Outcome</h2>\n<ul>\n");
        summary.forEach(line -> html.append("<li>").append(esc(line)).append("</li>\n"));
        html.append("</ul>\n</body></html>\n");
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.writeString(file, html, StandardCharsets.UTF_8);
        return file;
    }

    private record Hold(String instance, long token, Duration from, Duration to) {
    }

    /** From each grant to the next event that ends it (loss, write, refusal, nothing to do) on the same lane. */
    private static List<Hold> holds(List<Timeline.Entry> entries) {
        List<Hold> holds = new ArrayList<>();
        for (int i = 0; i < entries.size(); i++) {
            BillingEvent grant = entries.get(i).event();
            if (grant.kind() != Kind.HOLDS) {
                continue;
            }
            Duration to = entries.get(entries.size() - 1).at();
            for (int j = i + 1; j < entries.size(); j++) {
                BillingEvent e = entries.get(j).event();
                if (e.instance().equals(grant.instance()) && e.invoiceId() == grant.invoiceId() && switch (e.kind()) {
                    case LOST, ACCEPTED, REJECTED, SKIPPED -> true;
                    default -> false;
                }) {
                    to = entries.get(j).at();
                    break;
                }
            }
            holds.add(new Hold(grant.instance(), grant.token(), entries.get(i).at(), to));
        }
        return holds;
    }

    private static int laneY(int lane) {
        return TOP + 20 + lane * LANE;
    }

    private static double seconds(Duration d) {
        return d.toNanos() / 1e9;
    }

    private static String color(Kind kind) {
        return switch (kind) {
            case ACCEPTED -> "#1a7f37";
            case REJECTED -> "#c0392b";
            case LOST -> "#d35400";
            case FAULT -> "#555";
            case HOLDS -> "#4a7fc1";
            default -> "#888";
        };
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&#39;");
    }
}
